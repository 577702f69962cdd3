package gpu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// ManifestVersion is the version of the kernel manifest format
// (docs/kernel-abi.md) this build reads.
const ManifestVersion = 1

// Manifest describes a user's kernel: the compiled image, its entry point,
// the op it implements, the order of its parameters, the dtypes it takes,
// its launch geometry as expressions of the shape, and what it claims
// (a schedule, so oracle parity is bitwise, or an ulp bound). LoadManifest
// reads and checks one; it needs no GPU.
type Manifest struct {
	Path  string // the manifest file
	Raw   []byte // its bytes as read
	Name  string // target name is "kernel:" + Name
	Op    spec.Op
	Entry string
	// Image is the PTX text or the cubin bytes; ImagePath the file.
	Image     []byte
	ImagePath string
	Cubin     bool
	// Fatbin is the fat image named by the manifest's "fatbin" (nvcc
	// -fatbin of the same kernel: SASS for the GPUs built for, PTX for the
	// others), loaded in place of Image; nil when the manifest names none
	// or FatbinPath does not exist (then Image is loaded).
	Fatbin     []byte
	FatbinPath string
	Params     []string // parameter names in the kernel's order
	In, Out    []oracle.DType
	Grid       [3]*Expr // nil: 1
	Block      [3]*Expr
	Shared     *Expr // dynamic shared memory bytes; nil: 0
	Schedule   string
	ULPBound   uint64
	Timeout    time.Duration
	About      string
	// Layout: the kernel reads the batch's layout through its op's
	// kernelOp.Layout parameter (the manifest's "layout": true); its
	// target's Info.Layouts is set.
	Layout bool
}

// manifestFile is the JSON form (docs/kernel-abi.md).
type manifestFile struct {
	Version  int      `json:"version"`
	Name     string   `json:"name"`
	Op       string   `json:"op"`
	PTX      string   `json:"ptx"`
	Cubin    string   `json:"cubin"`
	Fatbin   string   `json:"fatbin"`
	Entry    string   `json:"entry"`
	Params   []string `json:"params"`
	In       []string `json:"in"`
	Out      []string `json:"out"`
	Grid     []string `json:"grid"`
	Block    []string `json:"block"`
	Shared   string   `json:"shared"`
	Schedule string   `json:"schedule"`
	ULPBound *uint64  `json:"ulp_bound"`
	Timeout  string   `json:"timeout"`
	About    string   `json:"about"`
	Layout   bool     `json:"layout"`
}

// floatScalars are the parameters passed as fp32 bits.
var floatScalars = []string{"eps", "scale"}

// Geometry limits checked at load (on sample shapes) and at every launch.
const (
	maxBlockThreads = 1024
	maxSharedBytes  = 48 << 10 // without the opt-in attribute
	maxGridX        = 1<<31 - 1
	maxGridYZ       = 65535
	maxTimeout      = time.Hour
	defaultTimeout  = 2 * time.Minute
)

// ManifestError names the manifest file and the field that is wrong.
type ManifestError struct {
	Path  string
	Field string
	Err   error
}

