package explain

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Infer searches the schedule space of t's op for the schedules that
// reproduce t's bits on probe batches at value v of dimension dim (the
// other dimensions as in case c):
//
//  1. build the probes (probe's doc comment) and run t on them;
//  2. drop schedules whose order at this shape equals an earlier one's
//     (orderKey: same split bounds and effective tile, same chunks, warp or
//     cross order that cannot differ);
//  3. run every remaining schedule on the first probe batch (on its first
//     row only when more than pruneAbove orders remain) and keep those
//     that give t's bits there;
//  4. confirm the survivors on every probe row, and group those that give
//     equal bits;
//  5. when more than one schedule is left and the outputs are bf16 or
//     fp16, run the target and the survivors on probes with fp32 outputs
//     and keep those that match there too (Target.Refined).
func Infer(ctx context.Context, t target.Target, c spec.Case, dim string, v int, seed uint64) (*Target, error) {
	info := t.Info()
	ps, err := probes(c, dim, v, seed)
	if err != nil {
		return nil, err
	}
	space, err := Space(info.Op, ps[0].b.In)
	if err != nil {
		return nil, err
	}
	res := &Target{Name: info.Name, Space: len(space)}
	want := make([][]sig, len(ps))
	for i, p := range ps {
		out, err := runRows(ctx, t, p.b, p.rows)
		if err != nil {
			return nil, err
		}
		res.Taps = res.Taps || out.taps
		want[i] = out.rows
		res.ProbeRows += len(p.rows)
	}
	var lens []int
	for _, p := range ps {
		lens = append(lens, p.lens...)
	}
	lens = distinctLens(lens)
	// step 2: one schedule per order
	var groups []*group
	byKey := map[string]*group{}
	for _, s := range space {
		k := orderKey(s, lens)
		if g, ok := byKey[k]; ok && k != "" {
			g.members = append(g.members, fmt.Sprint(s))
			continue
		}
		g := &group{rep: s, members: []string{fmt.Sprint(s)}}
		groups = append(groups, g)
		if k != "" {
			byKey[k] = g
		}
	}
	res.Ran = len(groups)
	// step 3: the first probe batch; with many orders, its first row
	// alone first
	first := ps[0]
	if len(groups) > pruneAbove && len(first.rows) > 1 {
		first.rows = first.rows[:1]
		res.Pruned = true
	}
	distinct := map[string]bool{}
	var alive []*group
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := runRows(ctx, target.OracleWith(info.Op, g.rep), first.b, first.rows)
		if err != nil {
			return nil, err
		}
		var k strings.Builder
		ok := true
		for r, row := range out.rows {
			k.WriteString(row.key(res.Taps))
			ok = ok && row.equal(want[0][r], res.Taps)
		}
		distinct[k.String()] = true
		if ok {
			alive = append(alive, g)
		}
	}
	res.Distinct, res.Survivors, res.FirstRows = len(distinct), len(alive), len(first.rows)
	// step 4: every probe row
	kept, err := confirm(ctx, info.Op, alive, ps, want, res.Taps)
	if err != nil {
		return nil, err
	}
	res.Matches = matchesOf(kept)
	// step 5: with fp32 outputs, when the output dtype may hide the rest
	if len(res.Matches) > 0 && (len(res.Matches) > 1 || len(kept) > 1) && c.Out != spec.FP32 {
		c32 := c
		c32.Out = spec.FP32
		refined, why, err := refine(ctx, t, c32, dim, v, seed, kept)
		if err != nil {
			return nil, err
		}
		res.Refined = why
		if len(refined) > 0 {
			res.Matches = matchesOf(refined)
		}
	}
	return res, nil
}

// group is a set of schedules with the same operation order at the probed
// shape (rep runs for all of them); bits is what rep gave on the probes.
type group struct {
	rep     oracle.Schedule
	members []string
	bits    string
}

