package scan

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Kernel is a user kernel a scan of kernel:NAME runs (Options.Kernel):
// what its manifest declares, the record a certificate keeps of it, and
// the command line of the worker that loads it (`bitparity worker
// --kernel MANIFEST --scan`, which runs Serve), its batch resident on the
// device, so a fault or hang at one batch is a finding naming the batch.
type Kernel struct {
	Name    string // the target's name, kernel:NAME
	Op      spec.Op
	In, Out []oracle.DType // the dtypes it takes
	Timeout time.Duration  // the bound of each batch
	Record  spec.KernelManifest
	Argv    []string // the worker's command line
}

// LoadKernel reads and checks the manifest at path (gpu.LoadManifest) and
// records it: the path as given, the manifest file's hash, the image
// hash. The worker is this executable. It needs no GPU.
func LoadKernel(path string, opt gpu.ManifestOptions) (*Kernel, error) {
	m, err := gpu.LoadManifest(path, opt)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this executable for the worker: %w", err)
	}
	argv := []string{exe, "worker", "--kernel", abs, "--scan"}
	if opt.AnyPath {
		argv = append(argv, "--kernel-any-path")
	}
	sum := sha256.Sum256(m.Raw)
	return &Kernel{Name: "kernel:" + m.Name, Op: m.Op, In: m.In, Out: m.Out, Timeout: m.Timeout, Argv: argv,
		Record: spec.KernelManifest{Path: path, ManifestHash: "sha256:" + hex.EncodeToString(sum[:8]), ImageHash: m.ImageHash()}}, nil
}

// Runnable says why the kernel cannot run here: a build without CUDA
// (gpu.ErrNoCUDA).
func (k *Kernel) Runnable() error {
	if !gpu.CUDABuild {
		return fmt.Errorf("scan --kernel %s: %w", k.Record.Path, gpu.ErrNoCUDA)
	}
	return nil
}

// newKernel fills sc for s, a scan of user kernel opt.Kernel, which is
// not registered in this process: the spec (Normalize, the kernel's op)
// and the dtypes the manifest takes.
func (sc *scanner) newKernel(s spec.ScanSpec) error {
	k := sc.opt.Kernel
	if k == nil || k.Name != s.Target {
		return fmt.Errorf("%w: %s is a user kernel: its scan runs in a worker with its manifest (--kernel MANIFEST)", ErrBadSpec, s.Target)
	}
	if s.Op == "" {
		s.Op = k.Op
	}
	if s.Op != k.Op {
		return fmt.Errorf("%w: %s runs %s, the scan asks for %s", ErrBadSpec, k.Name, k.Op, s.Op)
	}
	s, err := Normalize(s)
	if err != nil {
		return err
	}
	in, err := oracle.ParseDType(string(s.In))
	if err != nil {
		return fmt.Errorf("%w: --in: %w", ErrBadSpec, err)
	}
	out, err := oracle.ParseDType(string(s.Out))
	if err != nil {
		return fmt.Errorf("%w: --out: %w", ErrBadSpec, err)
	}
	if !slices.Contains(k.In, in) || !slices.Contains(k.Out, out) {
		return fmt.Errorf("%w: %s takes in %v, out %v; the scan asks for %s -> %s", ErrBadSpec, k.Name, k.In, k.Out, in, out)
	}
	sc.s = s
	return nil
}

// runKernel is the loop of a user kernel: the held loop in a new worker
// (RunWorker), the manifest's timeout bounding each batch. A certificate
// records the manifest.
func (sc *scanner) runKernel(ctx context.Context) (*Result, error) {
	k := sc.opt.Kernel
	r, err := RunWorker(ctx, k.Argv, sc.s, sc.opt, k.Timeout)
	if err == nil && r.Certificate != nil {
		rec := k.Record
		r.Certificate.Kernel = &rec
	}
	return r, err
}

// Kernels are the user kernels a recheck may load (corpus recheck's
// --kernel and --kernel-from-certificate). A certificate or stored drift
// names its kernel's manifest, but the manifest names code (the image the
// worker loads on the GPU), and bitparity never runs code named only by a
// file: a kernel's scan reruns with a manifest the user passes (matched
// by the kernel's name), or with the recorded path when the user says so
// for every kernel at once (fromCert).
type Kernels struct {
	byName   map[string]*Kernel // "kernel:NAME"
	fromCert bool
	opt      gpu.ManifestOptions
	recorded map[string]*Kernel // by recorded path, loaded once
}

// NewKernels loads the manifests at paths. A bad manifest, or two of one
// kernel name, is an error.
func NewKernels(paths []string, fromCert bool, opt gpu.ManifestOptions) (*Kernels, error) {
	ks := &Kernels{byName: map[string]*Kernel{}, fromCert: fromCert, opt: opt, recorded: map[string]*Kernel{}}
	for _, path := range paths {
		k, err := LoadKernel(path, opt)
		if err != nil {
			return nil, err
		}
		if o, dup := ks.byName[k.Name]; dup {
			return nil, fmt.Errorf("%s and %s both name kernel %s", o.Record.Path, path, k.Name)
		}
		ks.byName[k.Name] = k
	}
	return ks, nil
}

// Options are the options of a rerun, in env, of target name's scan,
// whose certificate or drift (what) recorded manifest rec (or, before
// manifests were recorded, only image hash hash): for a user kernel the
// manifest the user gave for name, or with fromCert the recorded one,
// which must run here (Runnable); an error says which flag to pass.
func (ks *Kernels) Options(name string, rec *spec.KernelManifest, hash, what string, env spec.Env) (Options, error) {
	opt := Options{Env: env}
	if !strings.HasPrefix(name, "kernel:") {
		return opt, nil
	}
	k := ks.byName[name]
	switch {
	case k != nil:
	case rec == nil:
		return opt, fmt.Errorf("%s recorded no manifest: pass --kernel MANIFEST, the manifest of %s (its image hash must be %s)",
			name, name, cmp.Or(hash, "unrecorded"))
	case !ks.fromCert:
		return opt, fmt.Errorf("%s is a user kernel: pass --kernel %s, the manifest recorded with the %s (read it first: bitparity never loads a kernel named only by a file), or --kernel-from-certificate",
			name, spec.ShellQuote(rec.Path), what)
	default:
		if k = ks.recorded[rec.Path]; k == nil {
			var err error
			if k, err = LoadKernel(rec.Path, ks.opt); err != nil {
				return opt, fmt.Errorf("the recorded manifest: %w", err)
			}
			ks.recorded[rec.Path] = k
		}
		if k.Name != name {
			return opt, fmt.Errorf("the recorded manifest %s now names %s, not %s", rec.Path, k.Name, name)
		}
	}
	opt.Kernel = k
	return opt, k.Runnable()
}
