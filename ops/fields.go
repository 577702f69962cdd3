package ops

import "github.com/bitparity/bitparity/spec"

// Fields visits a case's fields in its bytes for go test -fuzz (the
// format of fuzz/native's Decode and Encode): Decode passes a reader,
// which sets each field it is handed from the next bytes, and Encode a
// writer, which writes it. A CaseOp names its fields in order, once, for
// both directions (CaseOp.ShapeFields, CaseOp.OwnFields); fuzz/native
// owns the tables each kind of field reads through.
type Fields interface {
	// Rows is a batch dimension: rows, seqs.
	Rows(p *int)
	// Hidden is a row's width: hidden, n.
	Hidden(p *int)
	// Vocab is a log-prob row's width.
	Vocab(p *int)
	// KV is a length of attended positions: kv, seq_len.
	KV(p *int)
	// Heads is three fields: kv_heads, the group (heads = kv_heads·group)
	// and head_dim.
	Heads(s *spec.Shape)
	// Eps is an rmsnorm's epsilon.
	Eps(p *float32)
	// KVLens is a count k, then k lengths as KV (nil when k is 0).
	KVLens(p *[]int)
}
