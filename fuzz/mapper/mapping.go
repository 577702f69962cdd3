package mapper

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Sweep says one dimension of a finding's case that may decide its drift,
// and how to classify one value of it.
type Sweep struct {
	// Dim is the swept dimension: "rows" (tokens of rmsnorm, gemm,
	// logprob), "batch" (decode requests), "seqs" (prefill sequences),
	// "kv" (the KV length of a prefill), "position" (where the watched
	// item sits in a batch) or "pad" (the size a batch is padded to).
	Dim string
	// Onset is the value of Dim in the minimal case where the drift showed.
	Onset int
	// At says what the other dimensions are held at, e.g. "batch=300";
	// empty when nothing else varies.
	At string
	// Values, when set, are the values to sweep; else sweepValues(Dim, Onset).
	Values []int
	// Far is the largest value of Dim the campaign reached (the case as
	// first found); a periodic rule is checked there (driftmap.Options.Far).
	Far int
	// Classify runs the finding's target(s) at value v of Dim and returns
	// a class: the digest of the watched item's output bits and fp32 taps
	// (which bits a batch of v gives), or a verdict: agree / differ for
	// path parity, crash / runs for a crash finding. A target that crashes at v gives the class crash.
	Classify func(v int) (string, error)

	determinism bool // map only where the runs differ (driftmap.Options.Determinism)
	panel       bool // random draws classify a panel of items (panelClass)
}

// SweepFor returns the first sweep of finding f (sweepsFor), or nil when
// its relation has no dimension to sweep (log-prob parity: its findings
// are misuses, explained in their message).
func SweepFor(ctx context.Context, f *spec.Finding, given ...target.Target) (*Sweep, error) {
	_, sws, err := resolvedSweeps(ctx, f, given)
	if err != nil || len(sws) == 0 {
		return nil, err
	}
	return sws[0], nil
}

// resolvedSweeps resolves finding f's targets (relate.Resolve: given, else
// the registered targets the case names) and returns them with f's sweeps
// (sweepsFor).
func resolvedSweeps(ctx context.Context, f *spec.Finding, given []target.Target) ([]target.Target, []*Sweep, error) {
	ts, err := relate.Resolve(f.Case.Targets, given)
	if err != nil {
		return nil, nil, err
	}
	sws, err := sweepsFor(ctx, f, ts)
	return ts, sws, err
}

// sweepsFor returns the sweeps of the dimensions finding f's relation
// varies, in the order a map prefers them:
//
//	batch invariance  the items of a batch (the watched item in a batch of
//	                  v copies of itself), then its position (the watched
//	                  item at position v of a batch of Rel.Batch items, as
//	                  the relation builds it) when Rel.Batch > 1
//	padding           the items, then the padded size (the case's batch
//	                  padded to v items with its filler; the watched item's
//	                  bits)
//	oracle parity,    the items
//	determinism       (determinism: where the two runs of each value differ)
//	path parity       prefill: the KV length of one sequence (kvClass), else
//	                  the items; both targets run, the class says whether
//	                  they agree
//	log-prob parity   none (its findings are misuses)
//
// For a crash finding each class is crash or runs.
func sweepsFor(ctx context.Context, f *spec.Finding, ts []target.Target) ([]*Sweep, error) {
	c := f.Case
	var sws []*Sweep
	switch c.Relation {
	case spec.RelLogProbParity:
		return nil, nil
	case spec.RelPathParity:
		if k, ok := all.Case(c.Op); ok && k.PathNext() != "" { // a prefill against decode
			k := &kvClass{ctx: ctx, c: c, ts: ts}
			sws = append(sws, &Sweep{Dim: "kv", Onset: c.Shape.SeqLen, Classify: k.classify})
			break
		}
		if ts[1].Info().Op != ts[0].Info().Op {
			return nil, nil
		}
		sw, err := itemsSweep(ctx, f, ts)
		if err != nil {
			return nil, err
		}
		sws = append(sws, sw)
	default:
		items, err := itemsSweep(ctx, f, ts)
		if err != nil {
			return nil, err
		}
		items.determinism = c.Relation == spec.RelDeterminism
		items.panel = true
		sws = append(sws, items)
		switch {
		case c.Relation == spec.RelBatchInvariance && c.Rel.Batch > 1:
			p, err := positionSweep(ctx, f, ts[0])
			if err != nil {
				return nil, err
			}
			if p != nil {
				sws = append(sws, p)
			}
		case c.Relation == spec.RelPadding && c.Rel.Pad > c.BatchRows():
			p, err := padSweep(ctx, f, ts[0])
			if err != nil {
				return nil, err
			}
			if p != nil {
				sws = append(sws, p)
			}
		}
	}
	for _, sw := range sws {
		if f.Kind == spec.KindCrash {
			sw.Classify = crashClass(sw.Classify)
		} else {
			sw.Classify = orCrash(sw.Classify)
		}
	}
	return sws, nil
}

