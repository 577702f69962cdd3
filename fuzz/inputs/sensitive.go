package inputs

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// sensitiveAttempts bounds the candidates of one row of a sensitive case:
// the row as drawn and at most sensitiveAttempts-1 re-draws.
const sensitiveAttempts = 4

// SensitiveOps lists the ops that have a sensitive draw: those of
// ops/all.Cases with a family of reduction orders (ops.CaseOp.FamilyCols),
// in that order.
var SensitiveOps = sensitiveOps()

func sensitiveOps() []spec.Op {
	var out []spec.Op
	for _, k := range all.Cases {
		if _, ok := k.FamilyCols(spec.Shape{}); ok {
			out = append(out, k.Name())
		}
	}
	return out
}

// Family is the family of reduction orders the rows of case c are
// measured against (power.NewFamily): around the oracle schedule of c's
// op (ops.CaseOp.Schedule), at c's row length (ops.CaseOp.FamilyCols:
// hidden, vocab; attn_decode: the longest KV cache).
func Family(c spec.Case) (*power.Family, error) {
	in, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return nil, fmt.Errorf("family: input dtype: %w", err)
	}
	if k, ok := all.Case(c.Op); ok {
		if cols, ok := k.FamilyCols(c.Shape); ok {
			return power.NewFamily(c.Op, cols, in, k.Schedule())
		}
	}
	return nil, fmt.Errorf("no schedule family for op %s (want one of %v)", c.Op, SensitiveOps)
}

// sensitiveInputs makes the batch of a case with Dist "sensitive": each
// row (item i) is, of at most sensitiveAttempts candidates, the one that
// shows the most alternatives of Family(c) that the row key's earlier
// draws of the chain have not shown (power.Family.RMSNorm or LogProb;
// ties: the most alternatives; the first such; a candidate that leaves
// none unshown stops the search):
//
//	candidate 0   the row of the normal draw of the case (same seed)
//	candidate a   the row re-drawn as the normal draw's row key
//	              i + a<<40 (tensor and σ of the item tensor)
//
// each nudged as boundary nudges it, rmsnorm by boundary.RMSNormRows,
// gemm by boundary.GEMMRow on the row's column (gemm.Column: the one
// output whose alternatives the row is measured on; none at an fp32
// output), logprob by boundary.LogProbRow in the compare dtype (a fp32
// compare: boundary.LogProbPeak), the target aimed at when i + seed is odd being
// one fp32 ulp to the odd side of the midpoint, else the midpoint itself:
// the side alternates with the seed, so consecutive draws of a scan (seed,
// seed+1) put every position on both sides, and a row shows a change of
// either sign in one of the two. Each nudged candidate is tried with its
// finest knob moved by each of knobVariants (input-dtype steps), each a
// candidate of its own. The shared tensors (w, target ids) are the normal
// draw's.
//
// The chain: a case with Draw = k >= 2 is draw k of a scan whose draws
// 1..k-1 were sensitive cases of seeds Seed-k+1..Seed-1 (Draw 1..k-1);
// row i targets the alternatives none of their rows i showed (Draw 0 or 1:
// none shown before). So row i's bits depend only on (Seed, Draw, row key
// i), never on the batch; the chain's sets are kept in memory
// (sensitiveChain), so a scan makes each earlier draw once; a large draw
// is kept on disk (sensitive_cache.go). A row costs at most
// sensitiveAttempts nudges (boundary.MaxEvals oracle row evaluations each)
// and sensitiveAttempts x len(knobVariants) family checks (for rmsnorm a
// knob step costs each distinct reduction a thread's partial and a
// combine, power.RMSNormCheck; for gemm each schedule the rest of the
// knob's chunk of the column's dot product, power.GEMMCheck; for logprob
// |Family| sums of the row).
func sensitiveInputs(c spec.Case) (*target.Batch, error) {
	b, _, err := sensitiveDraw(c)
	return b, err
}

// sensitiveDraw is sensitiveInputs with the alternatives each row shows.
func sensitiveDraw(c spec.Case) (*target.Batch, []power.Set, error) {
	g, err := newSensitiveGen(c, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("sensitive inputs: %w", err)
	}
	sets, _, err := g.fill()
	if err != nil {
		return nil, nil, fmt.Errorf("sensitive inputs: %w", err)
	}
	if g.rows != nil { // a token op's rows (RowPower reads their sets)
		_, in, _ := g.b.Kind()
		keepMeasured(g.b, *g.k.ItemRows(in), g.f, sets)
	}
	return g.b, sets, nil
}

