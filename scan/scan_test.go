package scan

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// planted is a test-only rmsnorm target: the oracle, except that when
// bad(rows) holds it flips the lowest bit of the first output value of the
// last row, or of every row when all is set (a kernel that misbehaves on
// some batch sizes only).
type planted struct {
	name string
	bad  func(rows int) bool
	all  bool
}

func (p *planted) Info() target.Info {
	return target.Info{Name: p.name, Op: spec.OpRMSNorm, Device: "cpu", Invariant: true,
		Schedule: fmt.Sprint(target.OracleRMSNormSchedule)}
}

func (p *planted) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	or, err := target.Lookup(target.OracleName(spec.OpRMSNorm))
	if err != nil {
		return nil, err
	}
	o, err := or.Run(ctx, b, rows)
	if err != nil || !p.bad(b.Rows()) {
		return o, err
	}
	o.Values = slices.Clone(o.Values)
	for r := range o.Rows {
		if p.all || r == len(o.Rows)-1 {
			o.Values[r*o.Cols] = flipLow(o.Values[r*o.Cols])
		}
	}
	return o, nil
}

// flipLow flips the lowest bit of a bf16 value held in a float32.
func flipLow(v float32) float32 { return math.Float32frombits(math.Float32bits(v) ^ 0x10000) }

// broken switches test-rmsnorm-switch from the oracle to rows % 7 == 0
// drift.
var broken atomic.Bool

func init() {
	target.Register("test-rmsnorm-mod89", func() (target.Target, error) {
		return &planted{name: "test-rmsnorm-mod89", bad: func(r int) bool { return r%89 == 0 }}, nil
	})
	target.Register("test-rmsnorm-switch", func() (target.Target, error) {
		return &planted{name: "test-rmsnorm-switch", bad: func(r int) bool { return broken.Load() && r%7 == 0 }, all: true}, nil
	})
}

func rmsnormScan(target string, to, hidden int) spec.ScanSpec {
	return spec.ScanSpec{Target: target, Dim: spec.ScanItems, From: 1, To: to,
		Shape: spec.Shape{Hidden: hidden}, Seed: 1}
}