// watched returns the case's inputs and a batch of its watched item alone:
// the item of the finding's first diverging row.
func watched(f *spec.Finding) (full, one *target.Batch, item int, err error) {
	full, err = inputs.Of(f.Case)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("drift map: %w", err)
	}
	item = f.Row / full.RowsPerItem()
	if item < 0 || item >= full.Items() {
		item = 0
	}
	if f.Case.Relation == spec.RelBatchInvariance && f.Case.Rel.Row >= 0 && f.Case.Rel.Row < full.Items() {
		item = f.Case.Rel.Row
	}
	one, err = inputs.Gather(full, []int{item})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("drift map: the watched item: %w", err)
	}
	return full, one, item, nil
}

// itemsSweep sweeps the items of a batch: the watched item in a batch of
// v copies of itself, only its rows computed (path parity: every row, on
// both targets).
func itemsSweep(ctx context.Context, f *spec.Finding, ts []target.Target) (*Sweep, error) {
	c := f.Case
	_, one, _, err := watched(f)
	if err != nil {
		return nil, err
	}
	dim := c.Op.ItemsWord()
	sw := &Sweep{Dim: dim, Onset: max(c.BatchRows(), c.Rel.Batch, c.Rel.Pad)}
	if f.Original != nil {
		sw.Far = max(f.Original.BatchRows(), f.Original.Rel.Batch, f.Original.Rel.Pad)
	}
	many := &grown{top: max(slices.Max(sweepValues(dim, sw.Onset)), sw.Far), values: one.ItemValues(), build: func(n int) (*target.Batch, error) {
		return inputs.View(one, make([]int, n))
	}}
	copies := func(v int) (*target.Batch, error) {
		if v < 1 {
			return nil, fmt.Errorf("drift map: %s %d", dim, v)
		}
		if err := inputs.Budget(c, spec.SatMul(v, one.ItemValues())); err != nil {
			return nil, err
		}
		return many.first(v)
	}
	if c.Relation == spec.RelPathParity {
		sw.Classify = func(v int) (string, error) {
			b, err := copies(v)
			if err != nil {
				return "", err
			}
			return agreement(ctx, ts, b, inputs.ItemRows(b, 0, v))
		}
		return sw, nil
	}
	sw.Classify = func(v int) (string, error) {
		b, err := copies(v)
		if err != nil {
			return "", err
		}
		return bits(ctx, ts[0], b, inputs.ItemRows(b, 0, 1))
	}
	return sw, nil
}

// positionSweep sweeps where the watched item sits in the relation's other
// batch: at position v of a batch of Rel.Batch items (items 0..Batch-1 with
// the watched item and item v swapped, as batch invariance builds it), the
// class is the bits of the watched item there. Every position is swept up
// to 256 of them, else positions 0..63, those within 64 of the finding's,
// the first and last of every 32 and the last 64 (gaps between classes
// are bisected). It returns nil when a batch of Rel.Batch items holds more
// than mapElements input values.
func positionSweep(ctx context.Context, f *spec.Finding, t target.Target) (*Sweep, error) {
	c := f.Case
	full, _, row, err := watched(f)
	if err != nil {
		return nil, err
	}
	B := c.Rel.Batch
	if spec.SatMul(B, full.ItemValues()) > mapElements {
		return nil, nil
	}
	ids := spec.Iota(B)
	if row >= B {
		ids[0] = row
		row = 0
	}
	src, _, err := inputs.Items(c, full, ids) // item row is at position row
	if err != nil {
		return nil, fmt.Errorf("drift map of position: %w", err)
	}
	sw := &Sweep{Dim: "position", Onset: c.Rel.Position, At: fmt.Sprintf("%s=%d", c.Op.ItemsWord(), B),
		Values: sweptPositions(B, c.Rel.Position)}
	sw.Classify = func(v int) (string, error) {
		if v < 0 || v >= B {
			return "", fmt.Errorf("drift map: position %d outside a batch of %d", v, B)
		}
		order := spec.Iota(B)
		order[row], order[v] = order[v], order[row]
		b, err := inputs.Gather(src, order)
		if err != nil {
			return "", err
		}
		return bits(ctx, t, b, inputs.ItemRows(b, v, v+1))
	}
	return sw, nil
}

// mapElements bounds the input values of one batch a position or padding
// sweep builds: larger batches are not swept, and the map's range says so.
const mapElements = 1 << 23

// sweptPositions returns the positions of a batch of n a position sweep
// takes (positionSweep), ascending.
func sweptPositions(n, at int) []int {
	if n <= 256 {
		return spec.Iota(n)
	}
	var ps []int
	for p := 0; p < n; p++ {
		if p < 64 || (p >= at-64 && p <= at+64) || p%32 == 0 || p%32 == 31 || p >= n-64 {
			ps = append(ps, p)
		}
	}
	return ps
}