// RowShows returns the alternatives of Family(c) that the rows of case c
// with row keys keys (items, each < the case's batch rows) show: of a
// sensitive case, its rows made for those keys alone (as sensitiveInputs
// makes them, with the chain of earlier draws for those keys); of any
// other case, its batch's rows (RowPower).
func RowShows(c spec.Case, keys []int) ([]power.Set, error) {
	if c.Dist != spec.DistSensitive {
		b, err := Of(c)
		if err != nil {
			return nil, err
		}
		f, err := Family(c)
		if err != nil {
			return nil, err
		}
		all, err := RowPower(c, b, f)
		if err != nil {
			return nil, err
		}
		sets := make([]power.Set, len(keys))
		for j, i := range keys {
			if i < 0 || i >= len(all) {
				return nil, fmt.Errorf("row shows: row key %d of %d rows", i, len(all))
			}
			sets[j] = all[i]
		}
		return sets, nil
	}
	for _, i := range keys {
		if i < 0 || i >= c.BatchRows() {
			return nil, fmt.Errorf("row shows: row key %d of %d rows", i, c.BatchRows())
		}
	}
	g, err := newSensitiveGen(c, keys)
	if err != nil {
		return nil, fmt.Errorf("sensitive inputs: %w", err)
	}
	sets, _, err := g.fill()
	return sets, err
}

// QueryShows returns, for each row key of keys of an attn_prefill case c,
// the alternatives of Family(c) that each row of that sequence shows (row
// position·Heads + head): of a sensitive case, its rows made for those
// keys alone, as sensitiveInputs makes them; of any other case, its
// batch's rows. RowShows's set of a key is the union of its rows'.
func QueryShows(c spec.Case, keys []int) ([][]power.Set, error) {
	if op := (attention.Prefill{}).Name(); c.Op != op {
		return nil, fmt.Errorf("query shows: op %s, want %s", c.Op, op)
	}
	for _, i := range keys {
		if i < 0 || i >= c.BatchRows() {
			return nil, fmt.Errorf("query shows: row key %d of %d sequences", i, c.BatchRows())
		}
	}
	if c.Dist != spec.DistSensitive {
		f, err := Family(c)
		if err != nil {
			return nil, err
		}
		b, err := Of(c)
		if err != nil {
			return nil, err
		}
		cmp, err := oracle.ParseDType(string(c.CompareDType()))
		if err != nil {
			return nil, fmt.Errorf("query shows: compare dtype: %w", err)
		}
		_, rows, err := prefillRowPower(b.Input.(*oracle.PrefillInput), f, cmp)
		if err != nil {
			return nil, fmt.Errorf("query shows: %w", err)
		}
		out := make([][]power.Set, len(keys))
		for j, i := range keys {
			out[j] = rows[i]
		}
		return out, nil
	}
	g, err := newSensitiveGen(c, keys)
	if err != nil {
		return nil, fmt.Errorf("sensitive inputs: %w", err)
	}
	if _, _, err := g.fill(); err != nil {
		return nil, err
	}
	return g.querySets, nil
}

// sensitiveGen makes the rows of one sensitive case.
type sensitiveGen struct {
	c    spec.Case // the case, dist normal
	draw int       // its Draw
	f    *power.Family
	b    *target.Batch // the normal draw's rows keys, replaced in place
	keys []int         // slot j of b holds row key keys[j]
	full bool          // keys are every row of the case's batch (the draw may be kept)
	// choices[j] is the candidate slot j took (fill)
	choices []choice
	// querySets[j] is, of an attn_prefill case, what each row of slot j's
	// sequence shows (row position·Heads + head; prefillSequence)
	querySets [][]power.Set
	cmp       oracle.DType
	k         ops.CaseOp
	rt        target.ItemTensor // a token op's item tensor
	rows      ops.SensitiveRows // a token op's rows (ops.Sensitive)
}

// isPrefill reports whether g makes an attn_prefill case's sequences
// (sensitive_prefill.go).
func (g *sensitiveGen) isPrefill() bool {
	_, ok := g.b.Input.(*oracle.PrefillInput)
	return ok
}

