package gen

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
)

// testSeed returns the seed of this test's gopter run: BITPARITY_SEED when
// set (BITPARITY_SEED=clock draws one from the clock, to explore), else a
// fixed seed, so that plain `go test` and CI are deterministic. A failing
// test prints the line that replays it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	if os.Getenv("BITPARITY_SEED") == "clock" {
		seed := time.Now().UnixNano()
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("replay: BITPARITY_SEED=%d go test ./fuzz/gen -run '^%s$'", seed, t.Name())
			}
		})
		return seed
	}
	return seedOr(t, 20261202)
}

// seedOr is testSeed with a fixed default, for tests that measure
// frequencies (deterministic unless BITPARITY_SEED is set).
func seedOr(t *testing.T, seed int64) int64 {
	t.Helper()
	if s := os.Getenv("BITPARITY_SEED"); s != "" && s != "clock" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("BITPARITY_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: BITPARITY_SEED=%d go test ./fuzz/gen -run '^%s$'", seed, t.Name())
		}
	})
	return seed
}

func params(t *testing.T, n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(testSeed(t))
	p.MinSuccessfulTests = n
	p.MaxShrinkCount = 10000
	return p
}

// check runs a property and fails t with gopter's report.
func check(t *testing.T, p gopter.Prop, ps *gopter.TestParameters) *gopter.TestResult {
	t.Helper()
	res := p.Check(ps)
	if !res.Passed() {
		var args []string
		for _, a := range res.Args {
			args = append(args, fmt.Sprintf("%+v (shrunk %d times from %+v)", a.Arg, a.Shrinks, a.OrigArg))
		}
		t.Fatalf("property falsified after %d tests: %v %v", res.Succeeded, res.Error, args)
	}
	return res
}

type opRel struct {
	op  spec.Op
	rel string
}

// pairs lists every op x relation.
func pairs() []opRel {
	var ps []opRel
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			ps = append(ps, opRel{op, rel})
		}
	}
	return ps
}

func TestCaseDeterministic(t *testing.T) {
	for _, p := range pairs() {
		for seed := int64(0); seed < 20; seed++ {
			a := Case(rand.New(rand.NewSource(seed)), p.op, p.rel)
			b := Case(rand.New(rand.NewSource(seed)), p.op, p.rel)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s/%s seed %d: two draws differ:\n%+v\n%+v", p.op, p.rel, seed, a, b)
			}
			if a.Version != spec.CaseVersion || a.GenVersion != spec.GeneratorVersion || a.Op != p.op ||
				a.Relation != p.rel || len(a.Targets) != 0 {
				t.Fatalf("%s/%s: header fields wrong: %+v", p.op, p.rel, a)
			}
		}
	}
}

func TestGeneratedCasesValid(t *testing.T) {
	for _, p := range pairs() {
		t.Run(string(p.op)+"/"+p.rel, func(t *testing.T) {
			check(t, prop.ForAll(func(c spec.Case) string {
				if err := c.Validate(); err != nil {
					return err.Error()
				}
				return ""
			}, caseGen(p.op, p.rel)), params(t, 300))
		})
	}
}

// size is a well-founded measure: every simplification must lower it.
func size(c spec.Case) [2]int {
	n := 0
	for _, d := range Dims(c) {
		n += d.Get(c)
	}
	simple := 0
	if c.Dist != spec.DistNormal {
		simple++
	}
	simple += slices.Index(spec.Fillers, spec.Filler(c.Rel.Filler)) + 1
	if c.Rel.PermSeed != 0 {
		simple++
	}
	simple += len(c.Rel.Mask) + len(c.Shape.KVLens)
	if c.Seed != 0 {
		simple++
	}
	return [2]int{n, simple}
}