func (e *ManifestError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("kernel manifest %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("kernel manifest %s: field %q: %v", e.Path, e.Field, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// LoadManifest reads and checks the manifest at path: every field, the
// image files (relative to the manifest's folder and within it, unless
// opts.AnyPath), the entry point and its parameter count (PTX), and the
// geometry on sample shapes. The manifest and its images are regular
// files within MaxManifestBytes and MaxImageBytes, checked before they are
// read. Errors are *ManifestError naming the field.
func LoadManifest(path string, opts ManifestOptions) (*Manifest, error) {
	raw, err := readManifestFile(path)
	if err != nil {
		return nil, &ManifestError{Path: path, Err: err}
	}
	return ParseManifest(path, raw, opts)
}

// ParseManifest checks the manifest raw read from path (image paths are
// relative to path's folder and, unless opts.AnyPath, within it).
func ParseManifest(path string, raw []byte, opts ManifestOptions) (*Manifest, error) {
	bad := func(field, format string, a ...any) error {
		return &ManifestError{Path: path, Field: field, Err: fmt.Errorf(format, a...)}
	}
	var f manifestFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad(te.Field, "%v", err)
		}
		return nil, &ManifestError{Path: path, Err: fmt.Errorf("not a JSON manifest: %w", err)}
	}
	m := &Manifest{Path: path, Raw: raw, About: f.About}
	var err error
	if f.Version != ManifestVersion {
		return nil, bad("version", "%d, this build reads version %d", f.Version, ManifestVersion)
	}
	m.Name = f.Name
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if !nameRE.MatchString(m.Name) {
		return nil, bad("name", "%q: want letters, digits, '.', '_' and '-'", m.Name)
	}
	m.Op = spec.Op(f.Op)
	abi, ok := kernelOps[m.Op]
	if !ok {
		return nil, bad("op", "unknown op %q (user kernels implement %s)", f.Op, kernelOpNames())
	}

	// Image.
	switch {
	case f.PTX != "" && f.Cubin != "":
		return nil, bad("ptx", "give ptx or cubin, not both")
	case f.PTX == "" && f.Cubin == "":
		return nil, bad("ptx", "missing: name the PTX (or cubin) file, relative to the manifest")
	}
	field, rel := "ptx", f.PTX
	if f.Cubin != "" {
		field, rel, m.Cubin = "cubin", f.Cubin, true
	}
	dir := filepath.Dir(path)
	if m.Image, m.ImagePath, err = readImage(dir, rel, opts); err != nil {
		return nil, bad(field, "%v", err)
	}
	if len(m.Image) == 0 {
		return nil, bad(field, "%s is empty", m.ImagePath)
	}
	if f.Fatbin != "" {
		var b []byte
		b, m.FatbinPath, err = readImage(dir, f.Fatbin, opts)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// not built here: the PTX or cubin is loaded
		case err != nil:
			return nil, bad("fatbin", "%v", err)
		case len(b) == 0:
			return nil, bad("fatbin", "%s is empty", m.FatbinPath)
		default:
			m.Fatbin = b
		}
	}
	if m.Entry = f.Entry; m.Entry == "" {
		return nil, bad("entry", "missing: the kernel's entry point (its extern \"C\" name)")
	}

	// Parameters.
	known := map[string]bool{"y": true}
	for _, s := range [][]string{abi.Inputs, abi.Taps, abi.Sizes, abi.Scalars} {
		for _, n := range s {
			known[n] = true
		}
	}
	seen := map[string]bool{}
	for i, p := range f.Params {
		if !known[p] {
			return nil, bad("params", "parameter %d %q is not a parameter of op %s (known: %s)", i, p, m.Op, strings.Join(sortedKeys(known), ", "))
		}
		if seen[p] {
			return nil, bad("params", "parameter %q given twice", p)
		}
		seen[p] = true
	}
	for _, p := range append(slices.Clone(abi.Inputs), "y") {
		if !seen[p] {
			return nil, bad("params", "missing pointer %q (op %s needs %s and y)", p, m.Op, strings.Join(abi.Inputs, ", "))
		}
	}
	if m.Layout = f.Layout; m.Layout {
		switch {
		case abi.Layout == "":
			return nil, bad("layout", "op %s has no layout to read", m.Op)
		case !seen[abi.Layout]:
			return nil, bad("params", "missing %q: a kernel that reads the layout (\"layout\": true) takes it", abi.Layout)
		}
	}
	m.Params = f.Params
	if !m.Cubin {
		types, err := ptxParamTypes(m.Image, m.Entry)
		if err != nil {
			return nil, bad("entry", "%v", err)
		}
		if len(types) != len(m.Params) {
			return nil, bad("params", "%d names, but the PTX entry %s takes %d parameters", len(m.Params), m.Entry, len(types))
		}
		if err := checkParamTypes(m.Params, types, abi.Inputs, abi.Taps); err != nil {
			return nil, bad("params", "PTX entry %s: %v", m.Entry, err)
		}
	}

	// Dtypes.
	if m.In, err = parseDTypes(f.In); err != nil {
		return nil, bad("in", "%v", err)
	}
	if abi.OutFP32 {
		if len(f.Out) > 0 && !slices.Equal(f.Out, []string{"fp32"}) {
			return nil, bad("out", "%s outputs are fp32", m.Op)
		}
		m.Out = []oracle.DType{oracle.FP32}
	} else if m.Out, err = parseDTypes(f.Out); err != nil {
		return nil, bad("out", "%v", err)
	}
	if len(m.In) > 1 && !seen["in_dtype"] {
		return nil, bad("params", "several input dtypes %v need the parameter in_dtype", f.In)
	}
	if len(m.Out) > 1 && !seen["out_dtype"] {
		return nil, bad("params", "several output dtypes %v need the parameter out_dtype", f.Out)
	}

	// Geometry.
	if err := parseDims("grid", f.Grid, &m.Grid, bad); err != nil {
		return nil, err
	}
	if err := parseDims("block", f.Block, &m.Block, bad); err != nil {
		return nil, err
	}
	if f.Shared != "" {
		if m.Shared, err = ParseExpr(f.Shared); err != nil {
			return nil, bad("shared", "%q: %v", f.Shared, err)
		}
	}
	for _, sample := range abi.Samples {
		if _, _, _, err := m.Geometry(sample); err != nil {
			var me *ManifestError
			if errors.As(err, &me) {
				me.Err = fmt.Errorf("%w (at the sample shape %s)", me.Err, shapeWords(sample))
			}
			return nil, err
		}
	}

	// Claim.
	switch {
	case f.Schedule != "" && f.ULPBound != nil:
		return nil, bad("schedule", "give a schedule (bitwise oracle parity) or ulp_bound, not both")
	case f.Schedule != "":
		sch, err := target.ParseSchedule(m.Op, f.Schedule)
		if err != nil {
			return nil, bad("schedule", "%v", err)
		}
		if a, ok := sch.(oracle.AttentionSchedule); ok && abi.OneSplit && a.Splits != 1 {
			return nil, bad("schedule", "%q: a prefill row is one split (want splits=1)", f.Schedule)
		}
		m.Schedule = f.Schedule
	case f.ULPBound != nil:
		if err := target.CheckULPBound(*f.ULPBound); err != nil {
			return nil, bad("ulp_bound", "%v", err)
		}
		m.ULPBound = *f.ULPBound
	default:
		return nil, bad("schedule", "missing: declare the oracle schedule the kernel implements, or an ulp_bound")
	}
	m.Timeout = defaultTimeout
	if f.Timeout != "" {
		if m.Timeout, err = time.ParseDuration(f.Timeout); err != nil {
			return nil, bad("timeout", "%v", err)
		}
		if m.Timeout <= 0 || m.Timeout > maxTimeout {
			return nil, bad("timeout", "%v: want more than 0 and at most %v", m.Timeout, maxTimeout)
		}
	}
	return m, nil
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func parseDTypes(names []string) ([]oracle.DType, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("missing: list the dtypes the kernel takes (bf16, fp16, fp32)")
	}
	var out []oracle.DType
	for _, n := range names {
		var d oracle.DType
		switch n {
		case "bf16":
			d = oracle.BF16
		case "fp16":
			d = oracle.FP16
		case "fp32":
			d = oracle.FP32
		default:
			return nil, fmt.Errorf("unknown dtype %q (bf16, fp16, fp32)", n)
		}
		if slices.Contains(out, d) {
			return nil, fmt.Errorf("dtype %s listed twice", n)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseDims(field string, src []string, dst *[3]*Expr, bad func(field, format string, a ...any) error) error {
	if len(src) == 0 || len(src) > 3 {
		return bad(field, "want 1 to 3 expressions (x, y, z), got %d", len(src))
	}
	for i, s := range src {
		e, err := ParseExpr(s)
		if err != nil {
			return bad(field, "%s %q: %v", "xyz"[i:i+1], s, err)
		}
		dst[i] = e
	}
	return nil
}

func shapeWords(s map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(func() map[string]bool {
		m := map[string]bool{}
		for k := range s {
			m[k] = true
		}
		return m
	}()) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s[k]))
	}
	return strings.Join(parts, " ")
}

