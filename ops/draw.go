package ops

import "github.com/bitparity/bitparity/spec"

// Gen is the case generator's draws (fuzz/gen), which an op's own draw
// steps (Drawer) call: the op says what it draws and in which order, the
// generator owns the distributions and the work model. Each draw takes
// the next values of the case's one random stream, so the order of the
// calls is part of every seed's case.
type Gen interface {
	// Intn is a uniform value in [0, n).
	Intn(n int) int
	// Work is the generator's Work of one batch row of c (its inner
	// dimensions drawn).
	Work(c spec.Case) int
	// Eps is an rmsnorm epsilon of a common model.
	Eps() float32
	// SmallPow2 is a head count or group: 1, 2, 4 or 8.
	SmallPow2() int
	// HeadDim is a head dimension attention kernels are built for
	// (60% the smallest); MinHeadDim is the smallest.
	HeadDim() int
	MinHeadDim() int
	// Rows, Hidden, Vocab and KV are a value in [1, max] biased to the
	// sizes kernels switch at: a row or batch count, a row width, a
	// vocabulary, a KV or sequence length.
	Rows(max int) int
	Hidden(max int) int
	Vocab(max int) int
	KV(max int) int
}

// Drawer is an op's steps in the case generator (gen.Case, gen.Spread,
// gen.Residue), in the order the generator calls them.
type Drawer interface {
	// DrawDTypes draws the op's own dtypes of c after In and Out (a
	// log-prob: Out fp32, a Compare dtype under logprob_parity).
	DrawDTypes(c *spec.Case, g Gen)
	// DrawInner draws c's inner sizes that do not scale with the batch
	// (heads, head dim, a KV or sequence length: one row's Work within
	// budget) and its own fields (an rmsnorm's eps); minRow is a lower
	// bound of one row's Work once the rest is drawn, which caps the
	// batch.
	DrawInner(c *spec.Case, g Gen, budget int) (minRow int)
	// MaxBatch is the largest batch dimension (rows, seqs) gen.Case
	// draws.
	MaxBatch() int
	// DrawBatch draws the batch dimension in [1, max].
	DrawBatch(g Gen, max int) int
	// OtherBatch is the relation's other batch (Rel.Batch), given drawn,
	// one drawn as the batch generator's rows: drawn, or a draw in
	// [1, max] where the op's batches are small (sequences).
	OtherBatch(g Gen, drawn, max int) int
	// DrawPerRow draws the per-row dimensions of c left (hidden, n,
	// vocab, per-request KV lengths) for rows batch rows, each row's Work
	// within perRow.
	DrawPerRow(c *spec.Case, g Gen, rows, perRow int)

	// SetTokens sets the batch dimension of s to hold about tokens
	// tokens (gen.Spread): rows, or sequences of a drawn count.
	SetTokens(s *spec.Shape, g Gen, tokens int)
	// FitTokens cuts c's per-item sizes so that items items fit
	// spec.MaxElements and draws its per-item lengths again (gen.Spread).
	FitTokens(c *spec.Case, g Gen, items int)

	// ResidueShape sets s's inner sizes small for a residue case
	// (gen.Residue), its per-item lengths as well.
	ResidueShape(s *spec.Shape, g Gen)
	// ResidueSweep, for an op with a length beside its batch, draws
	// whether the residue case sweeps that length (uniform in [1,
	// maxLen]) instead of the batch; false: it sweeps the batch, and
	// nothing is drawn.
	ResidueSweep(s *spec.Shape, g Gen, maxLen int) bool
	// ResidueDims calls add for each batch dimension of s (rows, seqs,
	// kv, kv_lens, seq_len: gen.Residues' names) and its value.
	ResidueDims(s spec.Shape, add func(dim string, v int))
}

// RowsBatch is the batch steps of a Drawer whose batch dimension is
// rows (a token, a decode request), embedded by those ops.
type RowsBatch struct{}

// MaxBatch is 8192.
func (RowsBatch) MaxBatch() int { return 8192 }

// DrawBatch is g.Rows(max).
func (RowsBatch) DrawBatch(g Gen, max int) int { return g.Rows(max) }

// OtherBatch is drawn.
func (RowsBatch) OtherBatch(_ Gen, drawn, _ int) int { return drawn }

// SetTokens sets s.Rows to tokens.
func (RowsBatch) SetTokens(s *spec.Shape, _ Gen, tokens int) { s.Rows = tokens }

// ResidueSweep is false.
func (RowsBatch) ResidueSweep(*spec.Shape, Gen, int) bool { return false }