func TestSimplerValidAndSmaller(t *testing.T) {
	for _, p := range pairs() {
		t.Run(string(p.op)+"/"+p.rel, func(t *testing.T) {
			check(t, prop.ForAll(func(c spec.Case) string {
				sc := size(c)
				for _, n := range Simpler(c) {
					if err := n.Validate(); err != nil {
						return fmt.Sprintf("invalid candidate %+v: %v", n, err)
					}
					sn := size(n)
					if sn[0] > sc[0] || (sn[0] == sc[0] && sn[1] >= sc[1]) {
						return fmt.Sprintf("candidate %+v (size %v) is not smaller than %+v (size %v)", n, sn, c, sc)
					}
					if n.Op != c.Op || n.Relation != c.Relation || n.In != c.In || n.Out != c.Out || n.Compare != c.Compare {
						return fmt.Sprintf("candidate changed the case's identity: %+v from %+v", n, c)
					}
				}
				return ""
			}, caseGen(p.op, p.rel)), params(t, 60))
		})
	}
}

// TestShrinkerFindsOnset runs gopter properties that model kernel drift
// and checks that gopter, through shrinker, ends at the onset.
func TestShrinkerFindsOnset(t *testing.T) {
	tests := []struct {
		name string
		op   spec.Op
		rel  string
		// holds is the property; it is false on the drifting cases.
		holds func(c spec.Case) bool
		// want checks the shrunk case.
		want func(c spec.Case) bool
		desc string
	}{
		{"rmsnorm rows%32", spec.OpRMSNorm, spec.RelBatchInvariance,
			func(c spec.Case) bool { return c.Rel.Batch%32 != 0 },
			func(c spec.Case) bool {
				return c.Rel.Batch == 32 && c.Shape.Rows == 1 && c.Shape.Hidden == 1 && c.Rel.Position == 0 && c.Dist == spec.DistNormal
			},
			"batch 32, rows 1, hidden 1, position 0, normal"},
		{"rmsnorm rows>=256", spec.OpRMSNorm, spec.RelOracleParity,
			func(c spec.Case) bool { return c.Shape.Rows < 256 },
			func(c spec.Case) bool { return c.Shape.Rows == 256 && c.Shape.Hidden == 1 },
			"rows 256, hidden 1"},
		{"gemm M>100 and K>=70", spec.OpGEMM, spec.RelOracleParity,
			func(c spec.Case) bool { return c.Shape.Rows <= 100 || c.Shape.Hidden < 70 },
			func(c spec.Case) bool { return c.Shape.Rows == 101 && c.Shape.Hidden == 70 && c.Shape.N == 1 },
			"M 101, K 70, N 1"},
		{"decode kv>48", spec.OpAttnDecode, spec.RelPathParity,
			func(c spec.Case) bool {
				if len(c.Shape.KVLens) > 0 { // kv_lens replace kv
					return slices.Max(c.Shape.KVLens) <= 48
				}
				return c.Shape.KV <= 48
			},
			func(c spec.Case) bool {
				return c.Shape.KV == 49 && len(c.Shape.KVLens) == 0 && c.Shape.Rows == 1 && c.Shape.Heads == 1 && c.Shape.KVHeads == 1 && c.Shape.HeadDim == 64
			},
			"kv 49, 1 request, 1 head, head_dim 64"},
		{"padding filler nan", spec.OpRMSNorm, spec.RelPadding,
			func(c spec.Case) bool { return c.Rel.Filler != "nan" },
			func(c spec.Case) bool { return c.Rel.Filler == "nan" && c.Rel.Pad == 2 && c.Shape.Rows == 1 },
			"filler nan, pad 2, rows 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := params(t, 2000)
			r := prop.ForAll(func(c spec.Case) bool { return tt.holds(c) }, caseGen(tt.op, tt.rel)).Check(ps)
			if r.Passed() {
				t.Fatalf("the property never failed in %d cases: the generator does not reach the drift", r.Succeeded)
			}
			got := r.Args[0].Arg.(spec.Case)
			if !tt.want(got) {
				t.Fatalf("shrunk to %+v (after %d shrinks from %+v), want %s", got, r.Args[0].Shrinks, r.Args[0].OrigArg, tt.desc)
			}
		})
	}
}

