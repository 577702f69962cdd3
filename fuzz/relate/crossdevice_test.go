package relate

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// devTarget is a CPU target posing as one device of a host: it runs the
// oracle and, when drift is set, changes the last output value (a device
// that gives other bits). calls counts its runs; flipAfter > 0 drifts from
// that call on (a nondeterministic device).
type devTarget struct {
	target.Target
	dev       string
	drift     bool
	flipAfter int64
	calls     *atomic.Int64
	reps      []target.Target
}

func (d *devTarget) Info() target.Info {
	i := d.Target.Info()
	i.Device = d.dev
	return i
}

func (d *devTarget) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := d.Target.Run(ctx, b, rows)
	if err != nil {
		return nil, err
	}
	n := d.calls.Add(1)
	if d.drift || d.flipAfter > 0 && n >= d.flipAfter {
		o.Values[len(o.Values)-1] += 1
	}
	return o, nil
}

func (d *devTarget) Replicas() ([]target.Target, error) { return d.reps, nil }

// host makes a Replicated oracle-rmsnorm on n devices; drift[i] makes
// device i give other bits.
func host(t *testing.T, n int, drift map[int]bool) *devTarget {
	t.Helper()
	base, err := target.Lookup(target.OracleName(spec.OpRMSNorm))
	if err != nil {
		t.Fatal(err)
	}
	var reps []target.Target
	for i := 0; i < n; i++ {
		reps = append(reps, &devTarget{Target: base, dev: fmt.Sprintf("cuda:%d (test)", i), drift: drift[i], calls: new(atomic.Int64)})
	}
	for _, r := range reps {
		r.(*devTarget).reps = reps
	}
	return reps[0].(*devTarget)
}

func crossCase(t *testing.T, seed int64) (spec.Case, *target.Batch) {
	t.Helper()
	c := gen.Case(rand.New(rand.NewSource(seed)), spec.OpRMSNorm, spec.RelCrossDevice)
	c.Targets = []string{target.OracleName(spec.OpRMSNorm)}
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, b
}

func TestCrossDevice(t *testing.T) {
	rel, err := ByName(spec.RelCrossDevice)
	if err != nil {
		t.Fatal(err)
	}
	nondet := host(t, 1, nil)
	nondet.flipAfter = 2
	for _, tc := range []struct {
		name   string
		target target.Target
		want   string // "" holds; else a substring of the finding's message
	}{
		{"three equal devices", host(t, 3, nil), ""},
		{"device 2 differs", host(t, 3, map[int]bool{2: true}), "on cuda:0 (test) (A) vs on cuda:2 (test) (B)"},
		{"device 1 differs", host(t, 2, map[int]bool{1: true}), "on cuda:0 (test) (A) vs on cuda:1 (test) (B)"},
		{"one device, deterministic", host(t, 1, nil), ""},
		{"one device, nondeterministic", nondet, "only one device visible (cuda:0 (test)): cross_device checked determinism"},
		{"not replicated: determinism", host(t, 1, nil).Target, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, b := crossCase(t, 5)
			f, err := rel.Check(context.Background(), c, b, []target.Target{tc.target})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && f != nil:
				t.Fatalf("finding on equal devices: %s", f.Message)
			case tc.want != "" && f == nil:
				t.Fatalf("no finding, want one saying %q", tc.want)
			case tc.want != "" && !strings.Contains(f.Message, tc.want):
				t.Fatalf("finding says %q, want %q", f.Message, tc.want)
			case f != nil && (f.TargetA != target.OracleName(spec.OpRMSNorm) || f.TargetB != "" || f.Kind != "mismatch"):
				t.Fatalf("finding on %q vs %q (%s), want %s alone, a mismatch", f.TargetA, f.TargetB, f.Kind, target.OracleName(spec.OpRMSNorm))
			}
		})
	}
}

// TestCrossDeviceNotInPairs: cross_device pairs come only from RegisterPair
// (the GPU targets), never for every target by itself, so a CPU campaign
// does not run determinism twice.
func TestCrossDeviceNotInPairs(t *testing.T) {
	for _, p := range Pairs() {
		if p.Relation == spec.RelCrossDevice {
			t.Errorf("pair %s: cross_device on a CPU-only build", p)
		}
	}
	if !isPairOnly(crossDevice{}) || isPairOnly(determinism{}) {
		t.Error("isPairOnly: want true for cross_device only")
	}
}
