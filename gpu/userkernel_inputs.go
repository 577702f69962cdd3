package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// DecodePageSize is the page size (tokens a page) of the paged K/V cache an
// attn_decode user kernel is given when the batch's layout names none:
// vLLM's default block size.
const DecodePageSize = 16

// KernelArgs are a batch as a user kernel receives it (docs/kernel-abi.md,
// "Parameters"): its inputs by their ABI names (OpParams), its sizes and
// its scalars. The worker uploads them (the cuda build); a CPU twin of a
// kernel reads them as they are.
type KernelArgs struct {
	Tensors map[string]KernelTensor
	Sizes   map[string]int64
	Eps     float32 // rmsnorm
	Scale   float32 // attention's softmax scale, oracle.Scale(head_dim)
	Causal  int64   // attention: 1 (the oracle's prefill is causal)
	op      spec.Op
	rowsKey string   // the size that counts the batch's items when it is held
	perRow  []string // the tensors of one slab an item, which a held batch gathers
}

// KernelTensor is one input: values of the batch's input dtype (NaN where
// the ABI leaves a slot unused), or int32s.
type KernelTensor struct {
	Vals []float32
	Ints []int
}

// KernelInputs names b's inputs, sizes and scalars as the ABI does
// (kernelOps), for a device of sms multiprocessors (the size "sms" of an
// attention kernel). The tensors of one slab per item (rmsnorm and gemm
// x, logprob logits and targets, attention's q, prefill's k and v) are
// the ones a held batch gathers; the others (weights, decode's paged K/V
// cache) are shared, and an attention step's small int32 tensors are made
// per step (attnStep).
//
// attn_prefill's q_start is b.Layout.ChunkFrom: the kernel computes the
// rows of positions [q_start, max_seqlen) of each sequence, attending to
// K and V of positions [0, i] (a chunk past a cached prefix, or the whole
// prompt at 0); q's rows below q_start hold NaN and y's rows there are
// not compared, so a kernel that computes the chunk from them shows it.
//
// attn_decode's K/V cache is paged in pages of page_size tokens
// (b.Layout.PageSize, DecodePageSize when 0): request b's token j is slot
// j % page_size of page block_table[b][j / page_size]. Pages are handed
// out from the end of the cache backwards (request 0's first page is the
// last page), so a kernel that ignores the block table reads the wrong
// tokens; slots past a request's kv_len hold NaN, so a kernel that reads
// them shows it; block table entries past a request's pages are -1.
func KernelInputs(b *target.Batch, sms int) (KernelArgs, error) {
	k, ok := kernelOps[b.Op]
	if !ok {
		return KernelArgs{}, fmt.Errorf("gpu: user kernels do not run %s", b.Op)
	}
	u := KernelArgs{Tensors: map[string]KernelTensor{}, Sizes: map[string]int64{}, op: b.Op, rowsKey: "rows"}
	if err := k.args(b, &u); err != nil {
		return KernelArgs{}, err
	}
	if k.Attention {
		u.Sizes["sms"] = int64(sms)
	}
	return u, nil
}

func rmsnormArgs(b *target.Batch, u *KernelArgs) error {
	r := b.Input.(*oracle.RMSNormInput)
	u.Tensors["x"], u.Tensors["w"] = KernelTensor{Vals: r.X}, KernelTensor{Vals: r.W}
	u.Sizes["rows"], u.Sizes["hidden"] = int64(r.Rows), int64(r.Hidden)
	u.Eps, u.perRow = r.Eps, []string{"x"}
	return nil
}

func gemmArgs(b *target.Batch, u *KernelArgs) error {
	g := b.Input.(*oracle.GEMMInput)
	u.Tensors["x"], u.Tensors["w"] = KernelTensor{Vals: g.X}, KernelTensor{Vals: g.W}
	u.Sizes["m"], u.Sizes["k"], u.Sizes["n"] = int64(g.M), int64(g.K), int64(g.N)
	u.rowsKey, u.perRow = "m", []string{"x"}
	return nil
}

func logprobArgs(b *target.Batch, u *KernelArgs) error {
	l := b.Input.(*oracle.LogProbInput)
	ids := make([]int, len(l.Targets))
	for i, t := range l.Targets {
		ids[i] = int(t)
	}
	u.Tensors["logits"], u.Tensors["targets"] = KernelTensor{Vals: l.Logits}, KernelTensor{Ints: ids}
	u.Sizes["rows"], u.Sizes["vocab"] = int64(l.Rows), int64(l.Vocab)
	u.perRow = []string{"logits", "targets"}
	return nil
}

