package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// countingOps is the CPU oracle behind a backend that counts its calls, so
// a test can see that every reduction of a path went through the backend.
type countingOps struct {
	CPUOps
	calls *atomic.Int64
}

func (o countingOps) RMSNorm(in oracle.RMSNormInput, s oracle.RMSNormSchedule, sel []int) ([]float32, error) {
	o.calls.Add(1)
	return o.CPUOps.RMSNorm(in, s, sel)
}
func (o countingOps) GEMM(in oracle.GEMMInput, s oracle.GEMMSchedule, sel []int) ([]float32, error) {
	o.calls.Add(1)
	return o.CPUOps.GEMM(in, s, sel)
}
func (o countingOps) LogProb(in oracle.LogProbInput, s oracle.LogProbSchedule, sel []int) ([]float32, error) {
	o.calls.Add(1)
	return o.CPUOps.LogProb(in, s, sel)
}
func (o countingOps) Prefill(in oracle.PrefillInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	o.calls.Add(1)
	return o.CPUOps.Prefill(in, s, sel)
}
func (o countingOps) Decode(in oracle.DecodeInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	o.calls.Add(1)
	return o.CPUOps.Decode(in, s, sel)
}

var testOpsCalls atomic.Int64

func init() {
	RegisterBackend("test-counting", func() (Ops, error) { return countingOps{calls: &testOpsCalls}, nil })
}

func TestParseKernelsBackend(t *testing.T) {
	base := FixedFor(1, 16)
	for _, tt := range []struct {
		spec, want, err string
	}{
		{"fixed", "fixed", ""},
		{"cpu/fixed", "fixed", ""},
		{"test-counting/fixed", "test-counting/fixed", ""},
		{"test-counting/fixed+gemm_splitk_by_m@L0.qkv", "test-counting/fixed+gemm_splitk_by_m@L0.qkv", ""},
		{"warp9/fixed", "", `backend "warp9": this build has cpu`},
		{"cpu/test-counting/fixed", "", "at most one backend prefix"},
		{"test-counting/fused", "", "want fixed"},
	} {
		k, err := ParseKernels(tt.spec, base)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || k.String() != tt.want {
			t.Errorf("%q: got %v (%v), want %q", tt.spec, k, err, tt.want)
		}
	}
}

func TestWithBackends(t *testing.T) {
	c := spec.Case{Targets: []string{"train:fixed", "infer:cpu/fixed+gemm_splitk_by_m@L1.qkv"}}
	got := WithBackends(c, "cuda", "").Targets
	if got[0] != "train:cuda/fixed" || got[1] != "infer:fixed+gemm_splitk_by_m@L1.qkv" {
		t.Fatalf("got %q", got)
	}
	if c.Targets[0] != "train:fixed" {
		t.Fatal("WithBackends changed its argument's targets")
	}
	if got := WithBackends(spec.Case{}, "", "cuda").Targets; got[0] != "train:fixed" || got[1] != "infer:cuda/fixed" {
		t.Fatalf("default targets: got %q", got)
	}
}

// TestOracleOnlyBehindOps: no file of the package but ops.go calls an
// oracle reduction directly, so a path on a backend runs every reduction
// there (localisation's drift maps included).
func TestOracleOnlyBehindOps(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`oracle\.(RMSNorm|GEMM|LogProb|Prefill|Decode)(Taps)?\(`)
	for _, f := range files {
		if f == "ops.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := direct.Find(src); m != nil {
			t.Errorf("%s calls %s directly: go through the path's Ops", f, m)
		}
	}
}

// TestBackendRunsEveryReduction: with both paths on a backend, the paths
// agree as on the CPU and the backend is called, and a drift planted on the
// backend is localised to its site.
func TestBackendRunsEveryReduction(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 20; seed++ {
		c := WithBackends(Gen{}.Case(seed), "test-counting", "test-counting")
		c.Relation = spec.RelPathParity
		before := testOpsCalls.Load()
		f, err := Check(ctx, c)
		if err != nil || f != nil {
			t.Fatalf("seed %d: %v %v", seed, f, err)
		}
		if testOpsCalls.Load() == before {
			t.Fatalf("seed %d: no call reached the backend", seed)
		}
	}
	found := 0
	for seed := uint64(7000); seed < 7040 && found == 0; seed++ {
		c := Gen{}.Case(seed)
		c.Relation = spec.RelPathParity
		c, err := Plant(c, "gemm_splitk_by_m", Site{0, OpMLPUp})
		if err != nil {
			t.Fatal(err)
		}
		c = WithBackends(c, "test-counting", "test-counting")
		f, err := Check(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			continue
		}
		if !strings.Contains(f.Message, "first divergence: L0.mlp_up ") || f.DriftMap == nil {
			t.Fatalf("planted at L0.mlp_up on the backend, found: %s", f.Message)
		}
		found++
	}
	if found == 0 {
		t.Fatal("the drift planted on the backend was never found in 40 seeds")
	}
}
