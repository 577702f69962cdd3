package oracle

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScheduleValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		v    interface{ Validate() error }
		want string // substring of the error; "" for a valid schedule
	}{
		{"sequential", Sequential, ""},
		{"full block", Reduction{Threads: 1024, Vec: 8, Warp: WarpSequential, Cross: CrossTree}, ""},
		{"zero threads", Reduction{Threads: 0, Vec: 1}, "threads 0"},
		{"3 threads", Reduction{Threads: 3, Vec: 1}, "threads 3"},
		{"2048 threads", Reduction{Threads: 2048, Vec: 1}, "threads 2048"},
		{"vec 3", Reduction{Threads: 32, Vec: 3}, "vec 3"},
		{"vec 0", Reduction{Threads: 32}, "vec 0"},
		{"warp order", Reduction{Threads: 32, Vec: 1, Warp: 7}, "warp order 7"},
		{"cross order", Reduction{Threads: 32, Vec: 1, Cross: 9}, "cross-warp order 9"},
		{"rmsnorm ok", RMSNormSchedule{Reduce: Sequential, Order: WeightedScale}, ""},
		{"rmsnorm reduce", RMSNormSchedule{Reduce: Reduction{Threads: 5, Vec: 1}}, "rmsnorm schedule: reduction: threads 5"},
		{"rmsnorm order", RMSNormSchedule{Reduce: Sequential, Order: 4}, "scale order 4"},
		{"gemm ok", GEMMSchedule{SplitK: 64, Combine: CrossTree}, ""},
		{"gemm split 0", GEMMSchedule{SplitK: 0}, "split-k 0"},
		{"gemm split 65", GEMMSchedule{SplitK: 65}, "split-k 65"},
		{"gemm tree 3", GEMMSchedule{SplitK: 3, Combine: CrossTree}, "power-of-two split-k, got 3"},
		{"gemm combine", GEMMSchedule{SplitK: 2, Combine: 5}, "combine order 5"},
		{"logprob", LogProbSchedule{Reduce: Reduction{Threads: 32, Vec: 16}}, "logprob schedule: reduction: vec 16"},
		{"attention ok", AttentionSchedule{Tile: 48, Splits: 3}, ""},
		{"tile 0", AttentionSchedule{Tile: 0, Splits: 1}, "tile 0"},
		{"tile 2000", AttentionSchedule{Tile: 2000, Splits: 1}, "tile 2000"},
		{"splits 0", AttentionSchedule{Tile: 64}, "splits 0"},
		{"splits 129", AttentionSchedule{Tile: 64, Splits: 129}, "splits 129"},
	} {
		err := c.v.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestOpsRejectBadInput: every op returns an error, never panics, for an
// invalid schedule, and an error wrapping ErrShape for inconsistent sizes
// and out-of-range rows.
func TestOpsRejectBadInput(t *testing.T) {
	r := newRNG(50)
	rm := rmsnormInput(r, BF16, BF16, 2, 8)
	gm := gemmInput(r, BF16, BF16, 2, 8, 3)
	lp := logprobInput(r, BF16, 2, 10, 1)
	pf := prefillInput(r, BF16, BF16, 1, 4, 2, 1, 4)
	dc := decodeInput(r, BF16, BF16, []int{3, 5}, 2, 1, 4)
	goodR := RMSNormSchedule{Reduce: Sequential}
	goodG := GEMMSchedule{SplitK: 1}
	goodL := LogProbSchedule{Reduce: Sequential}
	goodA := AttentionSchedule{Tile: 2, Splits: 1}
	badRed := Reduction{Threads: 3, Vec: 1}
	for _, c := range []struct {
		name  string
		run   func() error
		shape bool // want errors.Is(err, ErrShape)
	}{
		{"rmsnorm schedule", func() error { _, err := RMSNorm(rm, RMSNormSchedule{Reduce: badRed}, nil); return err }, false},
		{"rmsnorm x", func() error { in := rm; in.X = in.X[1:]; _, err := RMSNorm(in, goodR, nil); return err }, true},
		{"rmsnorm w", func() error { in := rm; in.W = in.W[1:]; _, err := RMSNorm(in, goodR, nil); return err }, true},
		{"rmsnorm hidden 0", func() error { in := rm; in.Hidden = 0; _, err := RMSNorm(in, goodR, nil); return err }, true},
		{"rmsnorm row", func() error { _, err := RMSNorm(rm, goodR, []int{2}); return err }, true},
		{"rmsnorm negative row", func() error { _, err := RMSNorm(rm, goodR, []int{-1}); return err }, true},
		{"gemm schedule", func() error { _, err := GEMM(gm, GEMMSchedule{SplitK: 3, Combine: CrossTree}, nil); return err }, false},
		{"gemm w", func() error { in := gm; in.W = in.W[2:]; _, err := GEMM(in, goodG, nil); return err }, true},
		{"gemm n 0", func() error { in := gm; in.N = 0; _, err := GEMM(in, goodG, nil); return err }, true},
		{"gemm row", func() error { _, err := GEMM(gm, goodG, []int{0, 5}); return err }, true},
		{"logprob schedule", func() error { _, err := LogProb(lp, LogProbSchedule{Reduce: badRed}, nil); return err }, false},
		{"logprob targets", func() error { in := lp; in.Targets = in.Targets[:1]; _, err := LogProb(in, goodL, nil); return err }, true},
		{"logprob target id", func() error {
			in := lp
			in.Targets = []int32{0, 10}
			_, err := LogProb(in, goodL, nil)
			return err
		}, true},
		{"logprob logits", func() error { in := lp; in.Logits = nil; _, err := LogProb(in, goodL, nil); return err }, true},
		{"prefill schedule", func() error { _, err := Prefill(pf, AttentionSchedule{Tile: 0, Splits: 1}, nil); return err }, false},
		{"prefill heads", func() error { in := pf; in.KVHeads = 3; _, err := Prefill(in, goodA, nil); return err }, true},
		{"prefill k", func() error { in := pf; in.K = in.K[1:]; _, err := Prefill(in, goodA, nil); return err }, true},
		{"prefill v", func() error { in := pf; in.V = append(in.V, 1); _, err := Prefill(in, goodA, nil); return err }, true},
		{"prefill seq len", func() error { in := pf; in.SeqLen = 0; _, err := Prefill(in, goodA, nil); return err }, true},
		{"prefill row", func() error { _, err := Prefill(pf, goodA, []int{8}); return err }, true},
		{"decode schedule", func() error { _, err := Decode(dc, AttentionSchedule{Tile: 4, Splits: 0}, nil); return err }, false},
		{"decode v caches", func() error { in := dc; in.V = in.V[:1]; _, err := Decode(in, goodA, nil); return err }, true},
		{"decode cache size", func() error {
			in := dc
			in.K = [][]float32{in.K[0][1:], in.K[1]}
			_, err := Decode(in, goodA, nil)
			return err
		}, true},
		{"decode q", func() error { in := dc; in.Q = in.Q[4:]; _, err := Decode(in, goodA, nil); return err }, true},
		{"decode row", func() error { _, err := Decode(dc, goodA, []int{4}); return err }, true},
	} {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
					t.Errorf("%s: %v", c.name, err)
				}
			}()
			err = c.run()
		}()
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case c.shape && !errors.Is(err, ErrShape):
			t.Errorf("%s: %v does not wrap ErrShape", c.name, err)
		case !c.shape && errors.Is(err, ErrShape):
			t.Errorf("%s: schedule error %v wraps ErrShape", c.name, err)
		case err.Error() != strings.ToLower(err.Error()[:1])+err.Error()[1:]:
			t.Errorf("%s: error %q should start lowercase", c.name, err)
		}
	}
}