// Geometry evaluates the launch geometry for a shape (the op's size names;
// "block" is the block's x size, for grid and shared) and checks it: block
// threads 1..1024, grid x 1..2^31-1, y and z 1..65535, shared memory
// 0..48 KiB. Errors are *ManifestError naming the field.
func (m *Manifest) Geometry(shape map[string]int64) (grid, block [3]int, shared int, err error) {
	env := make(map[string]int64, len(shape)+1)
	for k, v := range shape {
		env[k] = v
	}
	bad := func(field, format string, a ...any) error {
		return &ManifestError{Path: m.Path, Field: field, Err: fmt.Errorf(format, a...)}
	}
	eval := func(field string, i int, e *Expr) (int64, error) {
		if e == nil {
			return 1, nil
		}
		v, err := e.Eval(env)
		if err != nil {
			return 0, bad(field, "%s: %v", "xyz"[i:i+1], err)
		}
		return v, nil
	}
	threads := int64(1)
	for i, e := range m.Block {
		v, err := eval("block", i, e)
		if err != nil {
			return grid, block, 0, err
		}
		if v < 1 || v > maxBlockThreads {
			return grid, block, 0, bad("block", "%s = %q is %d (want 1..%d)", "xyz"[i:i+1], e, v, maxBlockThreads)
		}
		block[i] = int(v)
		threads *= v
	}
	if threads > maxBlockThreads {
		return grid, block, 0, bad("block", "%d x %d x %d = %d threads (at most %d)", block[0], block[1], block[2], threads, maxBlockThreads)
	}
	env["block"] = int64(block[0])
	for i, e := range m.Grid {
		v, err := eval("grid", i, e)
		if err != nil {
			return grid, block, 0, err
		}
		limit := int64(maxGridYZ)
		if i == 0 {
			limit = maxGridX
		}
		if v < 1 || v > limit {
			return grid, block, 0, bad("grid", "%s = %q is %d (want 1..%d)", "xyz"[i:i+1], e, v, limit)
		}
		grid[i] = int(v)
	}
	if m.Shared != nil {
		v, err := m.Shared.Eval(env)
		if err != nil {
			return grid, block, 0, bad("shared", "%v", err)
		}
		if v < 0 || v > maxSharedBytes {
			return grid, block, 0, bad("shared", "%q is %d bytes (want 0..%d)", m.Shared, v, maxSharedBytes)
		}
		shared = int(v)
	}
	return grid, block, shared, nil
}

