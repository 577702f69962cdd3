package gen

import (
	"math/rand"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// MaxModulus is the largest modulus Residues measures: a kernel that
// switches on rows % m (a tile, a warp count, a split count) is reached
// only if the generator draws every class v % m, for every m up to it.
const MaxModulus = 128

// residueDims are the dimensions Residues records, named as Dims names
// them: the batch dimensions (rows, which is GEMM's M and decode's batch;
// seqs; the relation's other batch and padded size), the lengths a
// kernel's grid follows the same way (kv, kv_lens, seq_len), and the
// watched position and row of batch invariance. Inner sizes (hidden, n,
// vocab, heads, head_dim) are not batch dimensions.
var residueDims = []string{"rows", "seqs", "batch", "pad", "kv", "kv_lens", "seq_len", "position", "row"}

// residueValues calls add for each batch dimension of c (residueDims) and
// its value.
func residueValues(c spec.Case, add func(dim string, v int)) {
	drawer(c.Op).ResidueDims(c.Shape, add)
	switch c.Relation {
	case spec.RelBatchInvariance:
		add("batch", c.Rel.Batch)
		add("position", c.Rel.Position)
		add("row", c.Rel.Row)
	case spec.RelPadding:
		add("pad", c.Rel.Pad)
	}
}

// Residues records which values the batch dimensions of a stream of cases
// took, and so which residue classes v % m each reached. The zero value is
// ready to use; Add one case at a time.
type Residues struct {
	// Cases is the number of cases added.
	Cases  int
	values map[string]map[int]bool // dimension -> values seen
}

// Add records the batch dimensions of c.
func (r *Residues) Add(c spec.Case) {
	if r.values == nil {
		r.values = map[string]map[int]bool{}
	}
	r.Cases++
	residueValues(c, func(dim string, v int) {
		vs := r.values[dim]
		if vs == nil {
			vs = map[int]bool{}
			r.values[dim] = vs
		}
		vs[v] = true
	})
}

// Dims returns the dimensions recorded, in residueDims order.
func (r *Residues) Dims() []string {
	var out []string
	for _, d := range residueDims {
		if r.values[d] != nil {
			out = append(out, d)
		}
	}
	return out
}

// Max returns the largest value dimension dim took (0 when none).
func (r *Residues) Max(dim string) int {
	m := 0
	for v := range r.values[dim] {
		m = max(m, v)
	}
	return m
}

// Coverage returns the fraction of the residue classes mod m that
// dimension dim reached (m >= 1): |{v % m : v seen}| / m.
func (r *Residues) Coverage(dim string, m int) float64 {
	classes := make([]bool, m)
	n := 0
	for v := range r.values[dim] {
		if k := v % m; !classes[k] {
			classes[k] = true
			n++
		}
	}
	return float64(n) / float64(m)
}

// MinCoverage returns the smallest Coverage of dimension dim over the
// moduli 2..MaxModulus and the smallest modulus that gives it.
func (r *Residues) MinCoverage(dim string) (frac float64, m int) {
	frac = 2
	for k := 2; k <= MaxModulus; k++ {
		if f := r.Coverage(dim, k); f < frac {
			frac, m = f, k
		}
	}
	return frac, m
}

// MeasureResidues records the batch dimensions of n cases drawn by draw.
func MeasureResidues(n int, draw func() spec.Case) *Residues {
	var r Residues
	for range n {
		r.Add(draw())
	}
	return &r
}

// ResidueMax is the largest batch dimension a residue case draws: rows
// (GEMM's M, decode's batch), seqs, the other batch and the padded size.
const ResidueMax = 8192

// Residue returns c rewritten as a residue case: a case whose batch
// dimensions reach every residue class mod m <= MaxModulus, at inner sizes
// cheap enough that a campaign can afford a share of them. The draw is
// fixed by c.Seed; c keeps its op, relation, dtypes, distribution, eps and
// seed. With v(n) = residueValue over [1, n] and M = ResidueMax:
//
//	batch_invariance  row = v(M)-1, rows = row + v(M-row),
//	                  position = v(M)-1, batch = position + v(M-position)
//	padding           rows = v(M), pad = rows + v(max(1, M-rows))
//	the others        rows = v(M)
//
// (rows is seqs for attn_prefill; drawing the watched row and position
// first makes them reach every class too, where an index uniform in a
// drawn batch would make the high classes rare). The inner sizes:
// rmsnorm hidden 64..256; gemm K 64..256, N 1..8; logprob vocab 64..256;
// attention one head of 64 (GQA group 1), decode KV 1..8 without kv_lens,
// prefill sequence length 1..4. A third of the attn_prefill cases sweep
// the sequence length instead, uniform in [1, 128] (each class once or
// more), with 1 sequence, a batch or pad of 1 + 1..4 and both indices 0:
// a prefill's cost grows with the square of its length, so the two are
// not large together. A log-prob mask keeps its positions inside the
// rows, and the distribution follows the new batch (Sensitive).
//
// It panics when c is not a valid case (programmer misuse).
func Residue(c spec.Case) spec.Case {
	if err := c.Validate(); err != nil {
		panic("gen: Residue of an invalid case: " + err.Error())
	}
	r := rand.New(rand.NewSource(int64(c.Seed)))
	c = clone(c)
	k, g := drawer(c.Op), opGen{r}
	k.ResidueShape(&c.Shape, g)
	row, pos := 0, 0
	if c.Relation == spec.RelBatchInvariance {
		row, pos = residueValue(r, ResidueMax)-1, residueValue(r, ResidueMax)-1
	}
	rows := row + residueValue(r, ResidueMax-row)
	other := 0 // the other batch or the padding
	switch c.Relation {
	case spec.RelBatchInvariance:
		other = pos + residueValue(r, ResidueMax-pos)
	case spec.RelPadding:
		other = residueValue(r, max(1, ResidueMax-rows))
	}
	if k.ResidueSweep(&c.Shape, g, MaxModulus) {
		row, rows, pos, other = 0, 1, 0, 1+r.Intn(4)
	}
	c.SetBatchRows(rows)
	c.Rel.Row = row
	switch c.Relation {
	case spec.RelBatchInvariance:
		c.Rel.Batch, c.Rel.Position = other, pos
	case spec.RelPadding:
		c.Rel.Pad = rows + other
	}
	if len(c.Rel.Mask) > 0 {
		c.Rel.Mask = slices.DeleteFunc(c.Rel.Mask, func(m int) bool { return m >= rows })
		if len(c.Rel.Mask) == 0 {
			c.Rel.Mask = []int{r.Intn(rows)}
		}
	}
	Sensitive(&c)
	return c
}

// residueValue draws a value in [1, max] whose residues mod every m <=
// MaxModulus are all likely: a scale L = 128·2^j, capped at max (j = 0
// with probability 2/3, each next one a third as likely as the one
// before), then uniform in [1, L]. Every scale is uniform, or nearly,
// over the classes of every m <= 128, so each class has probability about
// 1/m; every value up to max can be drawn (4096..8192 about once in 1400
// draws) and the mean stays small (about 120 at max 8192), so the cost of
// a residue case stays near that of a small draw.
func residueValue(r *rand.Rand, max int) int {
	l := min(MaxModulus, max)
	for l < max && r.Intn(3) == 0 {
		l = min(2*l, max)
	}
	return 1 + r.Intn(l)
}
