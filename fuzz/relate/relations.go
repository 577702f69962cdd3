package relate

import (
	"context"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func compareDType(c spec.Case) (oracle.DType, error) {
	dt, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return 0, fmt.Errorf("case compare dtype: %w", err)
	}
	return dt, nil
}

// batchInvariance: item Rel.Row of the case computed in the case's batch
// (X), alone, in a batch of Rel.Batch items at Rel.Position (Y), and in a
// permutation of X (Rel.PermSeed) must give the same bits. Y holds items
// 0..Batch-1 with the watched item and item Position swapped; every row Y
// or the permutation shares with X is compared, not only the watched one.
type batchInvariance struct{}

func (batchInvariance) Name() string   { return spec.RelBatchInvariance }
func (batchInvariance) Ops() []spec.Op { return spec.Ops }
func (batchInvariance) Targets() int   { return 1 }

func (batchInvariance) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	t := ts[0]
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	n, row := b.Items(), c.Rel.Row
	if row < 0 || row >= n {
		return nil, fmt.Errorf("batch invariance: watched item %d of a batch of %d", row, n)
	}
	x, err := execute(ctx, t, b, spec.Iota(n), fmt.Sprintf("the case's batch of %d", n))
	if err != nil {
		return nil, err
	}
	defer x.release()
	// On a device (x's output lives there) every batch and its compares are
	// queued before the first verdict is waited for, so a check waits for
	// the device once, not once a batch; the first finding in the order
	// below is the verdict, as when each batch waits for its own. On the
	// host each batch is checked before the next runs.
	queue := x.out.Device != nil
	var started []func() (*spec.Finding, error)
	finish := func() (*spec.Finding, error) { // every started compare is waited for
		var f *spec.Finding
		var err error
		for _, wait := range started {
			if g, e := wait(); f == nil && err == nil {
				f, err = g, e
			}
		}
		started = nil
		return f, err
	}
	defer finish()
	// fail returns err unless a batch queued before it gives a finding or
	// error first (the order of the checks decides, as on the host).
	fail := func(err error) (*spec.Finding, error) {
		if f, ferr := finish(); f != nil || ferr != nil {
			return f, ferr
		}
		return nil, err
	}
	try := func(ids []int, what string) (*spec.Finding, error) {
		g, uids, err := inputs.Items(c, b, ids)
		if err != nil {
			return fail(fmt.Errorf("batch invariance: %w", err))
		}
		o, err := execute(ctx, t, g, uids, what)
		if err != nil {
			return fail(err)
		}
		ra, rb := shared(x, o)
		wait := startDiffer(ctx, x, o, ra, rb, dt, 0)
		started = append(started, func() (*spec.Finding, error) {
			defer o.release()
			return wait()
		})
		if queue {
			return nil, nil
		}
		return finish()
	}
	if n > 1 {
		if f, err := try([]int{row}, fmt.Sprintf("item %d alone", row)); f != nil || err != nil {
			return f, err
		}
	}
	if B, pos := c.Rel.Batch, c.Rel.Position; B > 0 {
		if pos < 0 || pos >= B {
			return fail(fmt.Errorf("batch invariance: position %d outside a batch of %d", pos, B))
		}
		if err := inputs.Budget(c, spec.SatMul(B, b.ItemValues())); err != nil {
			return fail(fmt.Errorf("batch invariance: a batch of %d: %w", B, err))
		}
		ids := spec.Iota(B)
		if row < B {
			ids[row], ids[pos] = ids[pos], ids[row]
		} else {
			ids[pos] = row
		}
		if f, err := try(ids, fmt.Sprintf("a batch of %d with item %d at position %d", B, row, pos)); f != nil || err != nil {
			return f, err
		}
	}
	if n > 1 {
		if f, err := try(inputs.Permutation(n, c.Rel.PermSeed), fmt.Sprintf("the batch of %d permuted (seed %d)", n, c.Rel.PermSeed)); f != nil || err != nil {
			return f, err
		}
	}
	return finish()
}

// padding: the case's batch padded with filler items to Rel.Pad items
// (Rel.Filler: zeros, normal, nan, huge, copy) must give the same bits on
// every real row; filler rows are not compared, but NaN or huge filler that
// leaks into a real row shows there.
type padding struct{}

func (padding) Name() string   { return spec.RelPadding }
func (padding) Ops() []spec.Op { return spec.Ops }
func (padding) Targets() int   { return 1 }

