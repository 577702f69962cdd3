package fuzz

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Sweep says which dimension of a finding's case decides its drift, and how
// to classify one value of it.
type Sweep struct {
	// Dim is the swept dimension: "rows" (tokens of rmsnorm, gemm,
	// logprob), "batch" (decode requests), "seqs" (prefill sequences) or
	// "kv" (the KV length of a prefill).
	Dim string
	// Onset is the value of Dim in the minimal case where the drift showed.
	Onset int
	// Classify runs the finding's target(s) at value v of Dim and returns
	// a class: the digest of the watched item's output bits and fp32 taps
	// (which bits a batch of v gives), or "same" / "differs" for path
	// parity (whether the two targets agree at v).
	Classify func(v int) (string, error)
}

// SweepFor returns the sweep of finding f on its case, or nil when the
// relation has no dimension to sweep (log-prob parity: its findings are
// misuses, explained in their message; determinism: no dimension decides
// it). Batch-level relations sweep the batch size: the item of the
// finding's first diverging row runs in a batch of v copies of itself, and
// only its rows are computed. Path parity of two attention targets sweeps the KV
// length of one sequence: both targets run the last position. The targets
// are given as to Check.
func SweepFor(ctx context.Context, f *spec.Finding, given ...target.Target) (*Sweep, error) {
	c := f.Case
	ts, err := resolve(c.Targets, given)
	if err != nil {
		return nil, err
	}
	switch c.Relation {
	case spec.RelLogProbParity, spec.RelDeterminism:
		return nil, nil
	case spec.RelPathParity:
		if c.Op != spec.OpAttnPrefill {
			return nil, nil
		}
		k := &kvClass{ctx: ctx, c: c, ts: ts}
		return &Sweep{Dim: "kv", Onset: c.Shape.SeqLen, Classify: k.classify}, nil
	}
	dim := map[spec.Op]string{spec.OpAttnDecode: "batch", spec.OpAttnPrefill: "seqs"}[c.Op]
	if dim == "" {
		dim = "rows"
	}
	onset := max(caseItems(c), c.Rel.Batch, c.Rel.Pad)
	full, err := Inputs(c)
	if err != nil {
		return nil, fmt.Errorf("drift map: %w", err)
	}
	item := f.Row / full.RowsPerItem()
	if item < 0 || item >= full.Items() {
		item = 0
	}
	one, err := gather(full, []int{item})
	if err != nil {
		return nil, fmt.Errorf("drift map: the watched item: %w", err)
	}
	t := ts[0]
	return &Sweep{Dim: dim, Onset: onset, Classify: func(v int) (string, error) {
		if v < 1 {
			return "", fmt.Errorf("drift map: %s %d", dim, v)
		}
		if err := budget(c, v*perItem(one)); err != nil {
			return "", err
		}
		b, err := gather(one, make([]int, v))
		if err != nil {
			return "", err
		}
		out, err := t.Run(ctx, b, itemRows(b, 0, 1))
		if err != nil {
			return "", err
		}
		defer (&run{out: out}).release()
		if err := out.ToHost(); err != nil {
			return "", err
		}
		return digest(out), nil
	}}, nil
}

// kvRows is the number of (sequence, head) rows a KV-length sweep compares
// at each length: a tile edge changes an output only when a later tile
// raises the running max or reorders a sum, which one row shows with a
// probability of a few percent, so one sequence is not enough.
const kvRows = 256

// kvClass runs both targets of a prefill path-parity case on sequences of
// v tokens (enough of them for kvRows rows) and says whether the last
// position of every sequence agrees ("same": outputs and taps bitwise
// equal) or not ("differs"). The sequences are the first v tokens of
// sequences drawn once at the longest length swept (a token's values depend
// only on its sequence and position), so the sweep generates inputs once. A
// prefill against a decode target runs the relation itself.
type kvClass struct {
	ctx  context.Context
	c    spec.Case
	ts   []target.Target
	long *target.Batch // sequences of maxLen tokens
}

func (k *kvClass) classify(v int) (string, error) {
	if k.long == nil || k.long.Prefill.SeqLen < v {
		kc := k.c
		kc.Data = nil
		kc.Rel = spec.RelParams{}
		kc.Shape.SeqLen = max(v, 2*k.c.Shape.SeqLen+2)
		kc.Shape.Seqs = max(1, (kvRows+kc.Shape.Heads-1)/max(1, kc.Shape.Heads))
		b, err := Inputs(kc)
		if err != nil {
			return "", err
		}
		k.long = b
	}
	b := truncate(k.long, v)
	if k.ts[1].Info().Op != k.ts[0].Info().Op {
		kc := k.c
		kc.Shape.SeqLen, kc.Shape.Seqs = v, b.Prefill.Seqs
		f, err := pathParity{}.Check(k.ctx, kc, b, k.ts)
		if err != nil {
			return "", err
		}
		if f != nil {
			return "differs", nil
		}
		return "same", nil
	}
	rows := lastPositions(b.Prefill)
	var ds [2]string
	for i, t := range k.ts[:2] {
		out, err := t.Run(k.ctx, b, rows)
		if err != nil {
			return "", err
		}
		r := &run{out: out}
		defer r.release()
		if err := out.ToHost(); err != nil {
			return "", err
		}
		ds[i] = digest(out)
	}
	if ds[0] == ds[1] {
		return "same", nil
	}
	return "differs", nil
}

// truncate returns a prefill batch of the first v tokens of every sequence
// of b.
func truncate(b *target.Batch, v int) *target.Batch {
	p := *b.Prefill
	L := p.SeqLen
	cut := func(x []float32, heads int) []float32 {
		w := heads * p.HeadDim
		out := make([]float32, 0, p.Seqs*v*w)
		for s := 0; s < p.Seqs; s++ {
			out = append(out, x[s*L*w:(s*L+v)*w]...)
		}
		return out
	}
	p.Q, p.K, p.V = cut(p.Q, p.Heads), cut(p.K, p.KVHeads), cut(p.V, p.KVHeads)
	p.SeqLen = v
	return &target.Batch{Op: b.Op, In: b.In, Out: b.Out, Prefill: &p}
}

// perItem is the number of input values one item of b holds.
func perItem(b *target.Batch) int {
	switch b.Op {
	case spec.OpRMSNorm:
		return b.RMSNorm.Hidden
	case spec.OpGEMM:
		return b.GEMM.K
	case spec.OpLogProb:
		return b.LogProb.Vocab
	case spec.OpAttnDecode:
		d := b.Decode
		kv := 0
		switch {
		case b.Lazy():
			kv = b.Source.Case.Shape.KVLen(int(b.Source.Key(0))) * d.KVHeads * d.HeadDim
		case len(d.K) > 0:
			kv = len(d.K[0])
		}
		return d.Heads*d.HeadDim + 2*kv
	case spec.OpAttnPrefill:
		p := b.Prefill
		return p.SeqLen * (p.Heads + 2*p.KVHeads) * p.HeadDim
	}
	return 0
}

// digest is a short hash of an output's value bits and tap bits.
func digest(o *target.Output) string {
	h := sha256.New()
	var buf [4]byte
	for _, vs := range [][]float32{o.Values, o.Taps} {
		for _, v := range vs {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			h.Write(buf[:])
		}
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}