// newSensitiveGen starts the rows of case c with row keys keys (nil: all
// of c's rows): the normal draw of those items alone (tokenInputs), so a
// few rows of a large batch cost a few rows.
func newSensitiveGen(c spec.Case, keys []int) (*sensitiveGen, error) {
	f, err := Family(c)
	if err != nil {
		return nil, err
	}
	base := c
	base.Dist, base.Draw = spec.DistNormal, 0
	var b *target.Batch
	full := keys == nil
	if full {
		if b, err = Of(base); err != nil {
			return nil, err
		}
		keys = spec.Iota(base.BatchRows())
	} else {
		in, out, err := caseDTypes(base)
		if err != nil {
			return nil, err
		}
		b = &target.Batch{Op: c.Op, In: in, Out: out}
		if k, _ := all.Case(base.Op); k.Token() {
			err = tokenInputs(base, b, keys, false, nil)
		} else {
			err = attnInputs(base, b, keys, false)
		}
		if err != nil {
			return nil, err
		}
	}
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return nil, fmt.Errorf("compare dtype: %w", err)
	}
	k, in, err := b.Kind()
	if err != nil {
		return nil, err
	}
	g := &sensitiveGen{c: base, draw: c.Draw, f: f, b: b, keys: keys, full: full, cmp: cmp, k: k}
	if s, ok := k.(ops.Sensitive); ok && k.Token() { // attention's draw keeps its tensors in b
		g.rt = itemTensor(base)
		g.rows = s.SensitiveRows(base, in, keys, b.In, b.Out, cmp, f, Splitmix)
	}
	return g, nil
}

// fill replaces the rows of g.b by their sensitive rows and returns the
// alternatives each shows (in the order of g.keys) and, for a case of a
// chain (Draw >= 1), what each showed in draws 1..Draw (kept for the next
// draw). A case with Draw >= 2 first gets what its chain's earlier draws
// showed for those keys.
func (g *sensitiveGen) fill() (sets, shown []power.Set, err error) {
	keys := g.keys
	var prior []power.Set
	if g.draw >= 2 && !g.isPrefill() { // a prefill's rows take no prior (prefillSequence)
		var err error
		if prior, err = chainShown(g.c, g.draw, keys); err != nil {
			return nil, nil, err
		}
	}
	sets, kept, err := g.load(prior)
	if err != nil {
		return nil, nil, err
	}
	if !kept {
		if sets, err = g.search(prior); err != nil {
			return nil, nil, err
		}
		g.save(sets)
	} else if g.rows != nil {
		madeRows.put(chainKey(g.c, g.draw, g.draw), keys, func(j int) madeRow { return madeRow{g.choices[j], sets[j]} })
	}
	if g.draw >= 1 { // what the keys showed in draws 1..draw: the next draw's prior
		shown = sets
		if prior != nil {
			shown = make([]power.Set, len(sets))
			for j := range sets {
				shown[j] = power.Union(sets[j], prior[j])
			}
		}
		sensitiveChain.put(chainKey(g.c, g.draw, g.draw), keys, func(j int) power.Set { return shown[j] })
	}
	return sets, shown, nil
}

// search makes every row of g by row (prior[j]: what slot j's key showed
// before, nil for none) and returns the sets; a token op's row made
// before for this draw (madeRows) is rebuilt from its choice.
func (g *sensitiveGen) search(prior []power.Set) ([]power.Set, error) {
	keys := g.keys
	sets := make([]power.Set, len(keys))
	g.choices = make([]choice, len(keys))
	g.querySets = make([][]power.Set, len(keys))
	errs := make([]error, len(keys))
	made := chainKey(g.c, g.draw, g.draw) // the rows of this draw made before (madeRows)
	eachRow(len(keys), func(j int) {
		var p power.Set
		if prior != nil {
			p = prior[j]
		}
		if g.isPrefill() { // attn_prefill's sequences (sensitive_prefill.go)
			sets[j], g.querySets[j], errs[j] = g.prefillSequence(j)
			return
		}
		if g.rows == nil { // attn_decode's requests (sensitive_attn.go)
			sets[j], g.choices[j], errs[j] = g.decodeRequest(j, p)
			return
		}
		if m, ok := madeRows.get(made, keys[j]); ok { // made for another batch of this draw
			sets[j], g.choices[j], errs[j] = m.set, m.c, g.rebuild(j, m.c)
			return
		}
		rowsSearched.Add(1)
		sets[j], g.choices[j], errs[j] = g.row(j, p)
	})
	for j, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", keys[j], err)
		}
	}
	if g.rows != nil {
		madeRows.put(made, keys, func(j int) madeRow { return madeRow{g.choices[j], sets[j]} })
	}
	return sets, nil
}