func run(t *testing.T, s spec.ScanSpec) *Result {
	t.Helper()
	r, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runDrift runs s, whose target (what, in the error) must show a drift,
// and checks its map: rule, over every value of the range.
func runDrift(t *testing.T, s spec.ScanSpec, what, rule string) *Result {
	t.Helper()
	r := run(t, s)
	if r.Certificate != nil || r.Differing == 0 {
		t.Fatalf("%s was certified", what)
	}
	if r.Map.Rule != rule {
		t.Errorf("map %s %q, want %q", r.Map.Kind, r.Map.Rule, rule)
	}
	if want := s.To - max(s.From, 1) + 1; len(r.Map.Values) != want {
		t.Errorf("map of %d values, want every one of %d", len(r.Map.Values), want)
	}
	return r
}

func TestCertifiesOracle(t *testing.T) {
	steps := 0
	r, err := Run(context.Background(), rmsnormScan("oracle-rmsnorm", 64, 256), Options{Progress: func(done, total int) {
		steps = done
		if total != 2*64 {
			t.Errorf("progress total %d, want 128", total)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Certificate
	if c == nil {
		t.Fatalf("no certificate: %d differing, diffs %+v", r.Differing, r.Diffs)
	}
	if steps != 128 {
		t.Errorf("progress reached %d steps, want 128", steps)
	}
	// per draw: the 64-row reference batch against each row alone, then
	// every batch v = 1..64 against the rows alone (the reference batch
	// follows by transitivity: nothing differs).
	want := int64(2 * (64 + 64*65/2))
	// batches: each row alone, the reference, the 64 steps, and the
	// panel's further batches of v < 64 items.
	batches := int64(64 + 1 + 64)
	for v := 1; v < 64; v++ {
		batches += int64((64 - v + v - 1) / v)
	}
	if c.RowsCompared != want || c.Differing != 0 || c.Batches != 2*batches {
		t.Errorf("certificate counts rows %d differing %d batches %d, want %d 0 %d", c.RowsCompared, c.Differing, c.Batches, want, 2*batches)
	}
	if c.Format != spec.CertificateFormat || c.Status.State != spec.CertValid || c.Schedule == "" || c.Env.GoVersion == "" {
		t.Errorf("certificate header %+v", c)
	}
	if got := c.Scan.Dists; !slices.Equal(got, SensitiveDists) {
		t.Errorf("draws %v, want %v", got, SensitiveDists)
	}
	if r.Map.Kind != driftmap.Uniform || r.Map.Draws != 2 || len(r.Map.Values) != 64 {
		t.Errorf("map %s %q over %d draws, %d values", r.Map.Kind, r.Map.Rule, r.Map.Draws, len(r.Map.Values))
	}
}

// The CPU drift models' maps come out of scans exactly: every value of
// the range is swept, on two draws.
func TestDriftModelMaps(t *testing.T) {
	tests := []struct {
		name string
		s    spec.ScanSpec
		rule string
	}{
		{"TE rows % 32", rmsnormScan("drift-rmsnorm-te-mod32", 128, 1024),
			"rows % 32 == 0 -> B, otherwise -> A"},
		{"vLLM 256", spec.ScanSpec{Target: "drift-rmsnorm-vllm-256", From: 240, To: 270, Shape: spec.Shape{Hidden: 1024}},
			"rows <= 255 -> A, rows >= 256 -> B"},
		{"split-K by M", spec.ScanSpec{Target: "drift-gemm-splitk-by-m", To: 100, Shape: spec.Shape{Hidden: 128, N: 16}},
			"rows <= 64 -> A, rows >= 65 -> B"},
		{"decode splits by batch", spec.ScanSpec{Target: "drift-decode-splits-by-batch", To: 40,
			Shape: spec.Shape{KV: 130, Heads: 4, KVHeads: 1, HeadDim: 32}},
			"batch <= 32 -> A, batch >= 33 -> B"},
		{"decode splits by KV length", spec.ScanSpec{Target: "drift-decode-splits-by-batch", Dim: spec.ScanKV, To: 80,
			Shape: spec.Shape{Rows: 16, Heads: 4, KVHeads: 1, HeadDim: 32}},
			// at 65 tokens the second split holds one token, whose weight
			// exp(s - max) is 1 in its split as in the running softmax: the
			// bits agree; from 66 on they differ.
			"kv <= 65 -> A, kv >= 66 -> B"},
		{"TE padded to each size", spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", Dim: spec.ScanPad, Real: 8, From: 8, To: 100,
			Shape: spec.Shape{Hidden: 1024}},
			"pad % 32 == 0 -> B, otherwise -> A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runDrift(t, tt.s, "a drift model", tt.rule)
		})
	}
}

func TestFindsPlantedMod89(t *testing.T) {
	r := run(t, rmsnormScan("test-rmsnorm-mod89", 200, 64))
	if r.Certificate != nil {
		t.Fatal("certified a kernel that is wrong at 89 and 178 rows")
	}
	if want := "rows % 89 == 0 -> B, otherwise -> A"; r.Map.Rule != want {
		t.Errorf("map %q, want %q", r.Map.Rule, want)
	}
	var at []int
	for _, d := range r.Diffs {
		if d.Against == "item alone" && !slices.Contains(at, d.Value) {
			at = append(at, d.Value)
			if d.Rows != 1 || d.FirstRow != d.Value-1 {
				t.Errorf("at %d: %d rows from row %d, want the last row only", d.Value, d.Rows, d.FirstRow)
			}
		}
	}
	if !slices.Equal(at, []int{89, 178}) {
		t.Errorf("differing values %v, want [89 178]", at)
	}
}

func TestPositionScan(t *testing.T) {
	s := spec.ScanSpec{Target: "oracle-rmsnorm", Dim: spec.ScanPosition, From: 0, To: 40, Watch: 5, Shape: spec.Shape{Hidden: 128}}
	if r := run(t, s); r.Certificate == nil || len(r.Map.Values) != 40 {
		t.Errorf("oracle position scan: certified %v over %d positions", r.Certificate != nil, len(r.Map.Values))
	}
}

func TestRecheck(t *testing.T) {
	ctx := context.Background()
	r := run(t, rmsnormScan("test-rmsnorm-switch", 30, 64))
	if r.Certificate == nil {
		t.Fatal("no certificate for the oracle")
	}
	c, _, err := Recheck(ctx, *r.Certificate, Options{})
	if err != nil || c.Status.State != spec.CertValid {
		t.Fatalf("recheck of an unchanged target: %s %v", c.Status.State, err)
	}
	broken.Store(true)
	defer broken.Store(false)
	c, res, err := Recheck(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.State != spec.CertInvalid || c.Status.InvalidEnv == nil || c.Status.InvalidAt.IsZero() {
		t.Fatalf("recheck of a broken target: %+v", c.Status)
	}
	if !strings.Contains(c.Status.Reason, "rows % 7 == 0 -> B, otherwise -> A") || res.Certificate != nil {
		t.Errorf("reason %q", c.Status.Reason)
	}
	c.Schedule = "threads=1 vec=1"
	broken.Store(false)
	if c, _, _ = Recheck(ctx, c, Options{}); c.Status.State != spec.CertInvalid || !strings.Contains(c.Status.Reason, "declares schedule") {
		t.Errorf("a changed schedule: %s %q", c.Status.State, c.Status.Reason)
	}
}

func TestBadSpecs(t *testing.T) {
	ok := rmsnormScan("oracle-rmsnorm", 8, 16)
	tests := []struct {
		name string
		edit func(*spec.ScanSpec)
		want string
	}{
		{"unknown target", func(s *spec.ScanSpec) { s.Target = "nope" }, "unknown target"},
		{"op mismatch", func(s *spec.ScanSpec) { s.Op = spec.OpGEMM }, "runs rmsnorm"},
		{"unknown dim", func(s *spec.ScanSpec) { s.Dim = "width" }, "unknown dimension"},
		{"to below from", func(s *spec.ScanSpec) { s.From = 9 }, "below from"},
		{"no hidden", func(s *spec.ScanSpec) { s.Shape.Hidden = 0 }, "hidden"},
		{"unknown dist", func(s *spec.ScanSpec) { s.Dists = []spec.Dist{"uniform"} }, "unknown distribution"},
		{"dist twice", func(s *spec.ScanSpec) { s.Dists = []spec.Dist{"normal", "normal"} }, "twice"},
		{"kv of rmsnorm", func(s *spec.ScanSpec) { s.Dim = spec.ScanKV }, "attn_decode"},
		{"pad below real", func(s *spec.ScanSpec) { s.Dim, s.Real = spec.ScanPad, 4 }, "real"},
		{"watch outside", func(s *spec.ScanSpec) { s.Dim, s.Watch = spec.ScanPosition, 8 }, "watched item"},
		{"too large", func(s *spec.ScanSpec) { s.To, s.Shape.Hidden = 1<<20, 1<<10 }, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			_, err := Run(context.Background(), s, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