// findDiff runs two computations of the same op on inputs of seeds 0, 1,
// ... until their bits differ, and reports the seed, or fails.
func findDiff(t *testing.T, name string, run func(seed uint64) (a, b []float32)) {
	t.Helper()
	for seed := uint64(0); seed < 200; seed++ {
		a, b := run(seed)
		if j := firstDiff(a, b); j >= 0 {
			t.Logf("%s: differ at seed %d, element %d: %s vs %s", name, seed, j, Hex(FP32, a[j]), Hex(FP32, b[j]))
			return
		}
	}
	t.Errorf("%s: same bits on 200 inputs: the schedule field does not change the computation", name)
}

// TestSchedulesAreReal: every field of every schedule changes the bits for
// some input (fp32 outputs, so a one-ulp drift shows).
func TestSchedulesAreReal(t *testing.T) {
	rmsPairs := []struct {
		name string
		a, b RMSNormSchedule
	}{
		{"sequential vs 32 threads", RMSNormSchedule{Reduce: Sequential}, RMSNormSchedule{Reduce: Reduction{Threads: 32, Vec: 1}}},
		{"vec 1 vs vec 4", RMSNormSchedule{Reduce: Reduction{Threads: 32, Vec: 1}}, RMSNormSchedule{Reduce: Reduction{Threads: 32, Vec: 4}}},
		{"butterfly vs sequential lanes", RMSNormSchedule{Reduce: Reduction{Threads: 32, Vec: 4}}, RMSNormSchedule{Reduce: Reduction{Threads: 32, Vec: 4, Warp: WarpSequential}}},
		{"sequential vs tree warps", RMSNormSchedule{Reduce: Reduction{Threads: 256, Vec: 8}}, RMSNormSchedule{Reduce: Reduction{Threads: 256, Vec: 8, Cross: CrossTree}}},
		{"128 vs 256 threads", RMSNormSchedule{Reduce: Reduction{Threads: 128, Vec: 8}}, RMSNormSchedule{Reduce: Reduction{Threads: 256, Vec: 8}}},
		{"scale order", RMSNormSchedule{Reduce: Sequential}, RMSNormSchedule{Reduce: Sequential, Order: WeightedScale}},
	}
	for _, p := range rmsPairs {
		findDiff(t, "rmsnorm "+p.name, func(seed uint64) ([]float32, []float32) {
			in := rmsnormInput(newRNG(seed), BF16, FP32, 2, 4096)
			a, err1 := RMSNorm(in, p.a, nil)
			b, err2 := RMSNorm(in, p.b, nil)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			return a, b
		})
	}
	// With bf16 outputs a one-ulp fp32 drift shows only where the value sits
	// at a bf16 rounding boundary: rows of 4096 normal values, 512 at a time.
	findDiff(t, "rmsnorm bf16 output, 1024 vs 512 threads", func(seed uint64) ([]float32, []float32) {
		in := rmsnormInput(newRNG(1000+seed), BF16, BF16, 512, 4096)
		a, err1 := RMSNorm(in, RMSNormSchedule{Reduce: Reduction{Threads: 1024, Vec: 4}}, nil)
		b, err2 := RMSNorm(in, RMSNormSchedule{Reduce: Reduction{Threads: 512, Vec: 8}}, nil)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		return a, b
	})
	for _, p := range [][2]GEMMSchedule{{{SplitK: 1, Combine: CrossSequential}, {SplitK: 2, Combine: CrossSequential}}, {{SplitK: 4, Combine: CrossSequential}, {SplitK: 4, Combine: CrossTree}}, {{SplitK: 3, Combine: CrossSequential}, {SplitK: 5, Combine: CrossSequential}}} {
		findDiff(t, fmt.Sprintf("gemm %s vs %s", p[0], p[1]), func(seed uint64) ([]float32, []float32) {
			in := gemmInput(newRNG(seed), BF16, FP32, 1, 4096, 16)
			a, err1 := GEMM(in, p[0], nil)
			b, err2 := GEMM(in, p[1], nil)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			return a, b
		})
	}
	findDiff(t, "logprob sequential vs 32x4", func(seed uint64) ([]float32, []float32) {
		in := logprobInput(newRNG(seed), BF16, 2, 32000, 3)
		a, err1 := LogProb(in, LogProbSchedule{Reduce: Sequential}, nil)
		b, err2 := LogProb(in, LogProbSchedule{Reduce: Reduction{Threads: 32, Vec: 4}}, nil)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		return a, b
	})
	for _, p := range [][2]int{{1, 2}, {2, 3}, {4, 8}} {
		findDiff(t, fmt.Sprintf("decode splits %d vs %d", p[0], p[1]), func(seed uint64) ([]float32, []float32) {
			in := decodeInput(newRNG(seed), BF16, FP32, []int{300, 1000}, 4, 2, 64)
			a, err1 := Decode(in, AttentionSchedule{Tile: 16, Splits: p[0]}, nil)
			b, err2 := Decode(in, AttentionSchedule{Tile: 16, Splits: p[1]}, nil)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			return a, b
		})
	}
}