// padSweep sweeps the size the case's batch is padded to (with the case's
// filler), from its own items up to at most mapElements input values: the
// class is the bits of the watched item. The batch padded to v is the first
// v items of the batch padded to the largest size swept, which is built
// once (again only when a later probe goes beyond it).
func padSweep(ctx context.Context, f *spec.Finding, t target.Target) (*Sweep, error) {
	c := f.Case
	full, _, item, err := watched(f)
	if err != nil {
		return nil, err
	}
	n := full.Items()
	fits := func(v int) bool { return spec.SatMul(v, full.ItemValues()) <= mapElements }
	sw := &Sweep{Dim: "pad", Onset: c.Rel.Pad, At: fmt.Sprintf("%s=%d", c.Op.ItemsWord(), n)}
	for _, v := range sweepValues("pad", c.Rel.Pad) {
		if v >= n && fits(v) {
			sw.Values = append(sw.Values, v)
		}
	}
	if len(sw.Values) == 0 {
		return nil, nil
	}
	if f.Original != nil && fits(f.Original.Rel.Pad) {
		sw.Far = f.Original.Rel.Pad
	}
	var big *target.Batch
	sw.Classify = func(v int) (string, error) {
		if v < n || !fits(v) {
			return "", fmt.Errorf("drift map: pad %d below the case's %d items or above %d input values", v, n, mapElements)
		}
		if big == nil || big.Items() < v {
			top := max(v, sw.Values[len(sw.Values)-1], sw.Far)
			if big, err = inputs.PadCase(c, full, top, c.Rel.Filler); err != nil {
				return "", err
			}
		}
		b, err := inputs.FirstItems(big, v)
		if err != nil {
			return "", err
		}
		return bits(ctx, t, b, inputs.ItemRows(b, item, item+1))
	}
	return sw, nil
}

// heldValues bounds the input values of the batch a drift map keeps for
// its sweep (grown): above it each value builds a batch of its own.
const heldValues = 1 << 25

// grown answers a sweep's batch of v items with the first v items
// (inputs.FirstItems, no copy) of one batch built once: at max(v, top) items when
// that holds at most heldValues input values, else at v, and again only
// when a later value is larger. build(n) makes the batch of n items, and
// the batch of v items must be the first v items of build(n) for every
// n >= v (copies of one item, a panel repeated cyclically, a padded batch).
type grown struct {
	top    int // the largest value the sweep is expected to reach
	values int // the input values of one item
	build  func(n int) (*target.Batch, error)
	big    *target.Batch
}

func (g *grown) first(v int) (*target.Batch, error) {
	if g.big == nil || g.big.Items() < v {
		n := v
		if spec.SatMul(g.top, g.values) <= heldValues {
			n = max(v, g.top)
		}
		b, err := g.build(n)
		if err != nil {
			return nil, err
		}
		g.big = b
	}
	return inputs.FirstItems(g.big, v)
}

