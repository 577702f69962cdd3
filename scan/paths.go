package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/npy"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// PathSpec is a path-parity scan: an attention prefill target against a
// decode target over the KV length. At KV length v every sequence of the
// batch holds v tokens; the prefill's rows of each sequence's last
// position (the query that attends to all v) are compared bitwise with a
// decode request holding the sequence as its cache (the same query), in
// the output dtype and, where both give them, the fp32 taps.
type PathSpec struct {
	Prefill, Decode string // target names: attn_prefill, attn_decode
	From, To        int    // KV lengths (From 1 when 0)
	// Seqs is the number of sequences (decode requests) of each step; 1
	// when 0.
	Seqs                    int
	Heads, KVHeads, HeadDim int
	In, Out                 spec.DType // bf16 when empty
	Dists                   []spec.Dist
	Seed                    uint64
	GenVersion              int
	NoTaps                  bool
}

// normalize fills ps's defaults and checks it.
func (ps PathSpec) normalize() (PathSpec, error) {
	bad := func(format string, a ...any) (PathSpec, error) {
		return ps, fmt.Errorf("%w: path scan: "+format, append([]any{ErrBadSpec}, a...)...)
	}
	if ps.From == 0 {
		ps.From = 1
	}
	if ps.Seqs == 0 {
		ps.Seqs = 1
	}
	if ps.In == "" {
		ps.In = spec.BF16
	}
	if ps.Out == "" {
		ps.Out = spec.BF16
	}
	if ps.GenVersion == 0 {
		ps.GenVersion = spec.GeneratorVersion
	}
	if len(ps.Dists) == 0 {
		ps.Dists = slices.Clone(DefaultDists)
	}
	switch {
	case ps.From < 1 || ps.To < ps.From:
		return bad("KV lengths %d..%d, want 1 <= from <= to", ps.From, ps.To)
	case ps.Seqs < 1:
		return bad("%d sequences, want >= 1", ps.Seqs)
	case ps.Heads < 1 || ps.KVHeads < 1 || ps.HeadDim < 1 || ps.Heads%ps.KVHeads != 0:
		return bad("heads %d, kv heads %d, head dim %d: want each >= 1, heads a multiple of kv heads (set them, or use a model profile)",
			ps.Heads, ps.KVHeads, ps.HeadDim)
	}
	for _, d := range ps.Dists {
		if !slices.Contains(spec.Dists, d) {
			return bad("unknown distribution %q (want one of %v)", d, spec.Dists)
		}
	}
	return ps, nil
}

// newPaths fills sc for s, a path scan (target "PREFILL,DECODE", in
// either order): s as PathSpec.ScanSpec states it, normalized.
func (sc *scanner) newPaths(s spec.ScanSpec) error {
	ps, _ := PathSpecOf(s)
	if s.Dim != "" && s.Dim != spec.ScanItems && s.Dim != spec.ScanKV {
		return fmt.Errorf("%w: --dim %s: a path scan sweeps the KV length (kv)", ErrBadSpec, s.Dim)
	}
	ps, err := ps.normalize()
	if err != nil {
		return err
	}
	pre, err := target.Lookup(ps.Prefill)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	dec, err := target.Lookup(ps.Decode)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	from, next := pathOps()
	if pre.Info().Op == next && dec.Info().Op == from {
		ps.Prefill, ps.Decode, pre, dec = ps.Decode, ps.Prefill, dec, pre
	}
	if pre.Info().Op != from || dec.Info().Op != next {
		return fmt.Errorf("%w: targets %s (%s) and %s (%s): a path scan takes an %s and an %s target",
			ErrBadSpec, ps.Prefill, pre.Info().Op, ps.Decode, dec.Info().Op, from, next)
	}
	if sc.dt, err = oracle.ParseDType(string(ps.Out)); err != nil {
		return fmt.Errorf("%w: output dtype: %w", ErrBadSpec, err)
	}
	sc.s, sc.t, sc.dec = ps.ScanSpec(), pre, dec
	return nil
}

// pathDiffer is the class of a KV length where the paths differ on a
// draw; pathAgree where they agree.
const (
	pathAgree  = "agree"
	pathDiffer = "differ"
)

