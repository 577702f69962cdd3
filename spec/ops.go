package spec

// OpTransformer is the op of an end-to-end transformer case (package
// fuzz/transformer decodes it): a composite of the single ops, like
// OpModel.
const OpTransformer Op = "transformer"

// A Dim is one integer dimension of Shape, named as in a case file.
type Dim struct {
	Name string
	Get  func(Shape) int
	Set  func(*Shape, int)
}

// The dimensions of Shape.
var (
	DimRows    = Dim{"rows", func(s Shape) int { return s.Rows }, func(s *Shape, v int) { s.Rows = v }}
	DimHidden  = Dim{"hidden", func(s Shape) int { return s.Hidden }, func(s *Shape, v int) { s.Hidden = v }}
	DimN       = Dim{"n", func(s Shape) int { return s.N }, func(s *Shape, v int) { s.N = v }}
	DimVocab   = Dim{"vocab", func(s Shape) int { return s.Vocab }, func(s *Shape, v int) { s.Vocab = v }}
	DimSeqs    = Dim{"seqs", func(s Shape) int { return s.Seqs }, func(s *Shape, v int) { s.Seqs = v }}
	DimSeqLen  = Dim{"seq_len", func(s Shape) int { return s.SeqLen }, func(s *Shape, v int) { s.SeqLen = v }}
	DimKV      = Dim{"kv", func(s Shape) int { return s.KV }, func(s *Shape, v int) { s.KV = v }}
	DimHeads   = Dim{"heads", func(s Shape) int { return s.Heads }, func(s *Shape, v int) { s.Heads = v }}
	DimKVHeads = Dim{"kv_heads", func(s Shape) int { return s.KVHeads }, func(s *Shape, v int) { s.KVHeads = v }}
	DimHeadDim = Dim{"head_dim", func(s Shape) int { return s.HeadDim }, func(s *Shape, v int) { s.HeadDim = v }}
)

// Dims lists every integer dimension of Shape in the order case files and
// words name them (Shape.KVLens is a list, not a Dim).
var Dims = []Dim{DimRows, DimHidden, DimN, DimVocab, DimSeqs, DimSeqLen, DimKV, DimHeads, DimKVHeads, DimHeadDim}

// OpInfo is what the project knows of an op without running it: the one
// record the generator, the case contract (Case.Validate), the inputs,
// relations, the corpus and the words read. Adding an op is a record in
// opTable plus the op-specific work docs/architecture.md lists ("Where a
// new thing goes").
type OpInfo struct {
	Op Op
	// Composite is true for ops made of the single ops (OpTransformer,
	// OpModel): no single-op generator, relation or target runs them, and
	// the fields below Reads are nil.
	Composite bool
	// Batch is the dimension relations add, move and pad items along:
	// DimSeqs for attn_prefill and the composites (requests), DimRows for
	// every other op.
	Batch Dim
	// Items is the word drift maps and scans use for the items along
	// Batch: "rows" for the token ops, "batch" for decode requests, "seqs"
	// for prefill sequences and the composites' requests.
	Items string
	// Reads lists the dimensions the op reads, Batch first: each is >= 1
	// in a valid case and every other dimension of Shape is zero.
	Reads []Dim
	// KVLens is true when the op reads Shape.KVLens (per-request cache
	// lengths overriding Shape.KV).
	KVLens bool
	// Eps is true when the op reads Case.Eps (rmsnorm's epsilon).
	Eps bool
	// Taps names the fp32 intermediates a target may expose beside its
	// outputs, column by column (repeating); nil: the fp32 output columns
	// before rounding.
	Taps []string
	// Fillers are the padding rows the op accepts (Rel.Filler).
	Fillers []Filler

	// Elements returns the input values one batch item needs and the
	// values shared by every item (weights).
	Elements func(Shape) (item, shared int)
	// FMAs returns the multiply-adds of one item's outputs in the
	// reference (the reductions' length times the outputs; an exp counts
	// one): the work count of an item, before any cost weights.
	FMAs func(Shape) int
	// Cols returns the compared output columns of one output row.
	Cols func(Shape) int
	// RowsPerItem returns the output rows of one item: 1 for the token
	// ops, Heads for a decode request, SeqLen·Heads for a prefill sequence.
	RowsPerItem func(Shape) int
	// Tensors returns the explicit input tensors (Data.Tensors) the op
	// needs and the values of each, for the case's own items
	// (Batch.Get(s) of them). Counts saturate (SatMul).
	Tensors func(Shape) map[string]int
}

// Info returns the record of op, and false for an op the project does not
// know.
func (op Op) Info() (OpInfo, bool) {
	for _, o := range opTable {
		if o.Op == op {
			return o, true
		}
	}
	return OpInfo{}, false
}

// BatchRows returns the size of c's batch dimension (OpInfo.Batch): Seqs
// for attn_prefill and the composites, Rows for the other ops; 0 for an
// unknown op.
func (c Case) BatchRows() int {
	o, ok := c.Op.Info()
	if !ok {
		return 0
	}
	return o.Batch.Get(c.Shape)
}

// ItemsWord returns the word for op's items (OpInfo.Items), "rows" for an
// unknown op.
func (op Op) ItemsWord() string {
	if o, ok := op.Info(); ok {
		return o.Items
	}
	return "rows"
}

// SetBatchRows sets the size of c's batch dimension to n (a no-op for an
// unknown op).
func (c *Case) SetBatchRows(n int) {
	if o, ok := c.Op.Info(); ok {
		o.Batch.Set(&c.Shape, n)
	}
}

