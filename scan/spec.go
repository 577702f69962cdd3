package scan

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// ErrBadSpec is wrapped by every error of a scan spec that cannot run
// anywhere (a bad range, dimension, shape or distribution): bad input,
// not a failure of the target.
var ErrBadSpec = errors.New("bad scan")

// DefaultDists are the draws of a scan that names none: normal values and
// values nudged next to rounding boundaries (where a reduction order
// change flips output bits). Ops with a sensitive draw
// (inputs.SensitiveOps) take SensitiveDists instead.
var DefaultDists = []spec.Dist{spec.DistNormal, spec.DistBoundary}

// SensitiveDists are the default draws of scans of an op with a family
// (rmsnorm, gemm, logprob, attn_decode):
// normal values and sensitive ones (boundary rows re-drawn until they show
// most of the family of reduction orders, fuzz's sensitive draw).
var SensitiveDists = []spec.Dist{spec.DistNormal, spec.DistSensitive}

// Default power settings of a scan of an op with a family
// (inputs.SensitiveOps): the target share and the most draws in all.
const (
	DefaultPower    = 0.99
	DefaultMaxDraws = 8
)

// Normalize fills a scan spec's defaults and checks it:
//
//	dim       items (default), pad, position, kv (attn_decode only),
//	          neighbour (attention), chunk and prefix (attn_prefill),
//	          page (attn_decode)
//	from, to  from >= 1 (position: >= 0), to >= from; pad: from >= real;
//	          position: positions from..to-1 of a batch of to items;
//	          chunk: to <= seq_len (a chunk of the whole prompt at most);
//	          prefix: to < seq_len (a query past the prefix)
//	rows      kv, page: the decode requests (page: 1 when zero); chunk,
//	          prefix: seqs, the prompts (1 when zero)
//	dists     DefaultDists when empty (SensitiveDists for rmsnorm, gemm,
//	          logprob and attn_decode over items, pad or position); each a
//	          known distribution, once
//	power     the target power, a share in [0, 1] (0: not measured; only
//	          ops with a family; < 0: DefaultPower for ops with a family,
//	          else 0); max_draws DefaultMaxDraws when power > 0
//	in, out   bf16 when empty (logprob: out fp32)
//	eps       1e-6 for rmsnorm when zero
//	shape     the inner sizes of the op (its record's Reads past its batch
//	          dimension) must be >= 1: rmsnorm hidden; gemm hidden (K) and n;
//	          logprob vocab; attention seq_len (prefill) or kv (decode, but
//	          for a kv scan), heads, kv_heads and head_dim
//
// The spec's Op must be set (the target's op).
func Normalize(s spec.ScanSpec) (spec.ScanSpec, error) {
	bad := func(format string, a ...any) (spec.ScanSpec, error) {
		return s, fmt.Errorf("%w: "+format, append([]any{ErrBadSpec}, a...)...)
	}
	if s.Target == "" {
		return bad("no target")
	}
	if !slices.Contains(spec.Ops, s.Op) {
		return bad("unknown op %q", s.Op)
	}
	if s.Dim == "" {
		s.Dim = spec.ScanItems
	}
	if !slices.Contains(spec.ScanDims, s.Dim) {
		return bad("unknown dimension %q (want one of %v)", s.Dim, spec.ScanDims)
	}
	if s.GenVersion == 0 {
		s.GenVersion = spec.GeneratorVersion
	}
	if s.GenVersion < 1 || s.GenVersion > spec.GeneratorVersion {
		return bad("scan made with generator version %d, this build has versions 1 to %d", s.GenVersion, spec.GeneratorVersion)
	}
	sensitive := hasFamily(s)
	if len(s.Dists) == 0 {
		s.Dists = slices.Clone(DefaultDists)
		if sensitive && cheapSensitive(s) {
			s.Dists = slices.Clone(SensitiveDists)
		}
	}
	if s.Power < 0 { // the default: DefaultPower where the op has a family
		s.Power = 0
		if sensitive && cheapSensitive(s) {
			s.Power = DefaultPower
		}
	}
	switch {
	case s.Power > 1:
		return bad("power %g, want a share in [0, 1] (0: not measured)", s.Power)
	case s.Power > 0 && !sensitive:
		return bad("power: op %s over %s has no family of reduction orders (want one of %v, over items, pad or position)", s.Op, s.Dim, inputs.SensitiveOps)
	case s.MaxDraws < 0:
		return bad("max draws %d, want >= 0", s.MaxDraws)
	}
	if s.Power > 0 && s.MaxDraws == 0 {
		s.MaxDraws = DefaultMaxDraws
	}
	if slices.Contains(s.Dists, spec.DistSensitive) && !sensitive {
		return bad("distribution sensitive: op %s over %s has none (want one of %v, over items, pad or position)", s.Op, s.Dim, inputs.SensitiveOps)
	}
	for i, d := range s.Dists {
		if !slices.Contains(spec.Dists, d) {
			return bad("unknown distribution %q (want one of %v)", d, spec.Dists)
		}
		if slices.Contains(s.Dists[:i], d) {
			return bad("distribution %s named twice", d)
		}
	}
	if s.In == "" {
		s.In = spec.BF16
	}
	if s.Out == "" {
		s.Out = spec.BF16
	}
	if k, ok := all.Case(s.Op); ok { // the op's own output dtype (log-probs: fp32)
		if out, err := oracle.ParseDType(string(s.Out)); err == nil && k.OutDType(out) != out {
			s.Out = spec.DType(k.OutDType(out).String())
		}
	}
	if info, _ := s.Op.Info(); info.Eps && s.Eps == 0 {
		s.Eps = 1e-6
	}
	lo := 1
	if s.Dim == spec.ScanPosition {
		lo = 0
	}
	if s.From == 0 && lo == 1 {
		s.From = 1
	}
	switch {
	case s.From < lo:
		return bad("from %d, want >= %d", s.From, lo)
	case s.To < s.From:
		return bad("to %d below from %d", s.To, s.From)
	}
	switch s.Dim {
	case spec.ScanPad:
		if s.Real == 0 {
			s.Real = 1
		}
		if s.Real < 1 || s.From < s.Real {
			return bad("padding %d real items from %d: want 1 <= real <= from", s.Real, s.From)
		}
	case spec.ScanPosition:
		if s.To < 2 || s.From > s.To-1 {
			return bad("positions %d..%d of a batch of %d: want from <= to-1 and to >= 2", s.From, s.To-1, s.To)
		}
		if s.Watch < 0 || s.Watch >= s.To {
			return bad("watched item %d outside a batch of %d", s.Watch, s.To)
		}
	case spec.ScanKV:
		if !sweeps(s.Op, spec.ScanKV) {
			return bad("the kv dimension scans attn_decode, not %s", s.Op)
		}
		if s.Shape.Rows < 1 {
			return bad("kv scan: rows (requests) %d, want >= 1", s.Shape.Rows)
		}
	case spec.ScanNeighbour:
		if !sweeps(s.Op, spec.ScanNeighbour) {
			return bad("the neighbour dimension scans attention (attn_prefill, attn_decode), not %s", s.Op)
		}
	case spec.ScanChunk:
		if !sweeps(s.Op, spec.ScanChunk) {
			return bad("the chunk dimension scans attn_prefill, not %s", s.Op)
		}
		if s.Shape.Seqs == 0 {
			s.Shape.Seqs = 1
		}
		if s.Shape.Seqs < 1 {
			return bad("chunk scan: %d prompts, want >= 1", s.Shape.Seqs)
		}
		if s.Shape.SeqLen >= 1 && s.To > s.Shape.SeqLen {
			return bad("chunk scan: chunks up to %d of a prompt of %d tokens: want to <= seq_len", s.To, s.Shape.SeqLen)
		}
	case spec.ScanPrefix:
		if err := checkPrefix(&s); err != nil {
			return s, err
		}
	case spec.ScanPage:
		if !sweeps(s.Op, spec.ScanPage) {
			return bad("the page dimension scans attn_decode, not %s", s.Op)
		}
		if s.Shape.Rows == 0 {
			s.Shape.Rows = 1
		}
		if s.Shape.Rows < 1 {
			return bad("page scan: rows (requests) %d, want >= 1", s.Shape.Rows)
		}
		if s.To > 1024 {
			return bad("page scan: page size %d, want <= 1024", s.To)
		}
	}
	// the op's dimensions past its batch dimension (its record's Reads); a
	// kv scan sets kv itself
	info, _ := s.Op.Info()
	for _, d := range info.Reads[1:] {
		if d.Name == spec.DimKV.Name && s.Dim == spec.ScanKV {
			continue
		}
		if v := d.Get(s.Shape); v < 1 {
			return s, fmt.Errorf("%w: %s %s = %d, want >= 1 (set it, or use a model profile)", ErrBadSpec, s.Op, d.Name, v)
		}
	}
	return s, nil
}

// sweeps reports whether a scan of op may sweep dim, one of the op
// package's own dimensions (ops.CaseOp.ScanDims).
func sweeps(op spec.Op, dim string) bool {
	k, ok := all.Case(op)
	return ok && slices.Contains(k.ScanDims(), dim)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