func (padding) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	t := ts[0]
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	n := b.Items()
	if c.Rel.Pad < n {
		return nil, fmt.Errorf("padding: pad %d is below the case's %d items", c.Rel.Pad, n)
	}
	if err := inputs.Budget(c, spec.SatMul(c.Rel.Pad, b.ItemValues())); err != nil {
		return nil, fmt.Errorf("padding: a batch of %d: %w", c.Rel.Pad, err)
	}
	x, err := execute(ctx, t, b, spec.Iota(n), fmt.Sprintf("the case's batch of %d", n))
	if err != nil {
		return nil, err
	}
	defer x.release()
	p, err := inputs.PadCase(c, b, c.Rel.Pad, c.Rel.Filler)
	if err != nil {
		return nil, err
	}
	uids := spec.Iota(c.Rel.Pad)
	for i := n; i < len(uids); i++ {
		uids[i] = -1
	}
	filler := c.Rel.Filler
	if filler == "" {
		filler = "zeros"
	}
	o, err := execute(ctx, t, p, uids, fmt.Sprintf("the batch padded to %d with %s filler", c.Rel.Pad, filler))
	if err != nil {
		return nil, err
	}
	defer o.release()
	ra, rb := shared(x, o)
	return differ(ctx, x, o, ra, rb, dt, 0)
}

// oracleParity: the target equals the oracle running the target's declared
// schedule bit for bit on every row (OracleFor); a target that declares no
// schedule is held to its ULPBound against the op's oracle target.
type oracleParity struct{}

func (oracleParity) Name() string   { return spec.RelOracleParity }
func (oracleParity) Ops() []spec.Op { return spec.Ops }
func (oracleParity) Targets() int   { return 1 }

func (oracleParity) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	t := ts[0]
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	var bound uint64
	ref, err := target.OracleFor(t)
	if t.Info().Schedule == "" {
		if ref, err = target.Lookup(target.OracleName(c.Op)); err != nil {
			return nil, err
		}
		bound = t.Info().ULPBound
	} else if err != nil {
		return nil, fmt.Errorf("oracle parity: %w", err)
	}
	n := b.Items()
	if bound == 0 {
		if g := DeviceReference(t); g != nil {
			return oracleParityOnDevice(ctx, c, b, t, g, ref, dt)
		}
	}
	o, err := execute(ctx, ref, b, spec.Iota(n), oracleWords(t, ref))
	if err != nil {
		return nil, err
	}
	defer o.release()
	x, err := execute(ctx, t, b, spec.Iota(n), "the target")
	if err != nil {
		return nil, err
	}
	defer x.release()
	rows := spec.Iota(b.Rows())
	return differ(ctx, x, o, rows, rows, dt, bound)
}

// oracleWords names the oracle a target's oracle parity compares it with,
// as the finding's message says it: "the oracle with the declared schedule
// S" for a target that declares S, else "the op's oracle NAME (the target
// declares no schedule; held within B ulps)" (", compared bitwise" for a
// bound of 0), never a schedule the target did not declare.
func oracleWords(t, ref target.Target) string {
	info := t.Info()
	if info.Schedule != "" {
		return "the oracle with the declared schedule " + ref.Info().Schedule
	}
	if info.ULPBound == 0 {
		return fmt.Sprintf("the op's oracle %s (the target declares no schedule; compared bitwise)", ref.Info().Name)
	}
	unit := "ulps"
	if info.ULPBound == 1 {
		unit = "ulp"
	}
	return fmt.Sprintf("the op's oracle %s (the target declares no schedule; held within %d %s)", ref.Info().Name, info.ULPBound, unit)
}

// oracleParityOnDevice is oracle parity of t against g, t's declared
// schedule computed exactly on t's device, with g checked against the CPU
// oracle cpu on a sample of rows first (checkReference): a reference that
// disagrees with the CPU is its own finding, and then t gets no verdict.
func oracleParityOnDevice(ctx context.Context, c spec.Case, b *target.Batch, t, g, cpu target.Target, dt oracle.DType) (*spec.Finding, error) {
	n := b.Items()
	o, err := execute(ctx, g, b, spec.Iota(n), "the device reference with the declared schedule "+g.Info().Schedule)
	if err != nil {
		return nil, err
	}
	defer o.release()
	if f, err := checkReference(ctx, c, b, o, cpu); f != nil || err != nil {
		return f, err
	}
	x, err := execute(ctx, t, b, spec.Iota(n), "the target")
	if err != nil {
		return nil, err
	}
	defer x.release()
	rows := spec.Iota(b.Rows())
	return differ(ctx, x, o, rows, rows, dt, 0)
}

