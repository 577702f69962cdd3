package attention

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Path is every row, on no other op.
func (Decode) Path(ops.In) ops.Path { return ops.Path{} }

// PathNext is none.
func (Decode) PathNext() spec.Op { return "" }

// PathNext is attn_decode.
func (Prefill) PathNext() spec.Op { return Decode{}.Name() }

// Path is the last position of each sequence (every head), which a
// decode of each sequence's last token against its KV cache computes
// (decodeOf).
func (Prefill) Path(in ops.In) ops.Path {
	p := prefill(in)
	return ops.Path{Rows: lastPositions(p), What: "last position of each sequence",
		Next: Prefill{}.PathNext(), FromWhat: "prefill (last position of each sequence)",
		NextWhat: "decode of each sequence's last token against its KV cache",
		Of:       func() (ops.In, error) { return decodeOf(p) }}
}

// lastPositions are the output rows of the last position of each
// sequence of p, every head.
func lastPositions(p *oracle.PrefillInput) []int {
	rows := make([]int, 0, p.Seqs*p.Heads)
	for s := 0; s < p.Seqs; s++ {
		for h := 0; h < p.Heads; h++ {
			rows = append(rows, (s*p.SeqLen+p.SeqLen-1)*p.Heads+h)
		}
	}
	return rows
}

// decodeOf is the decode batch of a prefill: request s is the last query
// of sequence s against the sequence's SeqLen tokens.
func decodeOf(p *oracle.PrefillInput) (*oracle.DecodeInput, error) {
	if p.Seqs < 1 || p.SeqLen < 1 {
		return nil, fmt.Errorf("path parity: empty prefill")
	}
	qw, kw := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
	d := &oracle.DecodeInput{Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim, Out: p.Out,
		K: make([][]float32, p.Seqs), V: make([][]float32, p.Seqs)}
	for s := 0; s < p.Seqs; s++ {
		last := s*p.SeqLen + p.SeqLen - 1
		d.Q = append(d.Q, p.Q[last*qw:(last+1)*qw]...)
		d.K[s] = p.K[s*p.SeqLen*kw : (s+1)*p.SeqLen*kw]
		d.V[s] = p.V[s*p.SeqLen*kw : (s+1)*p.SeqLen*kw]
	}
	return d, nil
}