// TestValidateRanges: a schedule or tensor core step with a field out of
// its range is refused, naming the field, its value and the range.
func TestValidateRanges(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ Validate() error }
		want string
	}{
		{GEMMSchedule{SplitK: 65}, "gemm schedule: split-k 65: want 1..64"},
		{GEMMSchedule{SplitK: 1, KTile: -1}, "gemm schedule: k tile -1: want 0..4096"},
		{AttentionSchedule{Tile: 0, Splits: 1}, "attention schedule: tile 0: want 1..1024"},
		{AttentionSchedule{Tile: 64, Splits: 129}, "attention schedule: splits 129: want 1..128"},
		{TensorCore{Format: MMABF16, K: 65, FracBits: 25}, "tensor core: k 65: want 1..64"},
		{TensorCore{Format: MMABF16, K: 16, FracBits: 41}, "tensor core: frac bits 41: want 1..40"},
	} {
		if err := tc.v.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.v, err, tc.want)
		}
	}
	for _, v := range []interface{ Validate() error }{GEMMSchedule{SplitK: 64, KTile: 4096}, AttentionSchedule{Tile: 1024, Splits: 128}, TensorCore{Format: MMATF32, K: 64, FracBits: 40}} {
		if err := v.Validate(); err != nil {
			t.Errorf("%+v: %v, want valid", v, err)
		}
	}
}