// pathParity: two targets that must agree give the same bits. Targets of
// the same op run the case's batch and compare every row, except attention
// prefill, whose rows compare at the last position of every sequence (the
// query that attends to the whole sequence: the one where a tile or split
// boundary shows first; the KV lengths below it are the drift map's sweep),
// which keeps the cost linear in the sequence length. A prefill target
// against a decode target compares the last position of every sequence of
// the prefill with a decode request holding that sequence as its KV cache
// (oracle.Decode with one split is bitwise the prefill row of the last
// position).
type pathParity struct{}

func (pathParity) Name() string   { return spec.RelPathParity }
func (pathParity) Ops() []spec.Op { return spec.Ops }
func (pathParity) Targets() int   { return 2 }

// runRows runs t on the given rows of b.
func runRows(ctx context.Context, t target.Target, b *target.Batch, rows []int, what string) (*run, error) {
	out, err := t.Run(ctx, b, rows)
	if err != nil {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("%s: %w", what, err)}
	}
	if !shapeOK(out, len(rows), b.Cols()) {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("%s: output has %d rows (%d values), want %d rows of %d: %w",
			what, len(out.Rows), len(out.Values), len(rows), b.Cols(), target.ErrTargetCrashed)}
	}
	return &run{what: what, target: t, batch: b, uids: spec.Iota(b.Items()), out: out}, nil
}

func (pathParity) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	n := b.Items()
	opA, opB := ts[0].Info().Op, ts[1].Info().Op
	k, in, err := b.Kind()
	if err != nil {
		return nil, err
	}
	path := k.Path(in)
	if opA == opB && path.Rows != nil {
		rows := path.Rows
		x, err := runRows(ctx, ts[0], b, rows, ts[0].Info().Name+" ("+path.What+")")
		if err != nil {
			return nil, err
		}
		defer x.release()
		y, err := runRows(ctx, ts[1], b, rows, ts[1].Info().Name+" ("+path.What+")")
		if err != nil {
			return nil, err
		}
		defer y.release()
		return differ(ctx, x, y, rows, rows, dt, 0)
	}
	if opA == opB {
		x, err := execute(ctx, ts[0], b, spec.Iota(n), ts[0].Info().Name+" on the case's batch")
		if err != nil {
			return nil, err
		}
		defer x.release()
		y, err := execute(ctx, ts[1], b, spec.Iota(n), ts[1].Info().Name+" on the case's batch")
		if err != nil {
			return nil, err
		}
		defer y.release()
		rows := spec.Iota(b.Rows())
		return differ(ctx, x, y, rows, rows, dt, 0)
	}
	if opA != b.Op || path.Next == "" || opB != path.Next {
		return nil, fmt.Errorf("path parity: no path from %s to %s (same op, or prefill then decode)", opA, opB)
	}
	next, err := path.Of()
	if err != nil {
		return nil, err
	}
	db := (&target.Batch{Op: path.Next, In: b.In, Out: b.Out}).With(next)
	ra := path.Rows
	rb := spec.Iota(len(ra))
	x, err := runRows(ctx, ts[0], b, ra, path.FromWhat)
	if err != nil {
		return nil, err
	}
	defer x.release()
	y, err := execute(ctx, ts[1], db, spec.Iota(n), path.NextWhat)
	if err != nil {
		return nil, err
	}
	defer y.release()
	return differ(ctx, x, y, ra, rb, dt, 0)
}

// logprobParity: the token log-probs of two paths (a training path and an
// inference path) equal bitwise in the declared dtype (Case.Compare) on the
// declared positions (Rel.Mask; empty means every row). Two misuses of the
// comparison itself are reported as findings of kind "misuse", not as
// drift:
//
//   - comparing in a dtype wider than a path's own output dtype (fp32 when
//     the training path produces bf16): the differences vanish when both
//     are rounded to that dtype, so they are rounding noise;
//   - comparing positions a path never reported (an engine that zero-fills
//     the log-probs it did not compute, Output.Filled): the mismatch is
//     spurious; the mask must list the reported positions.
type logprobParity struct{}

