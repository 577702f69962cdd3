package oracle

import (
	"runtime"
	"testing"
)

// batchOps are the five ops over one batch of 4548 rows (RMSNorm, GEMM,
// LogProb, Decode) or 3 sequences (Prefill), each with a non-trivial
// schedule. run computes the given rows (nil: all) of the batch; alone
// computes row r from a batch holding only that row (or sequence); width
// is the number of outputs per row.
type batchOp struct {
	name  string
	rows  int
	width int
	run   func(rows []int) ([]float32, error)
	alone func(r int) ([]float32, error)
}

const bigBatch = 4548 // a CUDA-graph padded decode batch

func batchOps() []batchOp {
	r := newRNG(60)
	rm := rmsnormInput(r, BF16, BF16, bigBatch, 64)
	rms := RMSNormSchedule{Reduce: Reduction{Threads: 16, Vec: 2, Warp: WarpButterfly}}
	gm := gemmInput(r, BF16, FP32, bigBatch, 64, 8)
	gms := GEMMSchedule{SplitK: 4, Combine: CrossTree}
	lp := logprobInput(r, FP16, bigBatch, 64, 3)
	lps := LogProbSchedule{Reduce: Reduction{Threads: 8, Vec: 4, Warp: WarpSequential}}
	pf := prefillInput(r, BF16, FP32, 3, 40, 4, 2, 8)
	att := AttentionSchedule{Tile: 16, Splits: 3}
	kvLens := make([]int, bigBatch)
	for i := range kvLens {
		kvLens[i] = 1 + r.IntN(40)
	}
	dc := decodeInput(r, BF16, BF16, kvLens, 2, 1, 8)
	return []batchOp{
		{"rmsnorm", rm.Rows, rm.Hidden,
			func(rows []int) ([]float32, error) { return RMSNorm(rm, rms, rows) },
			func(i int) ([]float32, error) {
				one := rm
				one.X, one.Rows = rm.X[i*rm.Hidden:(i+1)*rm.Hidden], 1
				return RMSNorm(one, rms, nil)
			}},
		{"gemm", gm.M, gm.N,
			func(rows []int) ([]float32, error) { return GEMM(gm, gms, rows) },
			func(i int) ([]float32, error) {
				one := gm
				one.X, one.M = gm.X[i*gm.K:(i+1)*gm.K], 1
				return GEMM(one, gms, nil)
			}},
		{"logprob", lp.Rows, 1,
			func(rows []int) ([]float32, error) { return LogProb(lp, lps, rows) },
			func(i int) ([]float32, error) {
				one := lp
				one.Logits, one.Targets, one.Rows = lp.Logits[i*lp.Vocab:(i+1)*lp.Vocab], lp.Targets[i:i+1], 1
				return LogProb(one, lps, nil)
			}},
		{"prefill", pf.Rows(), pf.HeadDim,
			func(rows []int) ([]float32, error) { return Prefill(pf, att, rows) },
			func(i int) ([]float32, error) {
				// the row's sequence alone, then pick the row out of it
				per := pf.SeqLen * pf.Heads
				s := i / per
				one := pf
				one.Seqs = 1
				q, kv := per*pf.HeadDim, pf.SeqLen*pf.KVHeads*pf.HeadDim
				one.Q, one.K, one.V = pf.Q[s*q:(s+1)*q], pf.K[s*kv:(s+1)*kv], pf.V[s*kv:(s+1)*kv]
				return Prefill(one, att, []int{i % per})
			}},
		{"decode", dc.Rows(), dc.HeadDim,
			func(rows []int) ([]float32, error) { return Decode(dc, att, rows) },
			func(i int) ([]float32, error) {
				b, h := i/dc.Heads, i%dc.Heads
				one := dc
				q := dc.Heads * dc.HeadDim
				one.Q, one.K, one.V = dc.Q[b*q:(b+1)*q], dc.K[b:b+1], dc.V[b:b+1]
				return Decode(one, att, []int{h})
			}},
	}
}

// TestRowsIndependentOfBatch: a row's bits are the same computed alone (a
// batch of one row or sequence), inside the full batch, in a row subset
// in any order, and at any row count (928 and 2274 leading rows).
func TestRowsIndependentOfBatch(t *testing.T) {
	for _, op := range batchOps() {
		full, err := op.run(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(full) != op.rows*op.width {
			t.Fatalf("%s: %d outputs, want %d", op.name, len(full), op.rows*op.width)
		}
		row := func(r int) []float32 { return full[r*op.width : (r+1)*op.width] }
		probe := []int{0, 1, 927, 928, 2273, op.rows / 2, op.rows - 1}
		for _, r := range probe {
			if r >= op.rows {
				continue
			}
			one, err := op.alone(r)
			if err != nil {
				t.Fatal(err)
			}
			if j := firstDiff(one, row(r)); j >= 0 {
				t.Errorf("%s row %d: alone and in a batch of %d rows differ at %d: %s vs %s",
					op.name, r, op.rows, j, Hex(FP32, one[j]), Hex(FP32, row(r)[j]))
			}
		}
		subset := []int{op.rows - 1, 5, min(927, op.rows-2), 5, 0} // any order, repeats allowed
		sub, err := op.run(subset)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range subset {
			if j := firstDiff(sub[i*op.width:(i+1)*op.width], row(r)); j >= 0 {
				t.Errorf("%s: row %d as subset element %d differs from the full batch at %d", op.name, r, i, j)
			}
		}
		for _, n := range []int{928, 2274} {
			if n > op.rows {
				continue
			}
			lead := make([]int, n)
			for i := range lead {
				lead[i] = i
			}
			part, err := op.run(lead)
			if err != nil {
				t.Fatal(err)
			}
			if j := firstDiff(part, full[:n*op.width]); j >= 0 {
				t.Errorf("%s: the first %d rows differ from the full batch at row %d", op.name, n, j/op.width)
			}
		}
	}
}

// TestBitsIndependentOfGOMAXPROCS: the same batch computed on 1 goroutine
// and on 8 gives the same bits.
func TestBitsIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, op := range batchOps() {
		runtime.GOMAXPROCS(1)
		one, err := op.run(nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GOMAXPROCS(8)
		many, err := op.run(nil)
		if err != nil {
			t.Fatal(err)
		}
		if j := firstDiff(one, many); j >= 0 {
			t.Errorf("%s: GOMAXPROCS 1 and 8 differ at row %d", op.name, j/op.width)
		}
	}
}