// pathDraw runs draw k of a path scan: the largest batch (Seqs sequences
// of To tokens) is generated once, and for every KV length v both targets
// run on its sequences cut to their first v tokens: held in two adapters
// that take steps of KV cuts (pathCuts), else each length's two batches
// sent (pathStep). A value's class is pathAgree or pathDiffer.
func (sc *scanner) pathDraw(ctx context.Context, k int) ([]string, error) {
	ps, _ := PathSpecOf(sc.s)
	from, _ := pathOps()
	c := spec.Case{Version: spec.CaseVersion, GenVersion: ps.GenVersion, Op: from, Relation: spec.RelPathParity,
		Targets: []string{ps.Prefill, ps.Decode}, In: ps.In, Out: ps.Out, Dist: sc.draws[k], Seed: ps.Seed + uint64(k),
		Shape: spec.Shape{Seqs: ps.Seqs, SeqLen: ps.To, Heads: ps.Heads, KVHeads: ps.KVHeads, HeadDim: ps.HeadDim}}
	b, err := inputs.Of(c)
	if err != nil {
		return nil, fmt.Errorf("%w: inputs: %w", ErrBadSpec, err)
	}
	if sc.opt.SaveInputs != "" {
		if err := saveInputs(sc.opt.SaveInputs, c, b.Input.(*oracle.PrefillInput)); err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
	}
	if pre, dec := heldPaths(sc.t, sc.dec); pre != nil {
		return sc.pathCuts(ctx, pre, dec, b, c.Dist, ps.NoTaps)
	}
	for _, t := range []target.Target{sc.t, sc.dec} {
		if et, ok := t.(*external.Target); ok {
			et.DropSpares() // every length's batches go to the first processes
		}
	}
	cls := make([]string, len(sc.values))
	for i, v := range sc.values {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("scan: kv = %d: %w", v, err)
		}
		d, err := pathStep(ctx, sc.t, sc.dec, b, v, sc.dt, ps.NoTaps)
		if err != nil {
			return nil, fmt.Errorf("scan: draw %s, kv = %d: %w", c.Dist, v, err)
		}
		sc.res.Batches += 2
		sc.res.RowsCompared += int64(ps.Seqs * ps.Heads)
		cls[i] = pathAgree
		if d {
			cls[i] = pathDiffer
		}
		sc.step()
	}
	return cls, nil
}

// pathStep runs prefill and decode at KV length v on b's sequences cut to
// their first v tokens and reports whether a compared row differs: the
// prefill's rows of its op's Path (the last position of each sequence,
// every head) against the decode of Path.Of (each sequence's last token
// against its KV cache).
func pathStep(ctx context.Context, pre, dec target.Target, b *target.Batch, v int, dt oracle.DType, noTaps bool) (bool, error) {
	k, in, err := b.Kind()
	if err != nil {
		return false, err
	}
	p := attention.CutPrefill(in.(*oracle.PrefillInput), v)
	path := k.Path(p)
	rows := path.Rows
	x, err := pre.Run(ctx, b.With(p), rows)
	if err != nil {
		return false, fmt.Errorf("prefill %s: %w", pre.Info().Name, err)
	}
	defer x.Release()
	d, err := path.Of()
	if err != nil {
		return false, err
	}
	y, err := dec.Run(ctx, (&target.Batch{Op: path.Next, In: b.In, Out: b.Out}).With(d), nil)
	if err != nil {
		return false, fmt.Errorf("decode %s: %w", dec.Info().Name, err)
	}
	defer y.Release()
	if len(x.Rows) != len(rows) || len(y.Rows) != len(rows) {
		return false, fmt.Errorf("prefill gave %d rows and decode %d, want %d each", len(x.Rows), len(y.Rows), len(rows))
	}
	return pathDiffers(x, y, dt, noTaps)
}

// pathDiffers reports whether a row of prefill output x differs from the
// same row of decode output y (rows in the same order): the bits in the
// output dtype dt and, unless noTaps, the fp32 taps where both give the
// same number of them. The one compare of a path scan, whether the rows
// came back (pathStep) or their digests (pathCuts).
func pathDiffers(x, y *target.Output, dt oracle.DType, noTaps bool) (bool, error) {
	every := spec.Iota(len(x.Rows))
	if x.TapCols != y.TapCols {
		noTaps = true // taps compare only where both give the same ones
	}
	diff, err := differing(x, y, every, every, dt, noTaps)
	return len(diff) > 0, err
}

// saveInputs writes the inputs of draw c (its prefill batch p) under dir,
// in a folder named by the draw's distribution and seed
// (dir/normal-seed1/): q.npy (seqs x tokens x heads x head_dim), k.npy
// and v.npy (seqs x tokens x kv_heads x head_dim), float32 arrays holding
// the input values exactly (each is a value of the input dtype, widened),
// and case.json, the draw as a case (its dtypes, seed and shape).
func saveInputs(dir string, c spec.Case, p *oracle.PrefillInput) error {
	d := filepath.Join(dir, fmt.Sprintf("%s-seed%d", c.Dist, c.Seed))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("save the inputs: %w", err)
	}
	for _, t := range []struct {
		name  string
		heads int
		data  []float32
	}{{"q", p.Heads, p.Q}, {"k", p.KVHeads, p.K}, {"v", p.KVHeads, p.V}} {
		if err := npy.Write(filepath.Join(d, t.name+".npy"), []int{p.Seqs, p.SeqLen, t.heads, p.HeadDim}, t.data); err != nil {
			return fmt.Errorf("save the inputs: %w", err)
		}
	}
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("save the inputs: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(d, "case.json"), append(js, '\n')); err != nil {
		return fmt.Errorf("save the inputs: %w", err)
	}
	return nil
}

// Ranges writes ascending values as ranges: "49..64, 97, 100..128".
func Ranges(vs []int) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(vs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d..%d", vs[i], vs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// pathOps are the ops of a path scan: from, the op whose batches have a
// path on another op (ops.CaseOp.PathNext: attn_prefill), and next, that
// op (attn_decode); both "" when no op has one.
func pathOps() (from, next spec.Op) {
	for _, k := range all.Cases {
		if n := k.PathNext(); n != "" {
			return k.Name(), n
		}
	}
	return "", ""
}