// choice is the candidate a row took: re-draw a (0: the normal row) and
// knob step knobVariants[v].
type choice struct{ a, v uint8 }

// row picks the candidate of slot j (row key g.keys[j]; sensitiveInputs),
// writes it into g.b and returns the alternatives it shows and which
// candidate it is.
func (g *sensitiveGen) row(j int, prior power.Set) (power.Set, choice, error) {
	n := len(g.f.Alts)
	want := n
	if prior != nil {
		want = n - prior.Len()
	}
	var best []float32
	var bestSet power.Set
	var bestC choice
	bestNew, bestN := -1, -1
	for a := range sensitiveAttempts {
		x, k, err := g.candidate(j, a)
		if err != nil {
			return nil, choice{}, err
		}
		x0 := x[k]
		ch, err := g.rows.Check(x, j)
		if err != nil {
			return nil, choice{}, err
		}
		for v, step := range knobVariants {
			s := ch(k, boundary.Step(g.b.In, x0, step))
			shown, fresh := s.Len(), s.Len()
			if prior != nil {
				fresh = s.Minus(prior).Len()
			}
			if fresh > bestNew || fresh == bestNew && shown > bestN {
				best, bestSet, bestNew, bestN, bestC = slices.Clone(x), s, fresh, shown, choice{uint8(a), uint8(v)}
			}
			if bestNew == want {
				break
			}
		}
		if bestNew == want {
			break
		}
	}
	copy(g.slot(j), best)
	return bestSet, bestC, nil
}

// slot is the row of slot j in g.b: its item tensor's (ops.CaseOp.ItemRows).
func (g *sensitiveGen) slot(j int) []float32 {
	_, in, _ := g.b.Kind() // newSensitiveGen checked it
	w := g.k.ItemValues(in, -1)
	return (*g.k.ItemRows(in))[j*w : (j+1)*w]
}

// candidate returns candidate a of slot j, nudged, and the index of its
// finest knob. It reads the slot's normal row, so it runs before the slot
// is replaced.
func (g *sensitiveGen) candidate(j, a int) ([]float32, int, error) {
	i := g.keys[j]
	odd := (uint64(i)+g.c.Seed)%2 == 1
	row := g.slot(j)
	x := slices.Clone(row)
	if a > 0 {
		var err error
		x, err = fill(g.c, g.rt.ID, g.rt.Dist, g.b.In, g.rt.Scale, 1, len(row), func(int) uint64 { return uint64(i) + uint64(a)<<40 })
		if err != nil {
			return nil, 0, err
		}
	}
	if len(x) < gen.SensitiveMinCols {
		return nil, 0, fmt.Errorf("sensitive draw: a row of %d values has none to tune, want at least %d", len(x), gen.SensitiveMinCols)
	}
	g.rows.Nudge(x, j, odd)
	k := g.rows.Knob(x, j)
	if k < 0 || k >= len(x) {
		return nil, 0, fmt.Errorf("sensitive draw: knob %d of a row of %d values", k, len(x))
	}
	return x, k, nil
}

// rebuild writes slot j's row as choice c made it (row's result without
// the search).
func (g *sensitiveGen) rebuild(j int, c choice) error {
	if int(c.a) >= sensitiveAttempts || int(c.v) >= len(knobVariants) {
		return fmt.Errorf("candidate %d, knob step %d out of range", c.a, c.v)
	}
	x, k, err := g.candidate(j, int(c.a))
	if err != nil {
		return err
	}
	x[k] = boundary.Step(g.b.In, x[k], knobVariants[c.v])
	copy(g.slot(j), x)
	return nil
}

// knobVariants are the steps (input-dtype values) by which a nudged
// candidate's finest knob is moved, each a candidate of its own: the
// nudge puts the declared sum (and so rstd) at one place of its rounding
// class; a neighbour of it may sit at the class's edge and show the
// alternatives whose sum is one ulp off.
var knobVariants = []int{0, 1, -1, 2, -2, 3, -3, 4, -4}