// prefillArgs lays out prefill batch b as attn_prefill's ABI inputs (see
// KernelInputs).
func prefillArgs(b *target.Batch, u *KernelArgs) error {
	p := b.Input.(*oracle.PrefillInput)
	from := b.Layout.ChunkFrom
	if from < 0 || from >= max(p.SeqLen, 1) {
		return fmt.Errorf("gpu: a chunk from position %d of sequences of %d tokens: want 0 <= chunk_from < seq_len", from, p.SeqLen)
	}
	cu := make([]int, p.Seqs+1)
	for s := range cu {
		cu[s] = s * p.SeqLen
	}
	q := p.Q
	if from > 0 { // the earlier chunks' queries are not this chunk's
		q = slices.Clone(p.Q)
		width := p.Heads * p.HeadDim
		nan := float32(math.NaN())
		for s := range p.Seqs {
			row := q[s*p.SeqLen*width : (s*p.SeqLen+from)*width]
			for i := range row {
				row[i] = nan
			}
		}
	}
	u.Tensors["q"], u.Tensors["k"], u.Tensors["v"] = KernelTensor{Vals: q}, KernelTensor{Vals: p.K}, KernelTensor{Vals: p.V}
	u.Tensors["cu_seqlens"] = KernelTensor{Ints: cu}
	u.Sizes["seqs"], u.Sizes["tokens"], u.Sizes["max_seqlen"] = int64(p.Seqs), int64(p.Seqs*p.SeqLen), int64(p.SeqLen)
	u.Sizes["q_start"] = int64(from)
	u.Sizes["heads"], u.Sizes["kv_heads"], u.Sizes["head_dim"] = int64(p.Heads), int64(p.KVHeads), int64(p.HeadDim)
	u.Scale, u.Causal, u.rowsKey, u.perRow = oracle.Scale(p.HeadDim), 1, "seqs", []string{"q", "k", "v"}
	return nil
}

// decodeArgs lays out decode batch b as attn_decode's ABI inputs (see
// KernelInputs).
func decodeArgs(b *target.Batch, u *KernelArgs) error {
	ps := b.Layout.PageSize
	if ps == 0 {
		ps = DecodePageSize
	}
	if ps < 0 {
		return fmt.Errorf("gpu: page size %d: want >= 1 (0: %d)", ps, DecodePageSize)
	}
	return pageDecode(b.Input.(*oracle.DecodeInput), ps, u)
}

// pageDecode lays out decode batch d as attn_decode's ABI inputs (see
// KernelInputs) in pages of ps tokens.
func pageDecode(d *oracle.DecodeInput, ps int, u *KernelArgs) error {
	B, H, KH, D := len(d.K), d.Heads, d.KVHeads, d.HeadDim
	if B == 0 || KH < 1 || D < 1 {
		return fmt.Errorf("gpu: decode of %d requests, %d kv heads of %d: %w", B, KH, D, oracle.ErrShape)
	}
	width := KH * D // values a token
	lens := make([]int, B)
	pages, maxPages, maxKV := 0, 0, 0
	for i, k := range d.K {
		if len(k)%width != 0 {
			return fmt.Errorf("gpu: decode request %d: %d cached values, not tokens of %d: %w", i, len(k), width, oracle.ErrShape)
		}
		lens[i] = len(k) / width
		np := (lens[i] + ps - 1) / ps
		pages += np
		maxPages, maxKV = max(maxPages, np), max(maxKV, lens[i])
	}
	if pages > math.MaxInt32 {
		return fmt.Errorf("gpu: decode needs %d pages, more than int32 block table entries hold", pages)
	}
	table := make([]int, B*maxPages)
	kc := make([]float32, pages*ps*width)
	vc := make([]float32, len(kc))
	nan := float32(math.NaN())
	for i := range kc {
		kc[i], vc[i] = nan, nan
	}
	next := pages - 1 // the next free page, from the end backwards
	for i := range d.K {
		row := table[i*maxPages : (i+1)*maxPages]
		for j := range row {
			row[j] = -1
		}
		for t := 0; t < lens[i]; t++ {
			if t%ps == 0 {
				row[t/ps] = next
				next--
			}
			off := (row[t/ps]*ps + t%ps) * width
			copy(kc[off:off+width], d.K[i][t*width:(t+1)*width])
			copy(vc[off:off+width], d.V[i][t*width:(t+1)*width])
		}
	}
	u.Tensors["q"] = KernelTensor{Vals: d.Q}
	u.Tensors["k_cache"], u.Tensors["v_cache"] = KernelTensor{Vals: kc}, KernelTensor{Vals: vc}
	u.Tensors["block_table"], u.Tensors["kv_lens"] = KernelTensor{Ints: table}, KernelTensor{Ints: lens}
	u.Sizes["requests"], u.Sizes["heads"], u.Sizes["kv_heads"], u.Sizes["head_dim"] = int64(B), int64(H), int64(KH), int64(D)
	u.Sizes["page_size"], u.Sizes["max_pages"], u.Sizes["pages"], u.Sizes["max_kv"] = int64(ps), int64(maxPages), int64(pages), int64(maxKV)
	u.Scale, u.rowsKey, u.perRow = oracle.Scale(D), "requests", []string{"q"}
	return nil
}
