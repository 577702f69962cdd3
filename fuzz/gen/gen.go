// Package gen draws bitparity cases biased toward the shapes where kernels
// switch code paths (row counts at multiples of 32 and 64, powers of two,
// 928 / 2274 / 4548, multiples of 132; KV lengths at tile edges and just
// past 48), and shrinks them while keeping their structure.
//
// Case is the deterministic draw and Simpler its shrink candidates; the
// property tests wrap them as a gopter generator (gopter_test.go).
//
// Residue rewrites a case so that its batch dimensions reach every residue
// class mod m <= 128 (a campaign follows a share of its draws with one),
// and Residues measures which classes a stream of cases reached.
//
// Spread redraws a case's batch dimensions over a model profile's
// 1..max_tokens (its distribution is Tokens') and keeps its inner sizes.
//
// Sensitive makes a share of the small boundary cases sensitive (rows
// that show nearly every reduction order of the op's family); Case,
// Residue and Spread end with it.
package gen

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Budgets of Work (the values one run of the relation's batches touches,
// weighted by op) of one case: most cases are small so that a campaign runs
// >= 10^4 cases a minute on 2 cores; a few may be large (up to 4548-row
// batches, hidden 8192, vocab 152k, 1024-token prefills):
//
//	94.5%  SmallWork  (2^15)
//	 5%    MediumWork (2^18: 928 or 2274 rows of hidden 64..256, vLLM's 256
//	                   rows at hidden 1024)
//	 0.5%  BigWork    (2^21: 4548 rows, hidden 8192, vocab 152k)
const (
	SmallWork      = 1 << 15
	MediumWork     = 1 << 18
	BigWork        = 1 << 21
	MediumPermille = 50
	BigPermille    = 5
)

// dists are the value distributions Case draws (spec.DistBoundary last:
// inputs.Of nudges it toward rounding boundaries, package boundary).
var dists = []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
	spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies, spec.DistBoundary}

// Dists returns the value distributions Case draws from.
func Dists() []spec.Dist { return slices.Clone(dists) }

// Rewrites returns the distributions Case reaches only by rewriting a
// case drawn with one of Dists (Sensitive: a small boundary batch becomes
// sensitive), never by drawing them: a case decoded with one of them is
// not a draw of Dists.
func Rewrites() []spec.Dist { return []spec.Dist{spec.DistSensitive} }

// The sensitive draw (spec.DistSensitive, fuzz/inputs/sensitive.go): each row
// the best of up to 4 boundary nudges, each followed by checks against a
// family of reduction orders, so that it shows (nearly) every order of the
// family. It costs about 20 ms a row for rmsnorm and logprob, 4 ms for
// gemm and 1 to 40 ms a request for attn_decode at the campaign's shapes
// (BenchmarkCampaignSensitive in package fuzz; a boundary row costs
// microseconds), whatever the row length: the family's checks dominate.
// So a campaign draws it for a share of its small batches only: a case
// of an op with a family (ops.CaseOp.FamilyCols) that Case drew as
// boundary becomes sensitive when
//
//	(Seed / 64) % SensitiveEvery == 0, its relation is not determinism
//	(a sensitive row shows orders, not runs), its row is at least
//	SensitiveMinCols long, and the relation keys at most SensitiveRows
//	items (max(BatchRows, Rel.Batch): batch invariance makes the rows of
//	its other batch by item key too; padding's filler is not keyed).
//
// Measured (docs/detection.md): such cases are 8% of a campaign's, 9.6 ms
// sensitive against 0.66 ms boundary; a 60 s campaign beside main's ran
// 28% fewer cases at one in 4, 11% at one in 8, none measurable at one
// in 16; batches of 16 items cost seconds a case.
//
// The seed decides (Seed / 64, so that it is independent of the residue
// draw's Seed % 9), no draw of r: every other case of a stream is drawn
// as before. Sensitive applies the rule; Case, Residue and Spread end
// with it, so a case whose batch is redrawn takes the draw its new batch
// allows.
const (
	SensitiveEvery = 16
	SensitiveRows  = 2
)

// Sensitive sets c.Dist to spec.DistSensitive or spec.DistBoundary by the
// rule above when c.Dist is either (c.Draw is left as is: 0, the first
// draw of a chain); other distributions are left.
func Sensitive(c *spec.Case) {
	if c.Dist != spec.DistBoundary && c.Dist != spec.DistSensitive {
		return
	}
	c.Dist = spec.DistBoundary
	if (c.Seed/64)%SensitiveEvery == 0 && SensitiveFits(*c) {
		c.Dist = spec.DistSensitive
	}
}