// sensitiveChain keeps, per chain key of draw k, what each row key
// showed in draws 1..k (the union): a scan makes draw k+1 right after
// draw k, so each draw of the chain is made once.
var sensitiveChain rowMemo[power.Set]

// chainKey names draw k of the chain of c (a case of dist normal, its
// seed that of draw d): everything that decides its rows but the seed and
// the batch, and the chain's first seed.
func chainKey(c spec.Case, d, k int) string {
	c.Seed -= uint64(d - k)
	c.Rel = spec.RelParams{}
	c.Targets, c.Relation = nil, ""
	c.SetBatchRows(0)
	return fmt.Sprintf("%d %+v", k, c)
}

// chainShown returns, for each row key of keys, the alternatives it
// showed in draws 1..d-1 of the chain of c (dist normal, the seed of draw
// d), made (and kept) where not kept yet.
func chainShown(c spec.Case, d int, keys []int) ([]power.Set, error) {
	k := d - 1
	key := chainKey(c, d, k)
	sets := make([]power.Set, len(keys))
	var missing []int
	for j, i := range keys {
		if s, ok := sensitiveChain.get(key, i); ok {
			sets[j] = s
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return sets, nil
	}
	prev := c
	prev.Dist, prev.Seed, prev.Draw = spec.DistSensitive, c.Seed-1, k
	g, err := newSensitiveGen(prev, missing)
	if err != nil {
		return nil, fmt.Errorf("sensitive draw %d of the chain: %w", k, err)
	}
	_, made, err := g.fill() // keeps made under key
	if err != nil {
		return nil, fmt.Errorf("sensitive draw %d of the chain: %w", k, err)
	}
	for j, m := 0, 0; j < len(keys); j++ {
		if sets[j] == nil {
			sets[j], m = made[m], m+1
		}
	}
	return sets, nil
}

// RowPower returns, for each row of batch b of case c (rmsnorm, gemm,
// logprob or attn_decode, its values on the host; row i is item i), the
// alternatives of f the row shows in c's compare dtype
// (power.Family.RMSNorm; GEMM on the row's column gemm.Column, a lower
// bound of the row's; LogProb; of a decode request, the union of its
// heads' power.Family.Decode), rows checked in parallel. A whole
// sensitive batch of rmsnorm, gemm or logprob that this package made, its
// rows unchanged, is not measured again: its search's sets are read
// (sensitive_measured.go).
func RowPower(c spec.Case, b *target.Batch, f *power.Family) ([]power.Set, error) {
	k, in, err := b.Kind()
	if err != nil || k.Name() != c.Op {
		return nil, fmt.Errorf("row power: a %s batch without its rows on the host", c.Op)
	}
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return nil, fmt.Errorf("row power: compare dtype: %w", err)
	}
	s, ok := k.(ops.Sensitive)
	if p, isPrefill := in.(*oracle.PrefillInput); isPrefill && p.Q != nil { // attn_prefill's sequences (sensitive_prefill.go)
		sets, _, err := prefillRowPower(p, f, cmp)
		if err != nil {
			return nil, fmt.Errorf("row power: %w", err)
		}
		return sets, nil
	}
	if !ok || !k.Token() {
		d, ok := in.(*oracle.DecodeInput) // attn_decode's requests (sensitive_attn.go)
		if !ok || d.Q == nil {
			return nil, fmt.Errorf("row power: a %s batch without its rows on the host", c.Op)
		}
		sets, errs := decodeRowPower(d, f, cmp)
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("row power: %w", err)
		}
		return sets, nil
	}
	if *k.ItemRows(in) == nil {
		return nil, fmt.Errorf("row power: a %s batch without its rows on the host", c.Op)
	}
	n := k.Items(in)
	if c.Dist == spec.DistSensitive {
		if sets, ok := measuredSets(b, *k.ItemRows(in), f, n); ok {
			return sets, nil // measured by the draw's search
		}
	}
	keys := spec.Iota(n)
	rows := s.SensitiveRows(c, in, keys, b.In, b.Out, cmp, f, Splitmix)
	sets := make([]power.Set, n)
	errs := make([]error, n)
	eachRow(n, func(i int) { sets[i], errs[i] = rows.Shows(i) })
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("row power: row %d: %w", i, err)
		}
	}
	return sets, nil
}
