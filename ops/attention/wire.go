package attention

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// WireTensors is q [seqs, seq_len, heads, head_dim], k and v [seqs,
// seq_len, kv_heads, head_dim].
func (Prefill) WireTensors(in ops.In) (float32, []ops.WireTensor, error) {
	p := in.(*oracle.PrefillInput)
	return 0, []ops.WireTensor{
		ops.FloatTensor("q", []int{p.Seqs, p.SeqLen, p.Heads, p.HeadDim}, p.Q),
		ops.FloatTensor("k", []int{p.Seqs, p.SeqLen, p.KVHeads, p.HeadDim}, p.K),
		ops.FloatTensor("v", []int{p.Seqs, p.SeqLen, p.KVHeads, p.HeadDim}, p.V),
	}, nil
}

// FromWire reads q, k and v.
func (Prefill) FromWire(w ops.Wire, out oracle.DType) (ops.In, error) {
	r := ops.ReadWire(w)
	q, qs := r.Floats("q", 4)
	k, ks := r.Floats("k", 4)
	v, _ := r.Floats("v", 4)
	if err := r.Err(); err != nil {
		return nil, err
	}
	return &oracle.PrefillInput{Q: q, K: k, V: v, Seqs: qs[0], SeqLen: qs[1], Heads: qs[2], KVHeads: ks[2], HeadDim: qs[3], Out: out}, nil
}

// WireTensors is q [requests, heads, head_dim], k and v [tokens,
// kv_heads, head_dim] (the requests' caches one after another) and
// kv_lens (I32) [requests]; an error names a request whose K and V
// caches are not whole tokens of the same length.
func (Decode) WireTensors(in ops.In) (float32, []ops.WireTensor, error) {
	d := in.(*oracle.DecodeInput)
	width := d.KVHeads * d.HeadDim
	lens := make([]int32, len(d.K))
	total := 0
	for i, k := range d.K {
		if len(k)%width != 0 || len(d.V[i]) != len(k) {
			return 0, nil, fmt.Errorf("decode request %d: cache sizes k %d v %d not a multiple of %d", i, len(k), len(d.V[i]), width)
		}
		lens[i] = int32(len(k) / width)
		total += int(lens[i])
	}
	return 0, []ops.WireTensor{
		ops.FloatTensor("q", []int{len(d.K), d.Heads, d.HeadDim}, d.Q),
		ops.FloatTensor("k", []int{total, d.KVHeads, d.HeadDim}, d.K...),
		ops.FloatTensor("v", []int{total, d.KVHeads, d.HeadDim}, d.V...),
		ops.IntTensor("kv_lens", []int{len(d.K)}, lens),
	}, nil
}

// FromWire reads q, k, v and kv_lens, and cuts k and v into the
// requests' caches.
func (Decode) FromWire(w ops.Wire, out oracle.DType) (ops.In, error) {
	r := ops.ReadWire(w)
	q, qs := r.Floats("q", 3)
	k, ks := r.Floats("k", 3)
	v, _ := r.Floats("v", 3)
	lens := r.Ints("kv_lens")
	if err := r.Err(); err != nil {
		return nil, err
	}
	width := ks[1] * ks[2]
	d := &oracle.DecodeInput{Q: q, Heads: qs[1], KVHeads: ks[1], HeadDim: qs[2], Out: out}
	at := 0
	for i, n := range lens {
		end := at + int(n)*width
		if n < 0 || end > len(k) || end > len(v) {
			return nil, w.Bad(`tensor "kv_lens"`, "request %d: %d tokens past the cache", i, n)
		}
		d.K, d.V = append(d.K, k[at:end]), append(d.V, v[at:end])
		at = end
	}
	return d, nil
}
