package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// subject is what a scan sweeps; it picks the scan's loop, here and
// nowhere else (subjectOf, scanner.scan).
type subject int

const (
	// heldSubject: a registered target, its largest batch held where it
	// computes; dims items, pad, position, kv, neighbour, chunk, page
	// (draw.go).
	heldSubject subject = iota
	// pathSubject: an attention prefill target against a decode target,
	// target "PREFILL,DECODE", over the KV length (paths.go).
	pathSubject
	// modelSubject: a model route, op model; dims requests, prompt
	// (model.go).
	modelSubject
	// opSubject: an op package's target; dims items, neighbours (ops.go).
	opSubject
	// kernelSubject: a user kernel, target kernel:NAME: the held loop in
	// a worker subprocess with the kernel of Options.Kernel (kernel.go).
	// The worker (and a test) registers the kernel it loaded: there
	// kernel:NAME with no Options.Kernel is a held subject.
	kernelSubject
)

// subjectOf is the subject of s, read from its target (and op):
//
//	"PREFILL,DECODE"                     path
//	the name of k                        kernel (k: Options.Kernel)
//	"kernel:NAME" not registered here    kernel (newKernel: pass --kernel)
//	op model, or a route --exec started  model
//	a target of an op package            op
//	any other                            held
//
// so the worker a kernel's scan starts, which registers the kernel it
// loaded and is sent kernel:NAME, runs the held loop in its process.
func subjectOf(s spec.ScanSpec, k *Kernel) subject {
	switch {
	case strings.Contains(s.Target, ","):
		return pathSubject
	case k != nil && k.Name == s.Target,
		strings.HasPrefix(s.Target, "kernel:") && !target.Registered(s.Target):
		return kernelSubject
	case s.Op == external.ModelOp || external.IsModel(s.Target):
		return modelSubject
	case IsOpTarget(s.Target):
		return opSubject
	}
	return heldSubject
}

// newScanner checks s and readies its scan: its subject's spec
// normalized (Normalize, NormalizeModel, NormalizeOp, the path scan's),
// its targets looked up, its values and draws.
func newScanner(s spec.ScanSpec, opt Options) (*scanner, error) {
	if opt.Env == (spec.Env{}) {
		opt.Env = spec.HostEnv()
	}
	sc := &scanner{subject: subjectOf(s, opt.Kernel), opt: opt}
	if opt.SaveInputs != "" && sc.subject != pathSubject {
		return nil, fmt.Errorf("%w: --save-inputs is for path scans (--target PREFILL,DECODE or --exec twice)", ErrBadSpec)
	}
	init := map[subject]func(spec.ScanSpec) error{heldSubject: sc.newHeld, pathSubject: sc.newPaths,
		modelSubject: sc.newModel, opSubject: sc.newOp, kernelSubject: sc.newKernel}[sc.subject]
	if err := init(s); err != nil {
		return nil, err
	}
	sc.res = &Result{Spec: sc.s}
	for v := sc.s.From; v <= sc.s.To; v++ {
		sc.values = append(sc.values, v)
	}
	if sc.s.Dim == spec.ScanPosition {
		sc.values = sc.values[:len(sc.values)-1] // positions From..To-1
	}
	sc.draws = slices.Clone(sc.s.Dists)
	sc.total = len(sc.draws) * len(sc.values)
	if sc.subject == heldSubject {
		if err := sc.checkHeld(); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// scan runs the loop of sc's subject. A user kernel's fault or hang is
// the result's Fault.
func (sc *scanner) scan(ctx context.Context) (*Result, error) {
	var res *Result
	var err error
	switch sc.subject {
	case pathSubject:
		res, err = sc.runDraws(ctx, "kv", sc.pathDraw)
		if sc.procs != nil {
			sc.procs.close()
		}
	case modelSubject:
		res, err = sc.runDraws(ctx, sc.s.Dim, sc.modelDraw)
	case opSubject:
		res, err = sc.runDraws(ctx, sc.op.Op().Record().Item+"s", sc.opDraw)
	case kernelSubject:
		res, err = sc.runKernel(ctx)
	default:
		res, err = sc.runHeld(ctx)
	}
	var fault *Fault
	if errors.As(err, &fault) {
		return &Result{Spec: sc.s, Fault: fault}, nil
	}
	return res, err
}

// runDraws is the loop of the path, model and op subjects: draw returns
// the class of every value on draw k, and a value's class in the map is
// the tuple of its classes over the draws (driftmap.SweepDraws, each
// value run once). A path scan lists the values where a draw differs; the
// others are certified when no row differed.
func (sc *scanner) runDraws(ctx context.Context, dim string, draw func(context.Context, int) ([]string, error)) (*Result, error) {
	start := time.Now()
	classify := make([]func(int) (string, error), len(sc.draws))
	for k := range sc.draws {
		cls, err := draw(ctx, k)
		if err != nil {
			return nil, err
		}
		sc.classes = append(sc.classes, cls)
		classify[k] = func(v int) (string, error) {
			i, ok := slices.BinarySearch(sc.values, v)
			if !ok {
				return "", fmt.Errorf("value %d was not scanned", v)
			}
			return cls[i], nil
		}
	}
	m, err := driftmap.Options{Runs: 1}.SweepDraws(ctx, dim, sc.values, classify)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	r := sc.res
	r.Map, r.Draws, r.Elapsed = m, sc.draws, time.Since(start)
	switch {
	case sc.subject == pathSubject:
		for i, v := range sc.values {
			if slices.ContainsFunc(sc.classes, func(cls []string) bool { return cls[i] == pathDiffer }) {
				r.Differ = append(r.Differ, v)
			}
		}
		r.Differing = int64(len(r.Differ))
	case sc.subject == opSubject && sc.s.Dim == DimNeighbours:
		m.At = "other rows' values replaced"
	}
	if r.Differing == 0 && sc.subject != pathSubject {
		r.Certificate = sc.certificate()
	}
	return r, nil
}

// step counts one step done and reports progress.
func (sc *scanner) step() {
	sc.done++
	if sc.opt.Progress != nil {
		sc.opt.Progress(sc.done, sc.total)
	}
}
