package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/internal/lifecycle"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// scanCmd is `bitparity scan`: the flags make one spec, scan.Expand the
// scans it stands for, and scan.Run runs each, whatever its subject.
// Exit codes: 0 certified or agree (the certificate is stored in the
// corpus folder), 1 a row differed or a kernel faulted (the exact drift
// map is printed, the drift stored), 2 bad flags, 3 a target or device
// failure.
func scanCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("scan", stderr, `usage: bitparity scan (--target NAME | --exec CMD | --kernel MANIFEST) [flags]
       bitparity scan (--target PREFILL,DECODE | --exec PREFILL_CMD --exec DECODE_CMD) --to KV [flags]
       bitparity scan --exec ROUTE [--dim requests|prompt] --to N [flags]   (a model route)
       bitparity scan --target OP_TARGET [--dim items|neighbours] [--shape k=v,...] [flags]   (an op package's target)`)
	f := newScanFlags(fs)
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("scan: unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopProfile, err := lifecycle.CPUProfile(*f.cpuProfile)
	if err != nil {
		return usageErr("scan: %v", err)
	}
	defer stopProfile()
	if *f.kernelPath != "" && (f.s.Target != "" || len(f.ex.list) > 0) {
		return usageErr("scan: give one of --target, --exec or --kernel")
	}
	defer external.CloseAll() // the adapters, their clones and spares, whatever happens below
	if err := scanExecTarget(ctx, stderr, f.ex, &f.s); err != nil {
		return err
	}
	s, opt, err := f.spec(fs)
	if err != nil {
		return err
	}
	p, err := f.prof.load()
	if err != nil {
		return err
	}
	kvs, err := scan.ParseKVs(*f.gridKV)
	if err != nil {
		return usageErr("scan: %v", err)
	}
	if kvs != nil && s.Shape.KV == 0 {
		s.Shape.KV = kvs[0] // each scan of the grid sets its own
	}
	scans, skipped, err := scan.Expand(s, p, opt)
	if err != nil {
		return scanErr(err)
	}
	for _, sk := range skipped {
		fmt.Fprintf(stderr, "scan: skipped %s: %v\n", reports.ScanWords(sk.Scan), sk.Err)
	}
	res := scan.NewResults(opt.Env, args)
	found := false
	for _, sp := range scans {
		rs, err := scanEach(ctx, stdout, stderr, sp, kvs, opt, *f.dir)
		if err != nil {
			return err
		}
		for _, r := range rs {
			res.Scans = append(res.Scans, r)
			found = found || r.Verdict == spec.ScanDrift || r.Verdict == spec.ScanFault
		}
	}
	if *f.jsonPath != "" {
		if err := scan.WriteResults(*f.jsonPath, res); err != nil {
			return withCode(spec.ExitUsage, fmt.Errorf("scan: --json: %w", err))
		}
	}
	if found {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}

// scanErr is a scan's error with its exit code: 2 for bad input
// (scan.ErrBadSpec), else 3.
func scanErr(err error) error {
	if errors.Is(err, scan.ErrBadSpec) {
		return withCode(spec.ExitUsage, err)
	}
	return withCode(spec.ExitInternal, err)
}

// scanFlags are bitparity scan's flags: the spec they fill and the rest.
type scanFlags struct {
	s                                                            spec.ScanSpec
	layers, ffn                                                  *int
	in, out, dists, shape, dir, jsonPath, cpuProfile, saveInputs *string
	kernel, kernelPath, gridKV                                   *string
	eps                                                          *float64
	taps                                                         *bool
	kpaths                                                       *kernelPaths
	prof                                                         profileFlag
	ex                                                           *execFlags
}

// newScanFlags defines scan's flags on fs.
func newScanFlags(fs *flag.FlagSet) *scanFlags {
	f := &scanFlags{}
	fs.StringVar(&f.s.Target, "target", "", "target to scan (bitparity list); PREFILL,DECODE: two attention targets, prefill against decode over the KV length")
	fs.StringVar(&f.s.Dim, "dim", spec.ScanItems, "dimension swept: items (rows, M, decode requests, prefill sequences), pad, position, kv (decode), neighbour (attention: a co-resident request's length, the watched one fixed at --kv or --seq-len), chunk (prefill: chunks of v queries of a --seq-len prompt), page (decode: page size), prefix (prefill: a cached prefix of v tokens of a --seq-len prompt); a model route: requests (decoded together; its items), prompt (the watched request's prompt length); an op package's target: items, neighbours (row r against the same batch with the other rows' values replaced)")
	fs.IntVar(&f.s.From, "from", 0, "first value (default 1; position: 0)")
	fs.IntVar(&f.s.To, "to", 0, "last value: the largest batch (default: the profile's max_tokens)")
	fs.IntVar(&f.s.Real, "real", 0, "pad: real items before the filler (default 1)")
	fs.IntVar(&f.s.Watch, "watch", 0, "position: the item moved to each position; prompt: the request whose prompt is cut")
	fs.IntVar(&f.s.Shape.Hidden, "hidden", 0, "rmsnorm hidden size; gemm K")
	fs.IntVar(&f.s.Shape.N, "n", 0, "gemm N")
	fs.IntVar(&f.s.Shape.Vocab, "vocab", 0, "logprob vocabulary")
	fs.IntVar(&f.s.Shape.Heads, "heads", 0, "attention query heads")
	fs.IntVar(&f.s.Shape.KVHeads, "kv-heads", 0, "attention key/value heads")
	fs.IntVar(&f.s.Shape.HeadDim, "head-dim", 0, "attention head dim")
	fs.IntVar(&f.s.Shape.KV, "kv", 0, "decode KV length of every request (neighbour: the watched request's)")
	fs.IntVar(&f.s.Shape.SeqLen, "seq-len", 0, "prefill sequence length (neighbour: the watched sequence's; chunk: the prompt's)")
	fs.IntVar(&f.s.Shape.Rows, "rows", 0, "kv, page: decode requests (page: default 1)")
	f.layers = fs.Int("layers", 0, "model route: decoder layers (default 1)")
	f.ffn = fs.Int("ffn", 0, "model route: MLP width (default 64)")
	fs.IntVar(&f.s.Shape.Seqs, "requests", 0, "model route, prompt: requests decoded together (default 4); chunk: prompts (default 1)")
	f.shape = fs.String("shape", "", "an op package's target: its sizes by name, e.g. experts=128,top_k=8 or hidden=2048 (default: the profile's, else the op's)")
	f.in = fs.String("in", "bf16", "input dtype (an op package's target: the op's first)")
	f.out = fs.String("out", "bf16", "output dtype (logprob: fp32; an op package's target declares its own)")
	f.eps = fs.Float64("eps", 1e-6, "rmsnorm epsilon")
	f.dists = fs.String("dists", "", "input draws: comma-separated distributions, one draw each (default: normal,sensitive for rmsnorm and logprob, every draw of an op package's op, else normal,boundary)")
	fs.Float64Var(&f.s.Power, "power", -1, "target power: add sensitive draws until every position shows this share of the op's family of reduction orders in at least one draw (default 0.99 for rmsnorm, gemm, logprob and attn_decode over items, pad or position; 0: not measured); a certificate below it is underpowered")
	fs.IntVar(&f.s.MaxDraws, "max-draws", 0, fmt.Sprintf("the most draws in all the power loop runs (default %d)", scan.DefaultMaxDraws))
	fs.Uint64Var(&f.s.Seed, "seed", 1, "seed of the draws")
	f.taps = fs.Bool("taps", true, "also compare the fp32 intermediates (taps); false: outputs only")
	f.dir = fs.String("dir", defaultDir(), "corpus folder the certificate is stored in ($"+envCorpus+")")
	f.jsonPath = fs.String("json", "", "write the scans' results (certificates, drift maps, differing steps) to this file")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the scan (runtime/pprof; read it with go tool pprof) to `FILE`")
	f.saveInputs = fs.String("save-inputs", "", "path scans: write each draw's inputs under this folder (q, k, v as .npy, the draw as case.json), for an independent sweep of the same tensors (scripts/sdpa_sweep.py --inputs)")
	f.kernel = fs.String("kernel-hash", "", "kernel hash to record (default: the build's, for GPU targets; --kernel: the manifest's image hash)")
	f.kernelPath = fs.String("kernel", "", "scan the user kernel of this manifest (docs/kernel-abi.md) in a worker subprocess, its largest batch resident on the device (cuda build); a fault or hang is a finding")
	f.gridKV = fs.String("grid-kv", "", "attn_decode: a two-dimensional map, the requests (--to) scanned at each of these ascending KV lengths, the lengths between two of other rules bisected (e.g. 1,64,256,1024)")
	f.kpaths = kernelPathFlag(fs)
	f.prof = addProfileFlag(fs, "the scan takes (gemm: one scan per projection; an op package's target: its dimensions by name)")
	f.ex = runExecFlags(fs) // --exec CMD: scan an adapter (scan_exec.go)
	fs.IntVar(&f.ex.procs, "exec-procs", 0, fmt.Sprintf("path scans: processes of each adapter the KV lengths are spread over, 1 to %d (0: one per 2 CPU cores, at most 8: here %d)", external.MaxProcs, external.AutoProcs()))
	return f
}

// spec is the scan the flags give, and its options: the user kernel of
// --kernel, the environment recorded, --save-inputs. The dtypes and eps
// are set only where their flags are (scan.Expand fills the rest from a
// profile, scan the defaults); --layers and --ffn are a model route's
// (shape.rows, shape.n).
func (f *scanFlags) spec(fs *flag.FlagSet) (spec.ScanSpec, scan.Options, error) {
	s := f.s
	opt := scan.Options{Env: gpu.HereEnv(), SaveInputs: *f.saveInputs}
	if *f.kernelPath != "" {
		k, err := scan.LoadKernel(*f.kernelPath, f.kpaths.options())
		if err != nil {
			return s, opt, usageErr("scan --kernel: %v", err)
		}
		if err := k.Runnable(); err != nil {
			return s, opt, withCode(spec.ExitInternal, err)
		}
		s.Target, opt.Kernel, opt.Env.KernelHash = k.Name, k, k.Record.ImageHash
	}
	if *f.kernel != "" {
		opt.Env.KernelHash = *f.kernel
	}
	if s.Target == "" {
		return s, opt, usageErr("scan: --target, --exec or --kernel MANIFEST is required (bitparity list shows the targets)")
	}
	for name, dst := range map[string]*spec.DType{"in": &s.In, "out": &s.Out} {
		if flagSet(fs, name) {
			*dst = spec.DType(fs.Lookup(name).Value.String())
		}
	}
	if flagSet(fs, "eps") {
		s.Eps = float32(*f.eps)
	}
	for _, d := range runSplitList(*f.dists) {
		s.Dists = append(s.Dists, spec.Dist(d))
	}
	s.NoTaps = !*f.taps
	var err error
	if s.Shape.Dims, err = spec.ParseDims(*f.shape); err != nil {
		return s, opt, usageErr("scan: --shape: %v", err)
	}
	if external.IsModel(s.Target) {
		s.Shape.Rows, s.Shape.N = *f.layers, *f.ffn
	} else if s.Shape.Seqs != 0 || *f.layers != 0 || *f.ffn != 0 {
		return s, opt, usageErr("scan: --requests, --layers and --ffn are for a model route (--exec of an adapter whose op is transformer)")
	}
	return s, opt, nil
}

// scanEach runs scan s: at each KV length of kvs (scanGrid), or once
// (scanOne).
func scanEach(ctx context.Context, stdout, stderr io.Writer, s spec.ScanSpec, kvs []int, opt scan.Options, dir string) ([]spec.ScanResult, error) {
	if kvs != nil {
		return scanGrid(ctx, stdout, s, kvs, opt, dir)
	}
	r, err := scanOne(ctx, stdout, stderr, s, opt, dir)
	return []spec.ScanResult{r}, err
}

// scanOne runs scan s (scan.Run) under a progress display, prints what it
// found (scan.Result.Text) and stores it in the corpus folder dir
// (storeScan): its certificate, or its drift or fault.
func scanOne(ctx context.Context, stdout, stderr io.Writer, s spec.ScanSpec, opt scan.Options, dir string) (spec.ScanResult, error) {
	var prog *reports.Steps
	opt.Progress = func(done, total int) {
		if prog == nil {
			prog = reports.NewSteps(stderr, "scan", total)
		}
		prog.UpdateOf(done, total) // the power loop's draws raise the total
	}
	r, err := scan.Run(ctx, s, opt)
	prog.Finish()
	if err != nil {
		return spec.ScanResult{}, scanErr(err)
	}
	r.Text(stdout)
	rec := r.Record()
	var kernel *spec.KernelManifest
	if opt.Kernel != nil {
		kernel = &opt.Kernel.Record
	}
	return rec, storeScan(stdout, dir, &rec, opt.Env, kernel)
}

// newKernelRecheck loads the manifests of --kernel (comma-separated). A
// bad manifest, or two of one kernel name, is a usage error.
func newKernelRecheck(manifests string, fromCert bool, paths kernelPaths) (*scan.Kernels, error) {
	kr, err := scan.NewKernels(runSplitList(manifests), fromCert, paths.options())
	if err != nil {
		return nil, usageErr("corpus recheck --kernel: %v", err)
	}
	return kr, nil
}