// SensitiveFits reports whether the rule above lets case c draw
// sensitive, its seed aside: its op has a family at a row length of at
// least SensitiveMinCols (sensitiveCols), its relation is not
// determinism, and it keys at most SensitiveRows items.
func SensitiveFits(c spec.Case) bool {
	return c.Relation != spec.RelDeterminism && max(c.BatchRows(), c.Rel.Batch) <= SensitiveRows && sensitiveCols(c)
}

// SensitiveMinCols is the shortest row the sensitive draw takes: it tunes
// an rmsnorm row's x[hidden-3] (fuzz/inputs/sensitive.go), and a shorter row
// makes it index out of range, so neither a draw nor a shrink (Dims)
// makes a sensitive case with a shorter row.
const SensitiveMinCols = 3

// sensitiveCols reports whether c's op has a family of reduction orders
// (ops.CaseOp.FamilyCols) at a row length of at least SensitiveMinCols.
func sensitiveCols(c spec.Case) bool {
	k, ok := all.Case(c.Op)
	if !ok {
		return false
	}
	cols, family := k.FamilyCols(c.Shape)
	return family && cols >= SensitiveMinCols
}

// rowWork returns the Work of one batch row of c (its inner dimensions
// drawn): its op's work count (FMAs of its record in spec's op table: the reference's
// multiply-adds of one item, an exp counting one) weighed by its op
// package's WorkPerFMA, 0 for an op Case does not draw.
func rowWork(c spec.Case) int {
	o, ok := c.Op.Info()
	k, drawn := all.Case(c.Op)
	if !ok || !drawn {
		return 0
	}
	num, den := k.WorkPerFMA()
	return spec.SatMul(o.FMAs(c.Shape), num) / den
}

// Work estimates the cost of running c's relation: rowWork times the
// batch rows of every batch it builds (BatchRows + Rel.Batch + Rel.Pad).
// Case keeps it under SmallWork for all but 5.5% of the cases.
func Work(c spec.Case) int {
	return spec.SatMul(spec.SatAdd(c.BatchRows(), c.Rel.Batch, c.Rel.Pad), rowWork(c))
}

// Case draws one valid case of op under relation from r; the same r state
// gives the same case. Version, GenVersion, Op, Relation, Shape, In, Out,
// Compare (logprob only), Eps (rmsnorm only), Dist, Seed and the relation's
// Rel parameters are set; Targets is left empty for the caller. The draw:
//
//  1. the budget: SmallWork, MediumWork or BigWork (see there);
//  2. dtypes, distribution (half boundary, half the others), seed;
//  3. the inner dimensions that do not scale with the batch (heads, head
//     dim, KV or sequence length), capped so one row fits the budget;
//  4. the batch dimension (rows, or seqs for attn_prefill) and the
//     relation's extra rows (Rel.Batch or Rel.Pad), capped by the budget
//     over the smallest per-row work left (hidden 64, gemm K·N 64,
//     vocab 2);
//  5. the remaining per-row dimensions (hidden, n, vocab) capped by the
//     budget left for that many rows;
//  6. the other relation parameters (row, position, perm seed, filler,
//     mask);
//  7. a boundary draw of a small batch becomes sensitive for one seed in
//     SensitiveEvery (Sensitive).
//
// So Work(c) <= the budget except where a dimension's minimum exceeds it.
// It panics on an op or relation it does not know (programmer misuse).
func Case(r *rand.Rand, op spec.Op, relation string) spec.Case {
	if !slices.Contains(spec.Ops, op) {
		panic(fmt.Sprintf("gen: unknown op %q", op))
	}
	if !slices.Contains(spec.Relations, relation) {
		panic(fmt.Sprintf("gen: unknown relation %q", relation))
	}
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: relation}
	k, g := drawer(op), opGen{r}
	budget := SmallWork
	switch p := r.Intn(1000); {
	case p < BigPermille:
		budget = BigWork
	case p < BigPermille+MediumPermille:
		budget = MediumWork
	}
	drawDTypes(r, &c)
	c.Dist = spec.DistBoundary
	if r.Intn(2) == 0 {
		c.Dist = pick(r, dists[:len(dists)-1])
	}
	c.Seed = r.Uint64()
	// minRow is a lower bound of the per-row work once the inner
	// dimensions are drawn; it caps the batch dimensions.
	minRow := k.DrawInner(&c, g, budget)
	capRows := func(used int) int { return max(1, min(k.MaxBatch(), (budget-used)/minRow)) }
	rows := k.DrawBatch(g, capRows(0))
	c.SetBatchRows(rows)
	extra := 0
	switch relation {
	case spec.RelBatchInvariance:
		limit := capRows(rows * minRow)
		c.Rel.Batch = k.OtherBatch(g, drawRows(r, limit), limit)
		extra = c.Rel.Batch
	case spec.RelPadding:
		c.Rel.Pad = drawPad(r, rows, max(rows+1, capRows(rows*minRow)))
		c.Rel.Filler = string(pick(r, spec.Fillers))
		extra = c.Rel.Pad
	}
	total := rows + extra
	k.DrawPerRow(&c, g, rows, max(1, budget/total))
	drawRel(r, &c)
	Sensitive(&c)
	return c
}

