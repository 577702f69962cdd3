package spec

// CaseVersion is the version of the Case schema written by this build.
const CaseVersion = 1

// GeneratorVersion names the input-value derivation (PRNG and value
// distributions) that turns a Case's Seed into tensors, the one new cases
// record. Version 2 (package values) is counter-based and exact, so a
// GPU computes the same bits; version 1 (splitmix64 streams and
// Box-Muller) still replays the cases it recorded, and a case without
// gen_version (0) is version 1. A case of a later version replays from its
// explicit Data only.
const GeneratorVersion = 2

// Op names a mathematical operation with a row contract.
type Op string

const (
	OpRMSNorm     Op = "rmsnorm"      // row = token: y = x/rms(x) * w
	OpGEMM        Op = "gemm"         // row = token: y = x·W
	OpLogProb     Op = "logprob"      // row = token: log_softmax(logits)[target]
	OpAttnPrefill Op = "attn_prefill" // row = (sequence, query position, head)
	OpAttnDecode  Op = "attn_decode"  // row = (request, head)
)

// OpModel is the op of a model-route case: a team's whole decoder behind
// an adapter (fuzz/external, docs/protocol.md), its training path against
// its inference engine. It is not one of Ops: no single-op relation,
// generator or target runs it.
const OpModel Op = "model"

// Ops lists every single op in a stable order.
var Ops = []Op{OpRMSNorm, OpGEMM, OpLogProb, OpAttnPrefill, OpAttnDecode}

// DType names a numeric format of tensors.
type DType string

const (
	BF16 DType = "bf16"
	FP16 DType = "fp16"
	FP32 DType = "fp32"
)

// Shape holds the shape parameters of a case; an op reads the fields it
// needs and ignores the rest (zero).
//
//	rmsnorm:      Rows x Hidden
//	gemm:         Rows (M) x Hidden (K), times K x N
//	logprob:      Rows x Vocab logits, one target id per row
//	attn_prefill: Seqs sequences of SeqLen tokens, Heads query heads,
//	              KVHeads key/value heads, HeadDim
//	attn_decode:  Rows requests, each one query token against KV cached
//	              tokens (KVLens per request when they differ), Heads,
//	              KVHeads, HeadDim
//	an op package's op (ops/all): Dims, its inner sizes by dimension
//	              name (moe_route: experts, top_k; quant_fp8: hidden)
type Shape struct {
	Rows    int   `json:"rows,omitempty"`
	Hidden  int   `json:"hidden,omitempty"`
	N       int   `json:"n,omitempty"`
	Vocab   int   `json:"vocab,omitempty"`
	Seqs    int   `json:"seqs,omitempty"`
	SeqLen  int   `json:"seq_len,omitempty"`
	KV      int   `json:"kv,omitempty"`
	KVLens  []int `json:"kv_lens,omitempty"`
	Heads   int   `json:"heads,omitempty"`
	KVHeads int   `json:"kv_heads,omitempty"`
	HeadDim int   `json:"head_dim,omitempty"`
	// Dims are the inner sizes of an op package's op (ops.Shape).
	Dims map[string]int `json:"dims,omitempty"`
}

// KVLen returns the number of cached tokens of decode request item (any
// item of the case's generator, not only its own Rows):
// KVLens[item mod len(KVLens)], or KV when KVLens is empty.
func (s Shape) KVLen(item int) int {
	if len(s.KVLens) > 0 {
		return s.KVLens[item%len(s.KVLens)]
	}
	return s.KV
}

// Dist names a distribution of generated input values.
type Dist string

const (
	DistNormal       Dist = "normal"        // N(0,1)
	DistHeavy        Dist = "heavy"         // Student-t like heavy tails
	DistOutlier      Dist = "outlier"       // N(0,1) with one value x1000 per row
	DistConstant     Dist = "constant"      // every value of a row equal
	DistSignedZero   Dist = "signed_zero"   // mixture of +0, -0 and N(0,1)
	DistSubnormal    Dist = "subnormal"     // values in the subnormal range of the dtype
	DistNearOverflow Dist = "near_overflow" // magnitudes near the dtype's max
	DistTies         Dist = "ties"          // values that make exact rounding ties likely
	DistBoundary     Dist = "boundary"      // nudged so outputs sit near rounding boundaries
	DistSensitive    Dist = "sensitive"     // boundary rows re-drawn until they show most reduction orders (rmsnorm, gemm, logprob, attn_decode; attn_prefill: each query row tuned)
)

// Dists lists every distribution in a stable order.
var Dists = []Dist{DistNormal, DistHeavy, DistOutlier, DistConstant, DistSignedZero,
	DistSubnormal, DistNearOverflow, DistTies, DistBoundary, DistSensitive}

// RelParams are the parameters of a relation for one case. Fields a relation
// does not use stay zero.
type RelParams struct {
	// Row is the watched row, an index into the case's batch.
	Row int `json:"row,omitempty"`
	// Batch is the size of the other batch in batch-invariance relations.
	Batch int `json:"batch,omitempty"`
	// Position is where the watched row sits in the other batch.
	Position int `json:"position,omitempty"`
	// Pad is the padded row count in padding invariance.
	Pad int `json:"pad,omitempty"`
	// Filler names the kind of filler rows (a Filler: zeros, copy,
	// normal, huge, nan; Case.Validate parses it).
	Filler string `json:"filler,omitempty"`
	// PermSeed seeds the permutation of a permuted batch.
	PermSeed uint64 `json:"perm_seed,omitempty"`
	// Mask lists the positions (rows) that count; empty means all.
	Mask []int `json:"mask,omitempty"`
}

// Case is one concrete instance of an op under a relation: a few hundred
// bytes from which every input value is derived (Seed, Dist, GenVersion), or
// explicit bit-exact Data for hand-written and minimized cases.
type Case struct {
	Version  int      `json:"version"`
	Op       Op       `json:"op"`
	Relation string   `json:"relation"`
	Targets  []string `json:"targets"`
	Shape    Shape    `json:"shape"`
	In       DType    `json:"in"`
	Out      DType    `json:"out"`
	Compare  DType    `json:"compare,omitempty"` // dtype outputs are compared in; Out when empty
	Eps      float32  `json:"eps,omitempty"`
	Dist     Dist     `json:"dist"`
	Seed     uint64   `json:"seed"`
	// Draw is a sensitive case's place in a scan's chain of sensitive
	// draws (fuzz: draw k >= 2 targets what draws 1..k-1, seeds
	// Seed-k+1..Seed-1, left unshown); 0 for every other case.
	Draw       int       `json:"draw,omitempty"`
	GenVersion int       `json:"gen_version"`
	Rel        RelParams `json:"rel"`
	Data       *Data     `json:"data,omitempty"`
}

// MaxDraw bounds Case.Draw: a sensitive case's chain makes every earlier
// draw of it.
const MaxDraw = 64

// CompareDType is the dtype outputs are compared in.
func (c Case) CompareDType() DType {
	if c.Compare != "" {
		return c.Compare
	}
	return c.Out
}

// Data holds explicit, bit-exact inputs: each tensor is a list of values as
// the hex bits of its dtype ("3f80" for bf16 1.0, "3f800000" for fp32 1.0).
// Names are op-specific: x, w, logits, targets (decimal ids), q, k, v.
type Data struct {
	Tensors map[string][]string `json:"tensors"`
}