func (logprobParity) Name() string   { return spec.RelLogProbParity }
func (logprobParity) Ops() []spec.Op { return []spec.Op{logprob.Op{}.Name()} }
func (logprobParity) Targets() int   { return 2 }

func (logprobParity) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(logprobParity{}.Ops(), ts[1].Info().Op) {
		return nil, fmt.Errorf("logprob parity: target %s runs %s", ts[1].Info().Name, ts[1].Info().Op)
	}
	n := b.Items()
	mask := c.Rel.Mask
	if len(mask) == 0 {
		mask = spec.Iota(n)
	}
	for _, m := range mask {
		if m < 0 || m >= n {
			return nil, fmt.Errorf("logprob parity: mask position %d outside %d rows", m, n)
		}
	}
	a, err := execute(ctx, ts[0], b, spec.Iota(n), ts[0].Info().Name)
	if err != nil {
		return nil, err
	}
	defer a.release()
	o, err := execute(ctx, ts[1], b, spec.Iota(n), ts[1].Info().Name)
	if err != nil {
		return nil, err
	}
	defer o.release()
	diffs, filled, err := compareOutputs(a.out, o.out, mask, mask, dt)
	if err != nil {
		return nil, err
	}
	if len(filled) > 0 || len(diffs) > 0 {
		// the misuse checks below compare on the host: one value per row
		if err := a.out.ToHost(); err != nil {
			return nil, err
		}
		if err := o.out.ToHost(); err != nil {
			return nil, err
		}
	}
	if len(filled) > 0 {
		pa, pb := make([]int, len(filled)), make([]int, len(filled))
		for i, p := range filled {
			pa[i], pb[i] = p[0], p[1]
		}
		if fd := target.CompareHost(a.out, o.out, pa, pb, dt); len(fd) > 0 {
			f, err := mismatchFinding(a, o, fd, dt, false, len(mask))
			if err != nil {
				return nil, err
			}
			who := ts[0].Info().Name
			if len(filledSet(o.out)) > 0 {
				who = ts[1].Info().Name
			}
			f.Kind = spec.KindMisuse
			f.Message = fmt.Sprintf("%d declared position(s) were never reported by %s: it zero-filled them, so the difference at position %d (%s vs %s) is spurious, not drift; declare only the reported positions in rel.mask. ",
				len(fd), who, f.Row, f.A.Dec, f.B.Dec) + f.Message
			return f, nil
		}
	}
	if len(diffs) > 0 {
		coarse := a.out.DType
		if narrower(o.out.DType, coarse) {
			coarse = o.out.DType
		}
		if narrower(coarse, dt) {
			pa, pb := make([]int, len(diffs)), make([]int, len(diffs))
			for i, d := range diffs {
				pa[i], pb[i] = d.PosA, d.PosB
			}
			if len(target.CompareHost(a.out, o.out, pa, pb, coarse)) == 0 {
				f, err := mismatchFinding(a, o, diffs, dt, false, len(mask))
				if err != nil {
					return nil, err
				}
				f.Kind = spec.KindMisuse
				f.Message = fmt.Sprintf("compared in %s, but the log-probs of the path are %s (the training dtype): the %d differing positions are equal once both are rounded to %s, so the differences are rounding noise, not drift; compare in %s. ",
					dt, coarse, len(diffs), coarse, coarse) + f.Message
				return f, nil
			}
		}
		return mismatchFinding(a, o, diffs, dt, false, len(mask))
	}
	return nil, nil
}

// narrower reports whether a has fewer significand bits than b.
func narrower(a, b oracle.DType) bool {
	prec := map[oracle.DType]int{oracle.BF16: 8, oracle.FP16: 11, oracle.FP32: 24}
	return prec[a] < prec[b]
}

// determinism: the same call on the same batch twice gives the same bits on
// every row.
type determinism struct{}

func (determinism) Name() string   { return spec.RelDeterminism }
func (determinism) Ops() []spec.Op { return spec.Ops }
func (determinism) Targets() int   { return 1 }

func (determinism) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	n := b.Items()
	x, err := execute(ctx, ts[0], b, spec.Iota(n), "first call")
	if err != nil {
		return nil, err
	}
	defer x.release()
	y, err := execute(ctx, ts[0], b, spec.Iota(n), "second call")
	if err != nil {
		return nil, err
	}
	defer y.release()
	rows := spec.Iota(b.Rows())
	return differ(ctx, x, y, rows, rows, dt, 0)
}