// ImageHash identifies the code a certificate of this kernel is about:
// "ptx:" (or "cubin:") and the first 16 hex digits of the image's sha256,
// followed by "+fatbin:" and the fat image's when the manifest has one
// here (the image the worker loads in its place).
func (m *Manifest) ImageHash() string {
	kind := "ptx"
	if m.Cubin {
		kind = "cubin"
	}
	h := kind + ":" + sha256Hex(m.Image)[:16]
	if m.Fatbin != nil {
		h += "+fatbin:" + sha256Hex(m.Fatbin)[:16]
	}
	return h
}

// Info is the target.Info of the user kernel target kernel:NAME: it claims
// invariance (that is what is tested), oracle parity by its schedule
// (bitwise) or its ulp bound, and that it reads the batch's layout when
// its manifest says so.
func (m *Manifest) Info(device string) target.Info {
	about := m.About
	if about == "" {
		about = "user kernel " + m.Entry
	}
	return target.Info{Name: "kernel:" + m.Name, Op: m.Op, Device: device, Invariant: true,
		Schedule: m.Schedule, ULPBound: m.ULPBound, Layouts: m.Layout,
		Models: fmt.Sprintf("%s (%s, entry %s, manifest %s)", about, filepath.Base(m.ImagePath), m.Entry, m.Path)}
}

// ptxParamTypes finds `.entry NAME(` in PTX text and returns the type of
// each `.param` declaration in order ("u64", "f32", ...; for
// `.param .align 4 .b8 p[16]` "b8").
func ptxParamTypes(ptx []byte, entry string) ([]string, error) {
	src := string(ptx)
	re := regexp.MustCompile(`\.entry\s+` + regexp.QuoteMeta(entry) + `\s*\(`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		var names []string
		for _, mm := range regexp.MustCompile(`\.entry\s+([A-Za-z_$][\w$]*)`).FindAllStringSubmatch(src, -1) {
			names = append(names, mm[1])
		}
		return nil, fmt.Errorf("the PTX has no entry %q (it has: %s)", entry, strings.Join(names, ", "))
	}
	end := strings.IndexByte(src[loc[1]:], ')')
	if end < 0 {
		return nil, fmt.Errorf("entry %s: unterminated parameter list", entry)
	}
	var types []string
	for _, mm := range paramRE.FindAllStringSubmatch(src[loc[1]:loc[1]+end], -1) {
		types = append(types, mm[1])
	}
	return types, nil
}

var paramRE = regexp.MustCompile(`\.param\s+(?:\.align\s+\d+\s+)?\.([a-z]+[0-9]*)`)

// checkParamTypes checks the PTX types of the named parameters: a pointer
// (an input, y or a tap) is 64 bits (.u64, .b64 or .s64: a pointer in an
// int would be cut); eps and scale are not .f64 (they are fp32 bits:
// declare them float); a size or a dtype code is an integer, 32 or 64 bits.
func checkParamTypes(names, types, inputs, taps []string) error {
	for i, n := range names {
		t := types[i]
		switch {
		case n == "y" || slices.Contains(inputs, n) || slices.Contains(taps, n):
			if t != "u64" && t != "b64" && t != "s64" {
				return fmt.Errorf("parameter %d %q is a pointer, declared .%s (want a 64-bit pointer)", i, n, t)
			}
		case slices.Contains(floatScalars, n):
			if t != "f32" && t != "u64" && t != "b64" && t != "b32" && t != "u32" {
				return fmt.Errorf("parameter %d %q is fp32 bits, declared .%s (declare it float)", i, n, t)
			}
		default:
			if !slices.Contains([]string{"u32", "s32", "b32", "u64", "s64", "b64"}, t) {
				return fmt.Errorf("parameter %d %q is an integer, declared .%s (want int or long long)", i, n, t)
			}
		}
	}
	return nil
}

// ErrUnsupported is wrapped by a GPU target's Run error when it does not
// implement the batch (a user kernel given a dtype its manifest does not
// list, a cuBLAS target given an input dtype it has no call for). It is
// not a crash: `bitparity worker` answers it as "unsupported".
var ErrUnsupported = target.ErrUnsupported