// hostRun runs t on the rows of b and returns the output on the host,
// its device memory released.
func hostRun(ctx context.Context, t target.Target, b *target.Batch, rows []int) (*target.Output, error) {
	out, err := t.Run(ctx, b, rows)
	if err != nil {
		return nil, err
	}
	err = out.ToHost()
	out.Release()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// bits runs t on the rows of b and returns the digest of their output and
// tap bits.
func bits(ctx context.Context, t target.Target, b *target.Batch, rows []int) (string, error) {
	out, err := hostRun(ctx, t, b, rows)
	if err != nil {
		return "", err
	}
	return digest(out), nil
}

// agreement runs both targets on the rows of b and says whether they agree:
// driftmap.Agree (outputs and taps bitwise equal) or driftmap.Differ (the
// outputs differ, or they agree and the fp32 intermediates differ, where
// the targets expose them).
func agreement(ctx context.Context, ts []target.Target, b *target.Batch, rows []int) (string, error) {
	var ds [2]string
	for i, t := range ts[:2] {
		d, err := bits(ctx, t, b, rows)
		if err != nil {
			return "", err
		}
		ds[i] = d
	}
	if ds[0] != ds[1] {
		return driftmap.Differ, nil
	}
	return driftmap.Agree, nil
}

// crashClass turns classify into a crash map's classifier: driftmap.Crash
// where the target crashes (its error wraps target.ErrTargetCrashed),
// driftmap.Runs where it does not.
func crashClass(classify func(int) (string, error)) func(int) (string, error) {
	return func(v int) (string, error) {
		_, err := classify(v)
		switch {
		case errors.Is(err, target.ErrTargetCrashed):
			return driftmap.Crash, nil
		case err != nil:
			return "", err
		}
		return driftmap.Runs, nil
	}
}

// orCrash is classify with a crash of the target as the class
// driftmap.Crash instead of an error.
func orCrash(classify func(int) (string, error)) func(int) (string, error) {
	return func(v int) (string, error) {
		d, err := classify(v)
		if errors.Is(err, target.ErrTargetCrashed) {
			return driftmap.Crash, nil
		}
		return d, err
	}
}

// kvRows is the number of (sequence, head) rows a KV-length sweep compares
// at each length: a tile edge changes an output only when a later tile
// raises the running max or reorders a sum, which one row shows with a
// probability of a few percent, so one sequence is not enough.
const kvRows = 256

// kvFirstRows is how many of a KV length's rows kvClass compares first: a
// length past a tile edge changes the fp32 intermediates of nearly every
// row, so it is decided Differ on these, and the other rows run only when
// they agree. The class is the same as comparing every row at once (Differ
// when any row differs); a map of the tile-48 control (kv 1..100) runs
// about a third of the rows it would (TestTile48MapWork).
const kvFirstRows = 32

// kvClass runs both targets of a prefill path-parity case on sequences of
// v tokens (enough of them for kvRows rows) and says whether the last
// position of every sequence agrees or not (agreement: on kvFirstRows rows
// first, then on the others when those agree). The sequences are the first v tokens of
// sequences drawn once at the longest length swept (a token's values depend
// only on its sequence and position), so the sweep generates inputs once. A
// prefill against a decode target runs the relation itself.
//
// The verdict is driftmap.Agree or driftmap.Differ (the outputs differ, or
// they agree and the fp32 intermediates do not).
type kvClass struct {
	ctx  context.Context
	c    spec.Case
	ts   []target.Target
	long *target.Batch // sequences of maxLen tokens
}

func (k *kvClass) classify(v int) (string, error) {
	if k.long == nil || k.long.Input.(*oracle.PrefillInput).SeqLen < v {
		kc := k.c
		kc.Data = nil
		kc.Rel = spec.RelParams{}
		kc.Shape.SeqLen = max(v, 2*k.c.Shape.SeqLen+2)
		kc.Shape.Seqs = max(1, (kvRows+kc.Shape.Heads-1)/max(1, kc.Shape.Heads))
		b, err := inputs.Of(kc)
		if err != nil {
			return "", err
		}
		k.long = b
	}
	b := truncate(k.long, v)
	if k.ts[1].Info().Op != k.ts[0].Info().Op {
		kc := k.c
		kc.Shape.SeqLen, kc.Shape.Seqs = v, b.Input.(*oracle.PrefillInput).Seqs
		pp, err := relate.ByName(spec.RelPathParity)
		if err != nil {
			return "", err
		}
		f, err := pp.Check(k.ctx, kc, b, k.ts)
		if err != nil {
			return "", err
		}
		if f == nil {
			return driftmap.Agree, nil
		}
		return driftmap.Differ, nil
	}
	kb, in, err := b.Kind()
	if err != nil {
		return "", err
	}
	rows := kb.Path(in).Rows // the last position of each sequence
	first := min(kvFirstRows, len(rows))
	d, err := agreement(k.ctx, k.ts, b, rows[:first])
	if err != nil || d == driftmap.Differ || first == len(rows) {
		return d, err
	}
	return agreement(k.ctx, k.ts, b, rows[first:])
}

// truncate returns a prefill batch of the first v tokens of every sequence
// of b.
func truncate(b *target.Batch, v int) *target.Batch {
	p := *b.Input.(*oracle.PrefillInput)
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
	return &target.Batch{Op: b.Op, In: b.In, Out: b.Out, Input: &p}
}

// digest is the class label (driftmap.Digest) of an output's value bits
// and tap bits.
func digest(o *target.Output) string {
	d := driftmap.NewDigest()
	for _, vs := range [][]float32{o.Values, o.Taps} {
		d.Float32s(vs)
		d.Write([]byte{0xff})
	}
	return d.Label()
}

// sweepValues is the one rule for the values a drift map sweeps:
// driftmap.Values around the onset plus, for the decode batch dimension,
// the batch sizes where decode heuristics switch: around multiples of the
// H200's 132 SMs and powers of two up to 1024 (a split heuristic's
// threshold is requests x heads against the SMs, so it can sit far above a
// minimal case's single request). Sorted, without repeats.
func sweepValues(dim string, onset int) []int {
	vs := driftmap.Values(dim, onset)
	if dim == "batch" {
		for _, m := range []int{target.SMs, 2 * target.SMs} {
			vs = append(vs, m-1, m, m+1)
		}
		for p := 8; p <= 1024; p *= 2 {
			vs = append(vs, p-1, p, p+1)
		}
	}
	slices.Sort(vs)
	return slices.Compact(vs)
}
