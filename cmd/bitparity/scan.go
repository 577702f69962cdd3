package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanCmd is `bitparity scan`. Exit codes: 0 certified (the certificate is
// stored in the corpus folder), 1 a row differed (the exact drift map is
// printed), 2 bad flags, 3 a target or device failure.
func scanCmd(stdout, stderr io.Writer, args []string) error {
	if _, ok := opTarget(args); ok { // a target of an op package (scan_ops.go)
		return scanOpCmd(stdout, stderr, args)
	}
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := newScanFlags(fs)
	s := &f.s
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity scan (--target NAME | --exec CMD | --kernel MANIFEST) [flags]")
		fmt.Fprintln(stderr, "       bitparity scan (--target PREFILL,DECODE | --exec PREFILL_CMD --exec DECODE_CMD) --to KV [flags]")
		fmt.Fprintln(stderr, "       bitparity scan --exec ROUTE [--dim requests|prompt] --to N [flags]   (a model route)")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("scan: unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stopProfile, err := startCPUProfile("scan", *f.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if *f.kernelPath != "" && (s.Target != "" || len(f.ex.list) > 0) {
		return usageErr("scan: give one of --target, --exec or --kernel")
	}
	if err := scanExecTarget(ctx, stderr, f.ex, s); err != nil {
		return err
	}
	defer external.CloseAll()
	var ks *kernelScan // --kernel
	if *f.kernelPath != "" {
		if ks, err = newKernelScan(*f.kernelPath, *f.kpaths); err != nil {
			return err
		}
		s.Target = ks.name()
	}
	if s.Target == "" {
		return usageErr("scan: --target, --exec or --kernel MANIFEST is required (bitparity list shows the targets)")
	}
	s.In, s.Out, s.Eps, s.NoTaps = spec.DType(*f.in), spec.DType(*f.out), float32(*f.eps), !*f.taps
	for _, d := range runSplitList(*f.dists) {
		s.Dists = append(s.Dists, spec.Dist(d))
	}
	if *f.saveInputs != "" && !strings.Contains(s.Target, ",") {
		return usageErr("scan: --save-inputs is for path scans (--target PREFILL,DECODE or --exec twice)")
	}
	if external.IsModel(s.Target) { // a model route (scan_model.go)
		s.Shape.Rows, s.Shape.N = *f.layers, *f.ffn
		return scanModel(ctx, stdout, stderr, *s, f.prof, *f.dir, newScanResults(*f.jsonPath, hereEnv(), args))
	}
	if s.Shape.Seqs != 0 || *f.layers != 0 || *f.ffn != 0 {
		return usageErr("scan: --requests, --layers and --ffn are for a model route (--exec of an adapter whose op is transformer)")
	}
	if strings.Contains(s.Target, ",") { // two targets: prefill against decode (scan_paths.go)
		return scanPaths(ctx, stdout, stderr, *s, f.prof, *f.dir, newScanResults(*f.jsonPath, hereEnv(), args), *f.saveInputs)
	}
	return scanHeld(ctx, stdout, stderr, f, ks, args)
}

// scanHeld scans one target of a held kind (a registered target, or the
// user kernel ks of --kernel): every shape the flags and the profile give
// that can run, each certified and stored or its drift printed; exit 1
// when one drifted.
func scanHeld(ctx context.Context, stdout, stderr io.Writer, f *scanFlags, ks *kernelScan, args []string) error {
	s := f.s
	if ks != nil {
		s.Op = ks.m.Op
	} else {
		t, err := target.Lookup(s.Target)
		if err != nil {
			return usageErr("scan: %v", err)
		}
		s.Op = t.Info().Op
	}
	if s.Op != spec.OpRMSNorm {
		s.Eps = 0
	}
	specs, err := withProfile(s, f.prof)
	if err != nil {
		return err
	}
	env := hereEnv()
	check, run := scan.Check, scan.Run
	var rec *spec.KernelManifest
	if ks != nil {
		env.KernelHash = ks.m.ImageHash()
		check, run, rec = ks.check, ks.run, &ks.rec
	}
	if *f.kernel != "" {
		env.KernelHash = *f.kernel
	}
	if specs, err = runnableSpecs(stderr, specs, check); err != nil {
		return err
	}
	res := newScanResults(*f.jsonPath, env, args)
	drift := false
	for _, sp := range specs {
		r, err := scanOne(ctx, stdout, stderr, run, sp, env, *f.dir, rec)
		if err != nil {
			return err
		}
		res.add(r)
		drift = drift || r.Verdict != spec.ScanCertified
	}
	if err := res.write(); err != nil {
		return err
	}
	if drift {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}

// runnableSpecs checks all specs before the first runs: of a profile's
// several shapes, one that cannot run (an lm_head over the input budget)
// is skipped, said on stderr; a single spec that cannot run is a usage
// error, and so is a profile none of whose shapes can.
func runnableSpecs(stderr io.Writer, specs []spec.ScanSpec, check func(spec.ScanSpec) error) ([]spec.ScanSpec, error) {
	var runnable []spec.ScanSpec
	for _, sp := range specs {
		err := check(sp)
		switch {
		case err == nil:
			runnable = append(runnable, sp)
		case len(specs) == 1:
			return nil, withCode(spec.ExitUsage, err)
		default:
			fmt.Fprintf(stderr, "scan: skipped %s: %v\n", reports.ScanWords(sp), err)
		}
	}
	if len(runnable) == 0 {
		return nil, usageErr("scan: none of the profile's %d shapes can run", len(specs))
	}
	return runnable, nil
}

// scanFlags are bitparity scan's flags: the spec they fill and the rest.
type scanFlags struct {
	s                                                     spec.ScanSpec
	layers, ffn                                           *int
	in, out, dists, dir, jsonPath, cpuProfile, saveInputs *string
	kernel, kernelPath                                    *string
	eps                                                   *float64
	taps                                                  *bool
	kpaths                                                *kernelPaths
	prof                                                  profileFlag
	ex                                                    *execFlags
}

// newScanFlags defines scan's flags on fs.
func newScanFlags(fs *flag.FlagSet) *scanFlags {
	f := &scanFlags{}
	fs.StringVar(&f.s.Target, "target", "", "target to scan (bitparity list); PREFILL,DECODE: two attention targets, prefill against decode over the KV length")
	fs.StringVar(&f.s.Dim, "dim", spec.ScanItems, "dimension swept: items (rows, M, decode requests, prefill sequences), pad, position, kv (decode), neighbour (attention: a co-resident request's length, the watched one fixed at --kv or --seq-len), chunk (prefill: chunks of v queries of a --seq-len prompt), page (decode: page size), prefix (prefill: a cached prefix of v tokens of a --seq-len prompt); a model route: requests (decoded together; its items), prompt (the watched request's prompt length)")
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
	f.in = fs.String("in", "bf16", "input dtype")
	f.out = fs.String("out", "bf16", "output dtype (logprob: fp32)")
	f.eps = fs.Float64("eps", 1e-6, "rmsnorm epsilon")
	f.dists = fs.String("dists", "", "input draws: comma-separated distributions, one draw each (default: normal,sensitive for rmsnorm and logprob, else normal,boundary)")
	fs.Float64Var(&f.s.Power, "power", -1, "target power: add sensitive draws until every position shows this share of the op's family of reduction orders in at least one draw (default 0.99 for rmsnorm and logprob; 0: not measured); a certificate below it is underpowered")
	fs.IntVar(&f.s.MaxDraws, "max-draws", 0, fmt.Sprintf("the most draws in all the power loop runs (default %d)", scan.DefaultMaxDraws))
	fs.Uint64Var(&f.s.Seed, "seed", 1, "seed of the draws")
	f.taps = fs.Bool("taps", true, "also compare the fp32 intermediates (taps); false: outputs only")
	f.dir = fs.String("dir", defaultDir(), "corpus folder the certificate is stored in ($"+envCorpus+")")
	f.jsonPath = fs.String("json", "", "write the scans' results (certificates, drift maps, differing steps) to this file")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the scan (runtime/pprof; read it with go tool pprof) to `FILE`")
	f.saveInputs = fs.String("save-inputs", "", "path scans: write each draw's inputs under this folder (q, k, v as .npy, the draw as case.json), for an independent sweep of the same tensors (scripts/sdpa_sweep.py --inputs)")
	f.kernel = fs.String("kernel-hash", "", "kernel hash to record (default: the build's, for GPU targets; --kernel: the manifest's image hash)")
	f.kernelPath = fs.String("kernel", "", "scan the user kernel of this manifest (docs/kernel-abi.md) in a worker subprocess, its largest batch resident on the device (cuda build); a fault or hang is a finding")
	f.kpaths = kernelPathFlag(fs)
	f.prof = addProfileFlag(fs, "the scan takes (gemm: one scan per projection)")
	f.ex = runExecFlags(fs) // --exec CMD: scan an adapter (scan_exec.go)
	return f
}

// withProfile fills the inner sizes the flags left zero from the profile,
// one spec per shape of the op (gemm: per projection), and --to from its
// max_tokens.
func withProfile(s spec.ScanSpec, prof profileFlag) ([]spec.ScanSpec, error) {
	p, err := prof.load()
	if err != nil || p == nil {
		return []spec.ScanSpec{s}, err
	}
	if s.To == 0 && s.Dim != spec.ScanKV {
		s.To = p.MaxTokens
	}
	prof.scanDTypes(&s, p)
	var out []spec.ScanSpec
	for _, in := range p.Shapes(s.Op) {
		t := s
		set := func(dst *int, v int) {
			if *dst == 0 {
				*dst = v
			}
		}
		set(&t.Shape.Hidden, in.Hidden)
		set(&t.Shape.N, in.N)
		set(&t.Shape.Vocab, in.Vocab)
		set(&t.Shape.Heads, in.Heads)
		set(&t.Shape.KVHeads, in.KVHeads)
		set(&t.Shape.HeadDim, in.HeadDim)
		out = append(out, t)
	}
	return out, nil
}

// scanOne runs one scan with run (scan.Run, or a kernel scan's worker,
// whose manifest is kernel) under a progress display, prints its verdict
// and stores what it found in the corpus folder dir (storeScan): its
// certificate, or its drift or fault.
func scanOne(ctx context.Context, stdout, stderr io.Writer, run func(context.Context, spec.ScanSpec, scan.Options) (*scan.Result, error),
	s spec.ScanSpec, env spec.Env, dir string, kernel *spec.KernelManifest) (spec.ScanResult, error) {
	var prog *reports.Steps
	opt := scan.Options{Env: env, Progress: func(done, total int) {
		if prog == nil {
			prog = reports.NewSteps(stderr, "scan", total)
		}
		prog.UpdateOf(done, total) // the power loop's draws raise the total
	}}
	r, err := run(ctx, s, opt)
	prog.Finish()
	var fault *scan.Fault
	if errors.As(err, &fault) {
		if n, err := scan.Normalize(s); err == nil {
			s = n
		}
		fmt.Fprintf(stdout, "scan %s\n  FAULT: %v\n", reports.ScanWords(s), fault)
		rec := scan.FaultRecord(s, fault)
		return rec, storeScan(stdout, dir, &rec, env, kernel)
	}
	if err != nil {
		if errors.Is(err, scan.ErrBadSpec) {
			return spec.ScanResult{}, withCode(spec.ExitUsage, err)
		}
		return spec.ScanResult{}, withCode(spec.ExitInternal, err)
	}
	fmt.Fprintf(stdout, "scan %s\n", reports.ScanWords(r.Spec))
	row, where := "row", "host"
	if r.Spec.Op == spec.OpModel {
		row, where = "request", "in the route"
	}
	if r.Resident {
		where = "resident on the device"
	}
	rate := float64(r.RowsCompared) / max(r.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "  %d %s comparisons in %d batches, %s, %.3gs (%.3g %ss/s)\n", r.RowsCompared, row, r.Batches, where, r.Elapsed.Seconds(), rate, row)
	if r.Power != nil {
		fmt.Fprintf(stdout, "  power: %s\n", scan.PowerWords(r.Power))
	}
	if r.Certificate == nil {
		fmt.Fprintf(stdout, "  DRIFT: %d %s comparisons differ; drift map: %s\n", r.Differing, row, scan.MapWords(r.Map))
		for _, l := range scan.DetailWords(r) {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
		// the steps that differ from the items alone (or the oracle) first:
		// they decide the classes.
		diffs := slices.Clone(r.Diffs)
		late := func(d scan.Diff) int {
			if d.Against == "largest batch" {
				return 1
			}
			return 0
		}
		slices.SortStableFunc(diffs, func(a, b scan.Diff) int { return cmp.Compare(late(a), late(b)) })
		for i, d := range diffs {
			if i == 8 {
				fmt.Fprintf(stdout, "  ... %d more differing steps (--json lists them)\n", len(diffs)-i)
				break
			}
			fmt.Fprintf(stdout, "  draw %s, %s = %d: %d %s(s) differ from the %s, first %s %d\n", d.Draw, r.Map.Dim, d.Value, d.Rows, row, d.Against, row, d.FirstRow)
			if d.Words != "" {
				fmt.Fprintf(stdout, "    %s\n", d.Words)
			}
		}
	}
	rec := r.Record()
	return rec, storeScan(stdout, dir, &rec, env, kernel)
}

// recheckCertificates reruns the scan of every valid certificate in the
// local corpus folder (scan.Recheck; a user kernel's in a worker with the
// manifest kernels gives it, scan.RecheckKernel) and writes each back with
// its new status: valid (checked now) or invalid, with where, when and
// why. It returns how many turned invalid and how many could not run here.
func recheckCertificates(ctx context.Context, stdout io.Writer, d *corpus.Dir, env spec.Env, kernels *kernelRecheck) (invalid, broken int, err error) {
	valid, checked := 0, 0
	rerun := func(c *spec.Certificate) (got spec.Certificate, err error) {
		switch {
		case strings.HasPrefix(c.Scan.Target, "kernel:"):
			got, err = kernels.recheck(ctx, c, env)
		case c.Scan.Op == spec.OpModel:
			got, _, err = scan.RecheckModel(ctx, *c, scan.Options{Env: env})
		default:
			got, _, err = scan.Recheck(ctx, *c, scan.Options{Env: env})
		}
		return got, err
	}
	err = corpus.RecheckCertificates(d, rerun, func(r corpus.CertRecheck) {
		c, got := r.Was, r.Got
		switch {
		case c == nil:
			broken++
			fmt.Fprintf(stdout, "could not read %s: %v\n", r.Name, r.Err)
			return
		case r.Err != nil:
			checked++
			broken++
			fmt.Fprintf(stdout, "could not run %s: %v\n", r.Name, r.Err)
			if a := c.Adapter; a != nil && strings.HasPrefix(c.Scan.Target, "exec:") && !slices.Contains(target.Names(), c.Scan.Target) {
				fmt.Fprintf(stdout, "  %s is an adapter (%s on %s): pass --exec %s, the command line recorded with the certificate; read it first, bitparity never runs a command from a file\n",
					c.Scan.Target, a.Name, a.Device, spec.ShellQuote(a.Exec))
			}
			return
		}
		checked++
		switch got.Status.State {
		case spec.CertValid:
			valid++
			fmt.Fprintf(stdout, "certificate holds   %s (%s)\n", r.Name, reports.ScanWords(got.Scan))
		case spec.CertUnderpowered:
			valid++
			fmt.Fprintf(stdout, "certificate holds, UNDERPOWERED %s (%s): %s\n", r.Name, reports.ScanWords(got.Scan), got.Status.Reason)
		default:
			invalid++
			fmt.Fprintf(stdout, "certificate INVALID %s: %s\n", r.Name, got.Status.Reason)
		}
	})
	if err != nil {
		return invalid, broken, err
	}
	fmt.Fprintf(stdout, "rechecked %d certificate(s): %d hold, %d invalid, %d could not run\n", checked, valid, invalid, broken)
	return invalid, broken, nil
}

// kernelRecheck is corpus recheck's --kernel and
// --kernel-from-certificate: the user kernels a recheck may load. A
// certificate names its kernel's manifest, but the manifest names code
// (the image the worker loads on the GPU), and bitparity never runs code
// named only by a file: a kernel certificate reruns with a manifest the
// user passes (--kernel, matched by the kernel's name), or with the
// recorded path when the user says so for every kernel certificate at
// once (--kernel-from-certificate).
type kernelRecheck struct {
	byName   map[string]*kernelScan // "kernel:NAME"
	fromCert bool
	paths    kernelPaths
	recorded map[string]*kernelScan // by recorded path, loaded once
}

// newKernelRecheck loads the manifests of --kernel (comma-separated). A
// bad manifest, or two of one kernel name, is a usage error.
func newKernelRecheck(manifests string, fromCert bool, paths kernelPaths) (*kernelRecheck, error) {
	kr := &kernelRecheck{byName: map[string]*kernelScan{}, fromCert: fromCert, paths: paths, recorded: map[string]*kernelScan{}}
	for _, path := range runSplitList(manifests) {
		k, err := loadKernelScan(path, paths)
		if err != nil {
			return nil, usageErr("corpus recheck --kernel: %v", err)
		}
		if o, dup := kr.byName[k.name()]; dup {
			return nil, usageErr("corpus recheck --kernel: %s and %s both name kernel %s", o.rec.Path, path, k.name())
		}
		kr.byName[k.name()] = k
	}
	return kr, nil
}

// recheck reruns kernel certificate c with the manifest the flags give
// for it; without one it says which flag to pass (an error: the
// certificate could not run here).
func (kr *kernelRecheck) recheck(ctx context.Context, c *spec.Certificate, env spec.Env) (spec.Certificate, error) {
	k, err := kr.manifest(c.Scan.Target, c.Kernel, c.KernelHash, "certificate")
	if err != nil {
		return *c, err
	}
	return k.recheck(ctx, *c, env)
}

// rerun runs the scan s of user kernel s.Target again, which recorded
// manifest rec, with the manifest the flags give for it (a stored scan
// drift's recheck).
func (kr *kernelRecheck) rerun(ctx context.Context, s spec.ScanSpec, rec *spec.KernelManifest, env spec.Env) (spec.ScanResult, error) {
	k, err := kr.manifest(s.Target, rec, "", "drift")
	if err != nil {
		return spec.ScanResult{}, err
	}
	if err := k.runnable(); err != nil {
		return spec.ScanResult{}, err
	}
	env.KernelHash = k.rec.ImageHash
	r, err := k.run(ctx, s, scan.Options{Env: env})
	var fault *scan.Fault
	if errors.As(err, &fault) {
		return scan.FaultRecord(s, fault), nil
	}
	if err != nil {
		return spec.ScanResult{}, err
	}
	return r.Record(), nil
}

// manifest is the kernel a rerun of kernel target name's scan loads, whose
// certificate or drift (what) recorded manifest rec (or, before manifests
// were recorded, only image hash hash): the manifest --kernel gives for
// name, or with --kernel-from-certificate the recorded one.
func (kr *kernelRecheck) manifest(name string, rec *spec.KernelManifest, hash, what string) (*kernelScan, error) {
	k := kr.byName[name]
	switch {
	case k != nil:
	case rec == nil:
		return nil, fmt.Errorf("%s recorded no manifest: pass --kernel MANIFEST, the manifest of %s (its image hash must be %s)",
			name, name, cmp.Or(hash, "unrecorded"))
	case !kr.fromCert:
		return nil, fmt.Errorf("%s is a user kernel: pass --kernel %s, the manifest recorded with the %s (read it first: bitparity never loads a kernel named only by a file), or --kernel-from-certificate",
			name, spec.ShellQuote(rec.Path), what)
	default:
		if k = kr.recorded[rec.Path]; k == nil {
			var err error
			if k, err = loadKernelScan(rec.Path, kr.paths); err != nil {
				return nil, fmt.Errorf("the recorded manifest: %w", err)
			}
			kr.recorded[rec.Path] = k
		}
		if k.name() != name {
			return nil, fmt.Errorf("the recorded manifest %s now names %s, not %s", rec.Path, k.name(), name)
		}
	}
	return k, nil
}

// listCertificates writes one line per certificate of the local corpus
// folder: name, state, what it covers.
func listCertificates(stdout, stderr io.Writer, d *corpus.Dir) {
	listEntries(stderr, "certificates", d.Certificates, d.GetCertificate, func(name string, c *spec.Certificate) {
		fmt.Fprintf(stdout, "%s  %-7s  %d rows compared  %s\n", name, c.Status.State, c.RowsCompared, reports.ScanWords(c.Scan))
	})
}

// showCertificate prints the certificate arg names (a cert-*.json file
// name in dir, or a path to one) and reports whether arg named one.
func showCertificate(stdout io.Writer, dir, arg string, asJSON bool) (bool, error) {
	base := filepath.Base(arg)
	if !corpus.IsCertName(base) && !corpus.IsCertName(base+".json") {
		return false, nil
	}
	path := arg
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(dir, strings.TrimSuffix(base, ".json")+".json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true, withCode(spec.ExitUsage, fmt.Errorf("corpus show: %w", err))
	}
	c, err := corpus.DecodeCertificate(path, data)
	if err != nil {
		return true, withCode(spec.ExitUsage, err)
	}
	if asJSON {
		b, err := corpus.EncodeCertificate(c)
		if err == nil {
			_, err = stdout.Write(b)
		}
		return true, err
	}
	reports.CertificateText(stdout, filepath.Base(path), c)
	return true, nil
}

// reportCertificates writes the certificates of corpus folder dir in
// words: to stdout after a text report, or to certificates.txt in outDir
// (whose path it prints).
func reportCertificates(stdout io.Writer, dir, outDir string) error {
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		return err
	}
	names, err := d.Certificates()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d scan certificate(s) in %s\n", len(names), dir)
	for _, name := range names {
		c, err := d.GetCertificate(name)
		if err != nil {
			return err
		}
		reports.CertificateText(&b, name, c)
	}
	if outDir == "" {
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	path := filepath.Join(outDir, "certificates.txt")
	if err := atomicfile.Write(path, []byte(strings.TrimPrefix(b.String(), "\n"))); err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	return nil
}
