package scan

import (
	"fmt"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/profile"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Skip is a scan Expand left out: one of a profile's several shapes that
// cannot run here, and why.
type Skip struct {
	Scan spec.ScanSpec
	Err  error
}

// Expand is the scans a command line's s stands for, with model profile p
// (nil: none) filling what s leaves zero, then each checked as Run checks
// it (nothing runs):
//
//	a target's, a user kernel's  one scan per shape of the op
//	                             (Profile.Shapes; gemm: one per
//	                             projection): hidden, n, vocab, heads,
//	                             kv_heads, head_dim; to p's max_tokens
//	                             but for a kv scan
//	a path scan's                the first attn_prefill shape's heads,
//	                             kv_heads and head_dim
//	a model route's              hidden, n (intermediate), vocab, heads,
//	                             kv_heads, head_dim
//	an op package's target's     every dimension of the op by name
//	                             (Profile.Dim); to p's max_tokens
//
// and but for an op package's target the dtypes: in and out p's
// (logprob's out stays fp32), eps p's for rmsnorm. Of several scans, one
// that cannot run is left out and returned in skipped; a single scan that
// cannot run, or none of several, is the error.
func Expand(s spec.ScanSpec, p *profile.Profile, opt Options) (scans []spec.ScanSpec, skipped []Skip, err error) {
	if p != nil {
		if scans, err = withProfile(s, p, opt.Kernel); err != nil {
			return nil, nil, err
		}
	} else {
		scans = []spec.ScanSpec{s}
	}
	var runnable []spec.ScanSpec
	for _, sp := range scans {
		_, err := newScanner(sp, opt)
		switch {
		case err == nil:
			runnable = append(runnable, sp)
		case len(scans) == 1:
			return nil, nil, err
		default:
			skipped = append(skipped, Skip{Scan: sp, Err: err})
		}
	}
	if len(runnable) == 0 {
		return nil, skipped, fmt.Errorf("%w: none of the profile's %d shapes can run", ErrBadSpec, len(scans))
	}
	return runnable, skipped, nil
}

// withProfile is Expand's filling of s from p.
func withProfile(s spec.ScanSpec, p *profile.Profile, k *Kernel) ([]spec.ScanSpec, error) {
	set := func(dst *int, v int) {
		if *dst == 0 {
			*dst = v
		}
	}
	sub := subjectOf(s, k)
	if sub == opSubject {
		n, _, err := NormalizeOp(spec.ScanSpec{Target: s.Target, To: 1})
		if err != nil {
			return nil, err
		}
		dims := map[string]int{}
		for name := range n.Shape.Dims {
			if _, given := s.Shape.Dims[name]; given {
				continue
			}
			v, ok := p.Dim(name)
			if !ok {
				return nil, fmt.Errorf("%w: profile %s has no %s for %s", ErrBadSpec, p.Name, name, n.Op)
			}
			dims[name] = v
		}
		for name, v := range s.Shape.Dims {
			dims[name] = v
		}
		s.Shape.Dims = dims
		set(&s.To, p.MaxTokens)
		return []spec.ScanSpec{s}, nil
	}
	op, err := opOf(s, sub, k)
	if err != nil {
		return nil, err
	}
	s.In = cmpOr(s.In, p.DType)
	if k, ok := all.Case(op); !ok || !ops.FixedOut(k) { // log-prob writes fp32
		s.Out = cmpOr(s.Out, p.DType)
	}
	if info, _ := op.Info(); info.Eps && s.Eps == 0 {
		s.Eps = p.Eps
	}
	if sub == modelSubject {
		fillShape(&s.Shape, spec.Shape{Hidden: p.Hidden, N: p.Intermediate, Vocab: p.Vocab,
			Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim})
		return []spec.ScanSpec{s}, nil
	}
	if sub != pathSubject && s.Dim != spec.ScanKV {
		set(&s.To, p.MaxTokens)
	}
	var out []spec.ScanSpec
	for _, in := range p.Shapes(op) {
		t := s
		fillShape(&t.Shape, in)
		out = append(out, t)
		if sub == pathSubject {
			break // one shape: the path scan's heads
		}
	}
	if len(out) == 0 {
		out = []spec.ScanSpec{s}
	}
	return out, nil
}

// fillShape sets each of sh's hidden, n, vocab, heads, kv heads and head
// dim that is 0 to from's.
func fillShape(sh *spec.Shape, from spec.Shape) {
	for _, f := range []struct {
		dst *int
		v   int
	}{{&sh.Hidden, from.Hidden}, {&sh.N, from.N}, {&sh.Vocab, from.Vocab}, {&sh.Heads, from.Heads}, {&sh.KVHeads, from.KVHeads}, {&sh.HeadDim, from.HeadDim}} {
		if *f.dst == 0 {
			*f.dst = f.v
		}
	}
}

// opOf is the op a scan of subject sub runs: a path scan's attn_prefill,
// a model route's model, a user kernel's manifest's, else its target's.
func opOf(s spec.ScanSpec, sub subject, k *Kernel) (spec.Op, error) {
	switch sub {
	case pathSubject:
		from, _ := pathOps()
		return from, nil
	case modelSubject:
		return external.ModelOp, nil
	case kernelSubject:
		if k == nil {
			return "", fmt.Errorf("%w: %s is a user kernel: pass its manifest (--kernel MANIFEST)", ErrBadSpec, s.Target)
		}
		return k.Op, nil
	}
	t, err := target.Lookup(s.Target)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	return t.Info().Op, nil
}
