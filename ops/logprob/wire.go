package logprob

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// WireTensors is logits [rows, vocab] and targets (I32) [rows].
func (Op) WireTensors(in ops.In) (float32, []ops.WireTensor, error) {
	l := in.(*oracle.LogProbInput)
	return 0, []ops.WireTensor{
		ops.FloatTensor("logits", []int{l.Rows, l.Vocab}, l.Logits),
		ops.IntTensor("targets", []int{l.Rows}, l.Targets),
	}, nil
}

// FromWire reads logits and targets; the outputs are fp32 whatever out.
func (Op) FromWire(w ops.Wire, _ oracle.DType) (ops.In, error) {
	r := ops.ReadWire(w)
	l, ls := r.Floats("logits", 2)
	ids := r.Ints("targets")
	if err := r.Err(); err != nil {
		return nil, err
	}
	tg := make([]int32, len(ids))
	for i, v := range ids {
		tg[i] = int32(v)
	}
	return &oracle.LogProbInput{Logits: l, Targets: tg, Rows: ls[0], Vocab: ls[1]}, nil
}