// TestBiases measures how often Case hits the values the issue asks for.
func TestBiases(t *testing.T) {
	r := rand.New(rand.NewSource(seedOr(t, 1)))
	const n = 20000
	counts := map[string]int{}
	work := 0
	for i := 0; i < n; i++ {
		c := Case(r, spec.OpRMSNorm, spec.RelBatchInvariance)
		work += Work(c)
		b := c.Rel.Batch
		if b == 1 {
			counts["batch 1"]++
		}
		if b%32 == 0 {
			counts["batch%32==0"]++
		}
		if b%32 == 1 || b%32 == 31 {
			counts["batch%32==±1"]++
		}
		if slices.Contains(namedRows, b) {
			counts["batch named"]++
		}
		if b > 1 && b%smCount == 0 {
			counts["batch%132==0"]++
		}
		if c.Shape.Hidden&(c.Shape.Hidden-1) == 0 {
			counts["hidden pow2"]++
		}
		if c.Shape.Hidden >= 4096 {
			counts["hidden>=4096"]++
		}
		d := Case(r, spec.OpAttnDecode, spec.RelPathParity)
		if d.Shape.KV == 48 || d.Shape.KV == 49 {
			counts["kv 48/49"]++
		}
		if d.Shape.KV%16 == 0 || d.Shape.KV%16 == 1 || d.Shape.KV%16 == 15 {
			counts["kv tile edge"]++
		}
		if d.Shape.Heads > d.Shape.KVHeads {
			counts["gqa"]++
		}
		l := Case(r, spec.OpLogProb, spec.RelLogProbParity)
		if l.Shape.Vocab >= 100000 {
			counts["vocab>=100k"]++
		}
		if len(l.Rel.Mask) > 0 {
			counts["mask"]++
		}
		p := Case(r, spec.OpRMSNorm, spec.RelPadding)
		if p.Rel.Pad%64 == 0 {
			counts["pad%64==0"]++
		}
		if p.Rel.Filler == "nan" {
			counts["filler nan"]++
		}
	}
	t.Logf("over %d draws: %v; mean rmsnorm work %d", n, counts, work/n)
	atLeast := map[string]float64{
		"batch 1": 0.15, "batch%32==0": 0.05, "batch%32==±1": 0.05, "batch named": 0.002, "batch%132==0": 0.02,
		"hidden pow2": 0.4, "hidden>=4096": 0.005, "kv 48/49": 0.03, "kv tile edge": 0.3, "gqa": 0.3,
		"vocab>=100k": 0.0001, "mask": 0.3, "pad%64==0": 0.1, "filler nan": 0.1,
	}
	for k, f := range atLeast {
		if float64(counts[k]) < f*n {
			t.Errorf("%s in %d of %d draws, want at least %.1f%%", k, counts[k], n, 100*f)
		}
	}
	if work/n > SmallWork*5/4 {
		t.Errorf("mean work %d per case: cases too large for 10^4 cases a minute", work/n)
	}
}

func TestValidRejects(t *testing.T) {
	base := Case(rand.New(rand.NewSource(1)), spec.OpAttnDecode, spec.RelBatchInvariance)
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		mut  func(c *spec.Case)
	}{
		{"heads not a multiple", func(c *spec.Case) { c.Shape.Heads = 3; c.Shape.KVHeads = 2 }},
		{"zero kv", func(c *spec.Case) { c.Shape.KV = 0 }},
		{"unused dim", func(c *spec.Case) { c.Shape.Hidden = 7 }},
		{"position outside", func(c *spec.Case) { c.Rel.Position = c.Rel.Batch }},
		{"row outside", func(c *spec.Case) { c.Rel.Row = c.Shape.Rows }},
		{"pad on batch invariance", func(c *spec.Case) { c.Rel.Pad = 9 }},
		{"bad dtype", func(c *spec.Case) { c.In = "fp8" }},
		{"bad dist", func(c *spec.Case) { c.Dist = "cauchy" }},
		{"too big", func(c *spec.Case) { c.Shape.KV = spec.MaxElements }},
	}
	for _, tt := range tests {
		c := clone(base)
		tt.mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: Valid accepted %+v", tt.name, c)
		}
	}
}

// BenchmarkCase measures one draw.
func BenchmarkCase(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < b.N; i++ {
		Case(r, spec.Ops[i%len(spec.Ops)], spec.Relations[i%len(spec.Relations)])
	}
}
