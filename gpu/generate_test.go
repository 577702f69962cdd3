//go:build cuda

package gpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// genTensor is one tensor of a case as the device generates it, beside
// the host's values (inputs.Of).
type genTensor struct {
	name       string
	t          values.Tensor
	keys       gpu.RowKeys
	rows, cols int
	host       []float32
}

// tensorsOf lists the generated tensors of version 2 case c with the
// parameters fuzz/inputs/inputs.go uses for them (RMSNorm's weights, 1 + w, and
// the log-prob targets stay on the host and are left out).
func tensorsOf(t *testing.T, c spec.Case) []genTensor {
	t.Helper()
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	dt := b.In
	tn := func(id uint64, d spec.Dist, scale float64) values.Tensor {
		return values.Tensor{Seed: c.Seed, ID: id, Dist: d, DType: dt, Scale: scale}
	}
	s := c.Shape
	switch c.Op {
	case spec.OpRMSNorm:
		return []genTensor{{"x", tn(values.TensorX, c.Dist, 1), gpu.RowKeys{}, s.Rows, s.Hidden, b.Input.(*oracle.RMSNormInput).X}}
	case spec.OpGEMM:
		g := b.Input.(*oracle.GEMMInput)
		return []genTensor{
			{"x", tn(values.TensorX, c.Dist, 1), gpu.RowKeys{}, s.Rows, s.Hidden, g.X},
			{"w", tn(values.TensorW, spec.DistNormal, 1/math.Sqrt(float64(s.Hidden))), gpu.RowKeys{}, s.Hidden, s.N, g.W},
		}
	case spec.OpLogProb:
		return []genTensor{{"logits", tn(values.TensorLogits, c.Dist, 3), gpu.RowKeys{}, s.Rows, s.Vocab, b.Input.(*oracle.LogProbInput).Logits}}
	case spec.OpAttnPrefill:
		tokens, keys, p := s.Seqs*s.SeqLen, gpu.RowKeys{SeqLen: s.SeqLen}, b.Input.(*oracle.PrefillInput)
		return []genTensor{
			{"q", tn(values.TensorQ, c.Dist, 1), keys, tokens, s.Heads * s.HeadDim, p.Q},
			{"k", tn(values.TensorK, c.Dist, 1), keys, tokens, s.KVHeads * s.HeadDim, p.K},
			{"v", tn(values.TensorV, spec.DistNormal, 1), keys, tokens, s.KVHeads * s.HeadDim, p.V},
		}
	case spec.OpAttnDecode:
		d := b.Input.(*oracle.DecodeInput)
		out := []genTensor{{"q", tn(values.TensorQ, c.Dist, 1), gpu.RowKeys{}, s.Rows, s.Heads * s.HeadDim, d.Q}}
		kvd := s.KVHeads * s.HeadDim
		for r := range d.K {
			keys := gpu.RowKeys{Base: uint64(r) << 32}
			out = append(out,
				genTensor{fmt.Sprintf("k[%d]", r), tn(values.TensorK, c.Dist, 1), keys, len(d.K[r]) / kvd, kvd, d.K[r]},
				genTensor{fmt.Sprintf("v[%d]", r), tn(values.TensorV, spec.DistNormal, 1), keys, len(d.V[r]) / kvd, kvd, d.V[r]})
		}
		return out
	}
	t.Fatalf("no tensors for op %s", c.Op)
	return nil
}

// TestGenerateMatchesHost generates every tensor of cases of every op,
// distribution (but boundary), dtype and a few seeds on the device and
// compares each value's bits with inputs.Of' (generator version 2); then
// a row range [r0, r1) alone, which must be the same rows of the whole.
func TestGenerateMatchesHost(t *testing.T) {
	d, err := gpu.Default()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	shapes := map[spec.Op]spec.Shape{
		spec.OpRMSNorm:     {Rows: 37, Hidden: 4096},
		spec.OpGEMM:        {Rows: 5, Hidden: 96, N: 33},
		spec.OpLogProb:     {Rows: 3, Vocab: 1000},
		spec.OpAttnPrefill: {Seqs: 3, SeqLen: 49, Heads: 4, KVHeads: 2, HeadDim: 64},
		spec.OpAttnDecode:  {Rows: 3, KVLens: []int{48, 49, 1}, Heads: 4, KVHeads: 2, HeadDim: 64},
	}
	dists := []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
		spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies}
	compared := 0
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM, spec.OpLogProb, spec.OpAttnPrefill, spec.OpAttnDecode} {
		for _, dist := range dists {
			for _, in := range []spec.DType{spec.BF16, spec.FP16, spec.FP32} {
				for _, seed := range []uint64{0, 7, math.MaxUint64} {
					c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: op, Relation: spec.RelOracleParity,
						Shape: shapes[op], In: in, Out: in, Eps: 1e-6, Dist: dist, Seed: seed}
					for _, g := range tensorsOf(t, c) {
						name := fmt.Sprintf("%s %s %s seed %d %s", op, dist, in, seed, g.name)
						got := generate(t, d, g.t, g.keys, 0, g.rows, g.cols)
						compared += compareBits(t, name, g.t.DType, got, g.host)
						if g.rows > 2 {
							r0, r1 := 1, g.rows-1
							part := generate(t, d, g.t, g.keys, r0, r1, g.cols)
							compareBits(t, name+fmt.Sprintf(" rows [%d, %d)", r0, r1), g.t.DType, part, g.host[r0*g.cols:r1*g.cols])
						}
					}
				}
			}
		}
	}
	t.Logf("%d values bit for bit", compared)
}

func generate(t *testing.T, d *gpu.Device, tn values.Tensor, keys gpu.RowKeys, r0, r1, cols int) []uint32 {
	t.Helper()
	g, err := d.Generate(tn, keys, r0, r1, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	bits, err := g.Bits()
	if err != nil {
		t.Fatal(err)
	}
	return bits
}

// compareBits fails at the first value whose device bits differ from the
// host's, and returns the number of values compared.
func compareBits(t *testing.T, name string, dt oracle.DType, got []uint32, host []float32) int {
	t.Helper()
	if len(got) != len(host) {
		t.Fatalf("%s: %d values from the device, %d on the host", name, len(got), len(host))
	}
	for i, h := range host {
		if want := oracle.ToBits(dt, h); got[i] != want {
			t.Fatalf("%s: value %d: device %#x, host %#x", name, i, got[i], want)
		}
	}
	return len(host)
}

func TestGenerateBadInput(t *testing.T) {
	d, err := gpu.Default()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	tn := values.Tensor{Seed: 1, ID: values.TensorX, Dist: spec.DistBoundary, DType: oracle.BF16, Scale: 1}
	if _, err := d.Generate(tn, gpu.RowKeys{}, 0, 4, 8); err == nil {
		t.Error("boundary generated on the device")
	}
	tn.Dist = "lognormal"
	if _, err := d.Generate(tn, gpu.RowKeys{}, 0, 4, 8); err == nil {
		t.Error("unknown distribution accepted")
	}
	tn.Dist = spec.DistNormal
	if _, err := d.Generate(tn, gpu.RowKeys{}, 3, 2, 8); err == nil {
		t.Error("rows [3, 2) accepted")
	}
}
