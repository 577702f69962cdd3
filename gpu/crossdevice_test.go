//go:build cuda

package gpu

import (
	"context"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestCrossDevice runs cross_device on every exact kernel: one replica per
// GPU this process sees, each naming its own device, and the relation holds
// on generated cases (on one GPU it is determinism).
func TestCrossDevice(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d GPU(s) visible: cross_device %s", n, map[bool]string{true: "compares them all", false: "checks determinism only"}[n > 1])
	r := rand.New(rand.NewSource(9))
	for _, op := range spec.Ops {
		tg, err := target.Lookup(Name(op))
		if err != nil {
			t.Fatal(err)
		}
		reps, err := target.CrossDevices(tg)
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != n {
			t.Fatalf("%s: %d replicas, %d GPUs", Name(op), len(reps), n)
		}
		seen := map[string]bool{}
		for _, rep := range reps {
			if seen[rep.Info().Device] {
				t.Fatalf("%s: two replicas on %s", Name(op), rep.Info().Device)
			}
			seen[rep.Info().Device] = true
		}
		for i := 0; i < 5; i++ {
			c := gen.Case(r, op, spec.RelCrossDevice)
			c.Targets = []string{Name(op)}
			f, err := fuzz.Check(context.Background(), c)
			if err != nil {
				t.Fatalf("%s: %v", Name(op), err)
			}
			if f != nil {
				t.Fatalf("%s: %s\n%s", Name(op), f.Message, f.Repro)
			}
		}
	}
}