// drawDTypes sets In, Out and Compare:
//
//	45% bf16 -> bf16, 20% fp16 -> fp16, 15% fp32 -> fp32,
//	10% bf16 -> fp32, 10% fp32 -> bf16;
//
// logprob outputs are fp32 (Out = fp32) and logprob_parity declares a
// Compare dtype: 40% bf16, 40% fp32, 20% fp16.
func drawDTypes(r *rand.Rand, c *spec.Case) {
	switch p := r.Intn(100); {
	case p < 45:
		c.In, c.Out = spec.BF16, spec.BF16
	case p < 65:
		c.In, c.Out = spec.FP16, spec.FP16
	case p < 80:
		c.In, c.Out = spec.FP32, spec.FP32
	case p < 90:
		c.In, c.Out = spec.BF16, spec.FP32
	default:
		c.In, c.Out = spec.FP32, spec.BF16
	}
	drawer(c.Op).DrawDTypes(c, opGen{r})
}

// drawEps: 40% 1e-5, 40% 1e-6, 10% 1e-12, 10% 1e-8.
func drawEps(r *rand.Rand) float32 {
	switch p := r.Intn(10); {
	case p < 4:
		return epsilons[0]
	case p < 8:
		return epsilons[1]
	case p < 9:
		return epsilons[2]
	default:
		return epsilons[3]
	}
}

// drawPad draws a padded row count in [rows+1, max(rows+1, limit)]: the
// next multiple of 64 (a CUDA-graph bucket), the next multiple of 8, the
// next power of two, 4548, rows+1, or rows plus 1..64.
func drawPad(r *rand.Rand, rows, limit int) int {
	var p int
	switch r.Intn(6) {
	case 0:
		p = (rows/64 + 1) * 64
	case 1:
		p = (rows/8 + 1) * 8
	case 2:
		p = 1
		for p <= rows {
			p *= 2
		}
	case 3:
		p = 4548
	case 4:
		p = rows + 1
	default:
		p = rows + 1 + r.Intn(64)
	}
	if p <= rows || p > limit {
		p = rows + 1
	}
	return p
}

// drawRel sets the relation parameters that do not change the budget: for
// batch_invariance Row (50% 0, 25% the last row, 25% uniform), Position
// (40% 0, 30% last, 30% uniform) and PermSeed (half 0, half random); for
// logprob_parity
// a Mask (half none; else each of <= 64 rows with probability 1/2, or
// 1..16 random rows of a larger batch; never empty).
func drawRel(r *rand.Rand, c *spec.Case) {
	rows := c.BatchRows()
	switch c.Relation {
	case spec.RelBatchInvariance:
		switch p := r.Intn(4); {
		case p < 2:
			c.Rel.Row = 0
		case p < 3:
			c.Rel.Row = rows - 1
		default:
			c.Rel.Row = r.Intn(rows)
		}
		switch p := r.Intn(10); {
		case p < 4:
			c.Rel.Position = 0
		case p < 7:
			c.Rel.Position = c.Rel.Batch - 1
		default:
			c.Rel.Position = r.Intn(c.Rel.Batch)
		}
		if r.Intn(2) == 0 {
			c.Rel.PermSeed = r.Uint64() | 1
		}
	case spec.RelLogProbParity:
		if r.Intn(2) == 0 {
			break
		}
		var m []int
		if rows <= 64 {
			for i := 0; i < rows; i++ {
				if r.Intn(2) == 0 {
					m = append(m, i)
				}
			}
		} else {
			for k := 1 + r.Intn(16); k > 0; k-- {
				m = append(m, r.Intn(rows))
			}
		}
		if len(m) == 0 {
			m = []int{r.Intn(rows)}
		}
		c.Rel.Mask = sortedUnique(m)
	}
}
