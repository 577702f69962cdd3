package gpu

import (
	"fmt"
	"maps"
	"slices"

	"github.com/bitparity/bitparity/ops/attention"
)

// A held attention batch (HoldUserKernel) is the ABI inputs of a draw's
// largest batch (KernelInputs), uploaded once. A step of a scan is a list
// ids of its items (attn_decode: requests; attn_prefill: sequences): a
// prefix 0..n-1, any gather, or item i alone. The step's ABI inputs are
// made from the held ones (attnStep) in three ways:
//
//	per item  a tensor of one slab an item: decode's q (heads x head_dim
//	          values an item); prefill's q (max_seqlen x heads x
//	          head_dim), k and v (max_seqlen x kv_heads x head_dim). A
//	          prefix reads the held slabs in place, another list a gather
//	          of them (one device copy per run of consecutive ids), item
//	          i alone the slab at offset i.
//	shared    decode's k_cache and v_cache: the paged cache stays as
//	          uploaded, and a request keeps its pages through its
//	          block-table row.
//	per step  int32 tensors made on the host and uploaded for the step:
//	          decode's block_table (n rows of the step's max_pages: row i
//	          is held row ids[i] cut there; its entries past the
//	          request's pages are -1 as in the held table) and kv_lens
//	          (held kv_lens[ids[i]]); prefill's cu_seqlens (i x
//	          max_seqlen for i = 0..n).
//
// The sizes are the step's: requests, seqs = n; tokens = n x max_seqlen;
// max_pages and max_kv the largest of the step's requests; the others
// (heads, kv_heads, head_dim, page_size, max_seqlen, q_start, sms) as
// held. One size is not the step's own: decode's pages is the held
// cache's page count (the cache is shared: a request gathered twice reads
// its pages twice, where the gathered batch has two copies of them).
//
// So a step's inputs are KernelInputs of the gathered batch (inputs.Gather
// of ids, with the held batch's layout) up to where the pages lie: every
// request reads the same tokens through its block table, the slots past
// its kv_len are NaN and its entries past its pages -1 as there, but its
// pages are those it was given in the held cache (a prefix's request 0
// still has the cache's last page first), and pages counts them all.

// attnStep is a step of a held attention batch as the device makes it.
type attnStep struct {
	sizes map[string]int64 // the launch's sizes
	ints  map[string][]int // the int32 tensors made on the host for the step
	slabs map[string]int   // the per-item tensors: values an item
}

// attnStep returns the step of held attention inputs a whose item i is
// held item ids[i]. Of a's tensors it reads only the held block table and
// kv_lens (decode).
func (a *KernelArgs) attnStep(ids []int) (attnStep, error) {
	n, items := len(ids), a.items()
	if n < 1 {
		return attnStep{}, fmt.Errorf("gpu: a step of no items of a held %s batch", a.op)
	}
	for _, id := range ids {
		if id < 0 || id >= items {
			return attnStep{}, fmt.Errorf("gpu: held item %d of %d", id, items)
		}
	}
	z := a.Sizes
	st := attnStep{sizes: maps.Clone(z), ints: map[string][]int{}, slabs: map[string]int{}}
	switch a.op {
	case attention.Decode{}.Name():
		st.slabs["q"] = int(z["heads"] * z["head_dim"])
		lens, table := a.Tensors["kv_lens"].Ints, a.Tensors["block_table"].Ints
		held, ps := int(z["max_pages"]), int(z["page_size"])
		if len(lens) != items || len(table) != items*held || ps < 1 {
			return attnStep{}, fmt.Errorf("gpu: held decode inputs: %d kv_lens, %d block table entries, page size %d, for %d requests of %d pages",
				len(lens), len(table), ps, items, held)
		}
		maxPages, maxKV := 0, 0
		kv := make([]int, n)
		for i, id := range ids {
			kv[i] = lens[id]
			maxPages, maxKV = max(maxPages, (kv[i]+ps-1)/ps), max(maxKV, kv[i])
		}
		rows := make([]int, 0, n*maxPages)
		for _, id := range ids {
			rows = append(rows, table[id*held:id*held+maxPages]...)
		}
		st.ints["block_table"], st.ints["kv_lens"] = rows, kv
		st.sizes["requests"], st.sizes["max_pages"], st.sizes["max_kv"] = int64(n), int64(maxPages), int64(maxKV)
	case attention.Prefill{}.Name():
		L := z["max_seqlen"]
		st.slabs["q"] = int(L * z["heads"] * z["head_dim"])
		st.slabs["k"] = int(L * z["kv_heads"] * z["head_dim"])
		st.slabs["v"] = st.slabs["k"]
		cu := make([]int, n+1)
		for i := range cu {
			cu[i] = i * int(L)
		}
		st.ints["cu_seqlens"] = cu
		st.sizes["seqs"], st.sizes["tokens"] = int64(n), int64(n)*L
	default:
		return attnStep{}, fmt.Errorf("gpu: %s is not an attention op", a.op)
	}
	return st, nil
}