// MaxKV returns the longest KV cache a decode case's items have: the
// largest of KV and KVLens.
func (s Shape) MaxKV() int {
	kv := s.KV
	for _, l := range s.KVLens {
		kv = max(kv, l)
	}
	return kv
}

// allFillers: every op pads with every filler.
var allFillers = Fillers

func one(Shape) int { return 1 }

// opTable holds one record per op, single ops first in the order of Ops.
var opTable = []OpInfo{
	{
		Op: OpRMSNorm, Batch: DimRows, Items: "rows", Reads: []Dim{DimRows, DimHidden}, Eps: true,
		Taps: []string{"sum of squares", "rstd"}, Fillers: allFillers,
		Elements:    func(s Shape) (int, int) { return s.Hidden, s.Hidden },
		FMAs:        func(s Shape) int { return SatMul(2, s.Hidden) },
		Cols:        func(s Shape) int { return s.Hidden },
		RowsPerItem: one,
		Tensors: func(s Shape) map[string]int {
			return map[string]int{"x": SatMul(s.Rows, s.Hidden), "w": s.Hidden}
		},
	},
	{
		Op: OpGEMM, Batch: DimRows, Items: "rows", Reads: []Dim{DimRows, DimHidden, DimN}, Fillers: allFillers,
		Elements:    func(s Shape) (int, int) { return s.Hidden, SatMul(s.Hidden, s.N) },
		FMAs:        func(s Shape) int { return SatMul(s.Hidden, s.N) },
		Cols:        func(s Shape) int { return s.N },
		RowsPerItem: one,
		Tensors: func(s Shape) map[string]int {
			return map[string]int{"x": SatMul(s.Rows, s.Hidden), "w": SatMul(s.Hidden, s.N)}
		},
	},
	{
		Op: OpLogProb, Batch: DimRows, Items: "rows", Reads: []Dim{DimRows, DimVocab},
		Taps: []string{"row max", "sum of exponentials"}, Fillers: allFillers,
		// vocab logits and one target id per token
		Elements:    func(s Shape) (int, int) { return SatAdd(s.Vocab, 1), 0 },
		FMAs:        func(s Shape) int { return SatMul(2, s.Vocab) },
		Cols:        one,
		RowsPerItem: one,
		Tensors: func(s Shape) map[string]int {
			return map[string]int{"logits": SatMul(s.Rows, s.Vocab), "targets": s.Rows}
		},
	},
	{
		Op: OpAttnPrefill, Batch: DimSeqs, Items: "seqs", Reads: []Dim{DimSeqs, DimSeqLen, DimHeads, DimKVHeads, DimHeadDim}, Fillers: allFillers,
		Elements: func(s Shape) (int, int) {
			return SatMul(s.SeqLen, SatAdd(s.Heads, SatMul(2, s.KVHeads)), s.HeadDim), 0
		},
		// causal: position p attends to p+1 keys, QK and PV each head_dim long
		FMAs: func(s Shape) int {
			return SatMul(s.SeqLen, SatAdd(s.SeqLen, 1), s.Heads, s.HeadDim)
		},
		Cols:        func(s Shape) int { return s.HeadDim },
		RowsPerItem: func(s Shape) int { return SatMul(s.SeqLen, s.Heads) },
		Tensors: func(s Shape) map[string]int {
			t := SatMul(s.Seqs, s.SeqLen)
			kv := SatMul(t, s.KVHeads, s.HeadDim)
			return map[string]int{"q": SatMul(t, s.Heads, s.HeadDim), "k": kv, "v": kv}
		},
	},
	{
		Op: OpAttnDecode, Batch: DimRows, Items: "batch", Reads: []Dim{DimRows, DimKV, DimHeads, DimKVHeads, DimHeadDim}, KVLens: true, Fillers: allFillers,
		Elements: func(s Shape) (int, int) {
			return SatMul(SatAdd(s.Heads, SatMul(2, s.MaxKV(), s.KVHeads)), s.HeadDim), 0
		},
		FMAs:        func(s Shape) int { return SatMul(2, s.Heads, s.MaxKV(), s.HeadDim) },
		Cols:        func(s Shape) int { return s.HeadDim },
		RowsPerItem: func(s Shape) int { return s.Heads },
		Tensors: func(s Shape) map[string]int {
			tokens := 0
			for r := 0; r < s.Rows && tokens < MaxElements; r++ {
				tokens = SatAdd(tokens, s.KVLen(r))
			}
			kv := SatMul(tokens, s.KVHeads, s.HeadDim)
			return map[string]int{"q": SatMul(s.Rows, s.Heads, s.HeadDim), "k": kv, "v": kv}
		},
	},
	{
		// shape.rows layers of a decoder (docs/transformer.md), seqs requests
		Op: OpTransformer, Composite: true, Batch: DimSeqs, Items: "seqs",
		Reads:   []Dim{DimSeqs, DimRows, DimHidden, DimN, DimVocab, DimSeqLen, DimHeads, DimKVHeads, DimHeadDim},
		Fillers: []Filler{FillerZeros, FillerNormal, FillerNaN, FillerHuge},
	},
	{
		// a team's decoder behind an adapter: the transformer's dimensions
		Op: OpModel, Composite: true, Batch: DimSeqs, Items: "seqs",
		Reads: []Dim{DimSeqs, DimRows, DimHidden, DimN, DimVocab, DimSeqLen, DimHeads, DimKVHeads, DimHeadDim},
	},
}
