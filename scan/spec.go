package scan

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// ErrBadSpec is wrapped by every error of a scan spec that cannot run
// anywhere (a bad range, dimension, shape or distribution): bad input,
// not a failure of the target.
var ErrBadSpec = errors.New("bad scan")

// DefaultDists are the draws of a scan that names none: normal values and
// values nudged next to rounding boundaries (where a reduction order
// change flips output bits).
var DefaultDists = []spec.Dist{spec.DistNormal, spec.DistBoundary}

// Normalize fills a scan spec's defaults and checks it:
//
//	dim       items (default), pad, position, kv (attn_decode only)
//	from, to  from >= 1 (position: >= 0), to >= from; pad: from >= real;
//	          position: positions from..to-1 of a batch of to items
//	dists     DefaultDists when empty; each a known distribution, once
//	in, out   bf16 when empty (logprob: out fp32)
//	eps       1e-6 for rmsnorm when zero
//	shape     the inner sizes of the op (spec.OpInfo.Reads past its batch
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
	if len(s.Dists) == 0 {
		s.Dists = slices.Clone(DefaultDists)
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
	if s.Op == spec.OpLogProb {
		s.Out = spec.FP32
	}
	if s.Op == spec.OpRMSNorm && s.Eps == 0 {
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
		if s.Op != spec.OpAttnDecode {
			return bad("the kv dimension scans attn_decode, not %s", s.Op)
		}
		if s.Shape.Rows < 1 {
			return bad("kv scan: rows (requests) %d, want >= 1", s.Shape.Rows)
		}
	}
	// the op's dimensions past its batch dimension (spec.OpInfo.Reads); a
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

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