// widthTable is held decode inputs a's block table with every row cut to
// its first w entries (w <= max_pages). The block table of a prefix, or of
// an item alone, whose max_pages is w is consecutive rows of it (inPlace):
// the device uploads it once per width, and a scan of requests of one KV
// length has one width, the held table's.
func (a *KernelArgs) widthTable(w int) []int {
	held, table := int(a.Sizes["max_pages"]), a.Tensors["block_table"].Ints
	cut := make([]int, 0, a.items()*w)
	for r := range a.items() {
		cut = append(cut, table[r*held:r*held+w]...)
	}
	return cut
}

// inPlace says where the device finds the per-step int32 tensors of step
// st of held items off..off+n-1 (a prefix: off 0; item off alone: n 1)
// among those it holds, with no upload a step: the entry each starts at.
// kv_lens starts at entry off of the held kv_lens; cu_seqlens at entry 0
// of the held one (every held sequence has max_seqlen tokens, so its first
// n+1 entries are those of any n consecutive sequences, read from the
// first's slabs); block_table at entry off x w of widthTable(w), w the
// step's max_pages.
func (st attnStep) inPlace(off int) map[string]int {
	at := map[string]int{}
	for name := range st.ints {
		switch name {
		case "kv_lens":
			at[name] = off
		case "cu_seqlens":
			at[name] = 0
		case "block_table":
			at[name] = off * int(st.sizes["max_pages"])
		}
	}
	return at
}

// items is the number of items of a batch's inputs a: its rows (rmsnorm,
// logprob), m (gemm), requests or sequences (attention).
func (a *KernelArgs) items() int { return int(a.Sizes[a.rowsKey]) }

// HeldAttnInputs returns, on the host, the ABI inputs a step of the held
// attention batch whose inputs are held (KernelInputs of the largest
// batch) launches with: item i of the step is held item ids[i]; the
// per-item tensors are gathered, the shared ones are held's own slices
// (the caller must not write to them), the per-step ones made (see
// attnStep). These are the device's step inputs, less where they lie.
func HeldAttnInputs(held KernelArgs, ids []int) (KernelArgs, error) {
	st, err := held.attnStep(ids)
	if err != nil {
		return KernelArgs{}, err
	}
	u := held
	u.Sizes, u.Tensors, u.perRow = st.sizes, maps.Clone(held.Tensors), slices.Clone(held.perRow)
	for name, ints := range st.ints {
		u.Tensors[name] = KernelTensor{Ints: ints}
	}
	for name, w := range st.slabs {
		src := held.Tensors[name].Vals
		if len(src) != held.items()*w {
			return KernelArgs{}, fmt.Errorf("gpu: held %s: %d values, not %d items of %d", name, len(src), held.items(), w)
		}
		dst := make([]float32, 0, len(ids)*w)
		for _, id := range ids {
			dst = append(dst, src[id*w:(id+1)*w]...)
		}
		u.Tensors[name] = KernelTensor{Vals: dst}
	}
	return u, nil
}