// confirm returns the groups whose representative gives want on every row
// of ps, each with its bits.
func confirm(ctx context.Context, op spec.Op, gs []*group, ps []probe, want [][]sig, taps bool) ([]*group, error) {
	var kept []*group
	for _, g := range gs {
		h := sha256.New()
		h.Write([]byte(g.bits))
		ok := true
		for i, p := range ps {
			out, err := runRows(ctx, target.OracleWith(op, g.rep), p.b, p.rows)
			if err != nil {
				return nil, err
			}
			for r := range out.rows {
				if !out.rows[r].equal(want[i][r], taps) {
					ok = false
				}
				h.Write([]byte(out.rows[r].key(taps)))
			}
			if !ok {
				break
			}
		}
		if ok {
			kept = append(kept, &group{rep: g.rep, members: g.members, bits: hex.EncodeToString(h.Sum(nil))})
		}
	}
	return kept, nil
}

// matchesOf gathers groups with equal bits into matches, in order.
func matchesOf(gs []*group) []Match {
	idx := map[string]int{}
	var ms []Match
	for _, g := range gs {
		i, ok := idx[g.bits]
		if !ok {
			i = len(ms)
			idx[g.bits] = i
			ms = append(ms, Match{})
		}
		ms[i].Schedules = append(ms[i].Schedules, g.members...)
		ms[i].Orders++
	}
	return ms
}

// refine runs the target and the kept groups on probes of case c (fp32
// outputs) and returns the groups that match there too.
func refine(ctx context.Context, t target.Target, c spec.Case, dim string, v int, seed uint64, kept []*group) ([]*group, string, error) {
	ps, err := probes(c, dim, v, seed+1000)
	if err != nil {
		return nil, "", err
	}
	want := make([][]sig, len(ps))
	taps := false
	for i, p := range ps {
		out, err := runRows(ctx, t, p.b, p.rows)
		if errors.Is(err, target.ErrUnsupported) {
			return nil, "unsupported", nil
		}
		if err != nil {
			return nil, "", err
		}
		taps = taps || out.taps
		want[i] = out.rows
	}
	r, err := confirm(ctx, t.Info().Op, kept, ps, want, taps)
	if err != nil {
		return nil, "", err
	}
	if len(r) == 0 {
		return nil, "no match", nil
	}
	for _, g := range r { // keep the first probes' grouping too
		for _, k := range kept {
			if k.rep == g.rep {
				g.bits = k.bits + g.bits
			}
		}
	}
	return r, "yes", nil
}

// pruneAbove is the number of orders above which step 3 runs one probe
// row instead of a batch.
const pruneAbove = 64

// sig is one row's output and tap bits.
type sig struct{ vals, taps []uint32 }

func (s sig) equal(o sig, taps bool) bool {
	if len(s.vals) != len(o.vals) {
		return false
	}
	for i := range s.vals {
		if s.vals[i] != o.vals[i] {
			return false
		}
	}
	if !taps {
		return true
	}
	if len(s.taps) != len(o.taps) {
		return false
	}
	for i := range s.taps {
		if s.taps[i] != o.taps[i] {
			return false
		}
	}
	return true
}

func (s sig) key(taps bool) string {
	var b []byte
	for _, v := range s.vals {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if taps {
		b = append(b, 0xff)
		for _, v := range s.taps {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	return string(b)
}

type rowsOut struct {
	rows []sig
	taps bool
}

// runRows runs t on rows of b and returns each row's bits; taps is true
// when t exposes fp32 taps.
func runRows(ctx context.Context, t target.Target, b *target.Batch, rows []int) (*rowsOut, error) {
	out, err := t.Run(ctx, b, rows)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	if err := out.ToHost(); err != nil {
		return nil, err
	}
	if len(out.Values) != len(rows)*out.Cols {
		return nil, fmt.Errorf("target %s returned %d values for %d rows of %d", t.Info().Name, len(out.Values), len(rows), out.Cols)
	}
	ro := &rowsOut{taps: out.TapCols > 0 && len(out.Taps) == len(rows)*out.TapCols}
	for i := range rows {
		var s sig
		for _, x := range out.Values[i*out.Cols : (i+1)*out.Cols] {
			s.vals = append(s.vals, math.Float32bits(x))
		}
		if ro.taps {
			for _, x := range out.Taps[i*out.TapCols : (i+1)*out.TapCols] {
				s.taps = append(s.taps, math.Float32bits(x))
			}
		}
		ro.rows = append(ro.rows, s)
	}
	return ro, nil
}
