package boundary_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// nudgeCases are one case per op (and per input/output dtype kind) with
// the share of tuned rows that must end with an output within boundary.K
// fp32 ulps of a rounding midpoint; Dist normal must reach far fewer.
var nudgeCases = []struct {
	c        spec.Case
	tuned    func(row int) bool // rows the nudge tunes
	minShare float64
}{
	{spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 64, Hidden: 256}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6}, nil, 0.9},
	{spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 32, Hidden: 64}, In: spec.FP32, Out: spec.FP16, Eps: 1e-5}, nil, 0.9},
	{spec.Case{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 64, Hidden: 128, N: 8}, In: spec.BF16, Out: spec.BF16}, nil, 0.8},
	{spec.Case{Op: spec.OpLogProb, Shape: spec.Shape{Rows: 32, Vocab: 500}, In: spec.BF16, Out: spec.BF16, Compare: spec.BF16}, nil, 0.7},
	{spec.Case{Op: spec.OpAttnDecode, Shape: spec.Shape{Rows: 8, KV: 70, Heads: 4, KVHeads: 2, HeadDim: 32}, In: spec.BF16, Out: spec.BF16}, nil, 0.7},
	{spec.Case{Op: spec.OpAttnPrefill, Shape: spec.Shape{Seqs: 4, SeqLen: 12, Heads: 2, KVHeads: 1, HeadDim: 32}, In: spec.BF16, Out: spec.BF16},
		func(row int) bool { return (row/2)%12 == 11 }, 0.7}, // the last query position of each sequence
}

// nearShare runs the oracle target on c's inputs with fp32 outputs and
// returns the share of tuned rows holding an output within K ulps of a
// midpoint of the compare dtype.
func nearShare(t *testing.T, c spec.Case, tuned func(int) bool) float64 {
	t.Helper()
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	cmp, _ := oracle.ParseDType(string(c.CompareDType()))
	b.Out = oracle.FP32
	switch in := b.Input.(type) {
	case *oracle.RMSNormInput:
		in.Out = oracle.FP32
	case *oracle.GEMMInput:
		in.Out = oracle.FP32
	case *oracle.PrefillInput:
		in.Out = oracle.FP32
	case *oracle.DecodeInput:
		in.Out = oracle.FP32
	}
	tg, err := target.Lookup(target.OracleName(c.Op))
	if err != nil {
		t.Fatal(err)
	}
	o, err := tg.Run(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	near, n := 0, 0
	for i, r := range o.Rows {
		if tuned != nil && !tuned(r) {
			continue
		}
		n++
		if boundary.Near(o.Row(i), cmp, boundary.K) > 0 {
			near++
		}
	}
	return float64(near) / float64(n)
}

// TestNudgeReachesBoundaries: with Dist boundary most tuned rows hold an
// output within K fp32 ulps of a rounding midpoint, and at least 4 times
// the share Dist normal gives.
func TestNudgeReachesBoundaries(t *testing.T) {
	for _, tc := range nudgeCases {
		t.Run(fmt.Sprintf("%s_%s_%s", tc.c.Op, tc.c.In, tc.c.Out), func(t *testing.T) {
			c := tc.c
			c.Version, c.GenVersion, c.Seed = spec.CaseVersion, spec.GeneratorVersion, 11
			c.Dist = spec.DistNormal
			plain := nearShare(t, c, tc.tuned)
			c.Dist = spec.DistBoundary
			got := nearShare(t, c, tc.tuned)
			if got < tc.minShare || got < 4*plain {
				t.Errorf("rows near a boundary: boundary %.2f (want >= %.2f and >= 4 x normal), normal %.2f", got, tc.minShare, plain)
			}
		})
	}
}

// TestNudgeRowsIndependent: a boundary case's row bits depend only on
// (seed, tensor, row): the first rows of a small batch equal those of a
// larger one, and a second derivation (on one goroutine) gives the same
// bits. Relations rely
// on it (they rebuild items in larger batches).
func TestNudgeRowsIndependent(t *testing.T) {
	for _, tc := range nudgeCases {
		t.Run(string(tc.c.Op), func(t *testing.T) {
			c := tc.c
			c.Version, c.GenVersion, c.Seed, c.Dist = spec.CaseVersion, spec.GeneratorVersion, 5, spec.DistBoundary
			small, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			big := c
			if c.Op == spec.OpAttnPrefill {
				big.Shape.Seqs *= 3
			} else {
				big.Shape.Rows *= 3
			}
			large, err := inputs.Of(big)
			if err != nil {
				t.Fatal(err)
			}
			procs := runtime.GOMAXPROCS(1) // one goroutine: the same bits
			again, err := inputs.Of(c)
			runtime.GOMAXPROCS(procs)
			if err != nil {
				t.Fatal(err)
			}
			a, b, r := tensors(small), tensors(large), tensors(again)
			for name, v := range a {
				if !slices.Equal(v, r[name]) {
					t.Errorf("tensor %s: two derivations differ", name)
				}
				if !slices.Equal(v, b[name][:len(v)]) {
					t.Errorf("tensor %s: the first rows differ between a batch and a larger one", name)
				}
			}
			plain := c
			plain.Dist = spec.DistNormal
			p, err := inputs.Of(plain)
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			for name, v := range tensors(p) {
				changed = changed || !slices.Equal(v, a[name])
			}
			if !changed {
				t.Error("Dist boundary gave the same values as Dist normal: nothing was nudged")
			}
		})
	}
}

// tensors lists a batch's per-row tensors as bits (decode caches of all
// requests concatenated; W tensors shared by all rows are left out).
func tensors(b *target.Batch) map[string][]uint32 {
	bits := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = oracle.ToBits(oracle.FP32, x)
		}
		return out
	}
	m := map[string][]uint32{}
	switch in := b.Input.(type) {
	case *oracle.RMSNormInput:
		m["x"] = bits(in.X)
	case *oracle.GEMMInput:
		m["x"] = bits(in.X)
	case *oracle.LogProbInput:
		m["logits"] = bits(in.Logits)
	case *oracle.PrefillInput:
		m["q"], m["k"], m["v"] = bits(in.Q), bits(in.K), bits(in.V)
	case *oracle.DecodeInput:
		var k, v []float32
		for r := range in.K {
			k, v = append(k, in.K[r]...), append(v, in.V[r]...)
		}
		m["q"], m["k"], m["v"] = bits(in.Q), bits(k), bits(v)
	}
	return m
}
