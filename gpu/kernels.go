package gpu

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// kernelFS holds the CUDA sources, the PTX made from them, kernels.sha256,
// and, once scripts/fatbin.sh has run, one fat image per module with
// fatbin.sha256. The whole folder is embedded so that a build without fat
// images still compiles; the names are looked up when a module loads.
//
//go:embed kernels
var kernelFS embed.FS

// Modules lists the PTX modules the package loads, one per kernels/*.cu.
var Modules = []string{"attention", "compare", "gemm", "gen", "logprob", "moe_route", "nudge", "probe", "quant_fp8", "rmsnorm"}

// PTX returns the embedded PTX of module name (kernels/name.ptx).
func PTX(name string) (string, error) {
	b, err := kernelFS.ReadFile("kernels/" + name + ".ptx")
	if err != nil {
		return "", fmt.Errorf("gpu: no PTX for module %s in this build (run make ptx where nvcc exists): %w", name, err)
	}
	return string(b), nil
}

// kernelFiles lists the embedded files of kernels/ whose names end in one
// of exts, sorted.
func kernelFiles(exts ...string) ([]string, error) {
	ents, err := fs.ReadDir(kernelFS, "kernels")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		for _, x := range exts {
			if strings.HasSuffix(e.Name(), x) {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// ModuleImage says which image of a kernel module a device loaded: the fat
// image (machine code for the GPU, or the PTX inside it) or the .ptx, and
// how long the driver took to load it (a JIT compile shows there).
type ModuleImage struct {
	Module string // "rmsnorm"
	Fatbin bool   // the fat image kernels/Module.fatbin, else kernels/Module.ptx
	// Code is what the driver runs: "sm_90" is machine code (SASS) built
	// for the GPU; "compute_90" or "compute_80" is PTX it JIT-compiled.
	Code string
	// Note says why the .ptx was loaded in place of a fat image ("" when
	// the fat image was loaded).
	Note string
	Load time.Duration // cuModuleLoadData's wall time
}

// JIT reports whether the driver compiled PTX to load the module.
func (m ModuleImage) JIT() bool { return strings.HasPrefix(m.Code, "compute_") }

// String is one line of `bitparity version`, e.g. "rmsnorm: fat image,
// SASS sm_90, loaded in 1.2ms" or "rmsnorm: PTX compute_80, JIT-compiled
// by the driver in 1.31s (no fat images in this build: ...)".
func (m ModuleImage) String() string {
	var s string
	switch {
	case m.Fatbin && !m.JIT():
		s = fmt.Sprintf("%s: fat image, SASS %s, loaded in %s", m.Module, m.Code, m.Load.Round(100*time.Microsecond))
	case m.Fatbin:
		s = fmt.Sprintf("%s: fat image, PTX %s JIT-compiled by the driver in %s", m.Module, m.Code, m.Load.Round(time.Millisecond))
	default:
		s = fmt.Sprintf("%s: PTX %s, JIT-compiled by the driver in %s", m.Module, m.Code, m.Load.Round(time.Millisecond))
	}
	if m.Note != "" {
		s += " (" + m.Note + ")"
	}
	return s
}

// fatbinSet is kernels/fatbin.sha256 read and checked against the embedded
// sources: the codes each fat image holds, the sha256 of each image, and
// the sources changed since the images were made. When the record is
// absent or unreadable, note says so and no fat image is used; a module
// whose own sources changed (its .cu and the headers it includes) loads
// its PTX.
type fatbinSet struct {
	codes   []string          // "sm_80", "sm_90", ..., "compute_90"
	images  map[string]string // "rmsnorm.fatbin" -> sha256
	changed map[string]bool   // "compare.cu" -> true: not the source the images were made from
	note    string            // why no fat image may be loaded, or ""
}

var (
	fatOnce sync.Once
	fatSet  fatbinSet
)

// fatbins reads kernels/fatbin.sha256 once.
func fatbins() fatbinSet {
	fatOnce.Do(func() { fatSet = readFatbinSet(kernelFS, "kernels") })
	return fatSet
}

// readFatbinSet reads dir/fatbin.sha256 in fsys ("# code: ..." and
// "<sha256>  <file>" lines) and notes every .cu and .cuh file in dir not
// listed with its current hash: the fat images made from it are stale and
// are not used (fatImage).
func readFatbinSet(fsys fs.FS, dir string) fatbinSet {
	raw, err := fs.ReadFile(fsys, dir+"/fatbin.sha256")
	if errors.Is(err, fs.ErrNotExist) {
		return fatbinSet{note: "no fat images in this build: run make fatbin where nvcc exists"}
	}
	if err != nil {
		return fatbinSet{note: fmt.Sprintf("fatbin.sha256: %v", err)}
	}
	sums, codes, err := parseSums(raw)
	if err != nil {
		return fatbinSet{note: fmt.Sprintf("fatbin.sha256: %v", err)}
	}
	if len(codes) == 0 {
		return fatbinSet{note: "fatbin.sha256 has no \"# code:\" line"}
	}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fatbinSet{note: err.Error()}
	}
	set := fatbinSet{codes: codes, images: map[string]string{}, changed: map[string]bool{}}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".cu") && !strings.HasSuffix(name, ".cuh") {
			continue
		}
		b, err := fs.ReadFile(fsys, dir+"/"+name)
		if err != nil {
			return fatbinSet{note: err.Error()}
		}
		if sums[name] != sha256Hex(b) {
			set.changed[name] = true
		}
	}
	for f, h := range sums {
		if strings.HasSuffix(f, ".fatbin") {
			set.images[f] = h
		}
	}
	return set
}

// parseSums parses a sha256sum listing with '#' comments into file ->
// sha256, and the codes of its "# code: sm_80 sm_90 compute_90" line.
func parseSums(raw []byte) (map[string]string, []string, error) {
	sums := map[string]string{}
	var codes []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "# code:"); ok {
			codes = strings.Fields(c)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || len(f[0]) != 64 {
			return nil, nil, fmt.Errorf("bad line %q", line)
		}
		sums[strings.TrimPrefix(f[1], "*")] = f[0]
	}
	return sums, codes, sc.Err()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pickCode returns the code of codes the driver runs on a GPU of compute
// capability major.minor: the newest SASS sm_XY with X = major and Y <=
// minor (machine code runs within its major version), else the newest PTX
// compute_XY with XY <= major*10+minor (JIT-compiled); "" when none fits.
func pickCode(codes []string, major, minor int) string {
	cc := major*10 + minor
	best, bestPTX := -1, -1
	for _, c := range codes {
		if v, ok := codeNumber(c, "sm_"); ok && v/10 == major && v <= cc && v > best {
			best = v
		}
		if v, ok := codeNumber(c, "compute_"); ok && v <= cc && v > bestPTX {
			bestPTX = v
		}
	}
	switch {
	case best >= 0:
		return fmt.Sprintf("sm_%d", best)
	case bestPTX >= 0:
		return fmt.Sprintf("compute_%d", bestPTX)
	}
	return ""
}

// codeNumber parses "sm_90" (prefix "sm_") into 90.
func codeNumber(code, prefix string) (int, bool) {
	s, ok := strings.CutPrefix(code, prefix)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

var ptxTarget = regexp.MustCompile(`(?m)^\s*\.target\s+sm_(\d+)`)

// moduleImage picks the image of module name to load on a GPU of compute
// capability major.minor: its fat image when the build has one that
// matches fatbin.sha256, made from the sources in the build, and holding
// code the GPU runs; otherwise the .ptx, with a note saying why.
func moduleImage(name string, major, minor int) ([]byte, ModuleImage, error) {
	return pickImage(kernelFS, "kernels", fatbins(), name, major, minor)
}

func pickImage(fsys fs.FS, dir string, set fatbinSet, name string, major, minor int) ([]byte, ModuleImage, error) {
	im := ModuleImage{Module: name, Note: set.note}
	if im.Note == "" {
		im.Note = fatImage(fsys, dir, set, name, major, minor)
		if im.Note == "" {
			img, _ := fs.ReadFile(fsys, dir+"/"+name+".fatbin")
			im.Fatbin, im.Code = true, pickCode(set.codes, major, minor)
			return img, im, nil
		}
	}
	return ptxImage(fsys, dir, name, im.Note)
}

// ptxImage returns module name's PTX (dir/name.ptx) and its ModuleImage,
// noted with why the PTX is loaded.
func ptxImage(fsys fs.FS, dir, name, note string) ([]byte, ModuleImage, error) {
	im := ModuleImage{Module: name, Code: "compute_?", Note: note}
	ptx, err := fs.ReadFile(fsys, dir+"/"+name+".ptx")
	if err != nil {
		return nil, im, fmt.Errorf("gpu: no PTX for module %s in this build (run make ptx where nvcc exists): %w", name, err)
	}
	if m := ptxTarget.FindSubmatch(ptx); m != nil {
		im.Code = "compute_" + string(m[1])
	}
	return ptx, im, nil
}

// includeLine matches a local include: #include "digest.cuh".
var includeLine = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// sources returns file and the files of dir it includes with #include
// "...", transitively, in the order first reached.
func sources(fsys fs.FS, dir, file string) []string {
	seen := map[string]bool{file: true}
	out := []string{file}
	for i := 0; i < len(out); i++ {
		b, _ := fs.ReadFile(fsys, dir+"/"+out[i]) // a missing file includes nothing; the image check said so
		for _, m := range includeLine.FindAllSubmatch(b, -1) {
			if f := string(m[1]); !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// fatImage checks module name's fat image against set and the GPU: "" when
// it may be loaded, else why not.
func fatImage(fsys fs.FS, dir string, set fatbinSet, name string, major, minor int) string {
	file := name + ".fatbin"
	want, ok := set.images[file]
	if !ok {
		return fmt.Sprintf("fatbin.sha256 does not list %s: run make fatbin", file)
	}
	img, err := fs.ReadFile(fsys, dir+"/"+file)
	if err != nil {
		return fmt.Sprintf("no %s in this build: run make fatbin", file)
	}
	if sha256Hex(img) != want {
		return fmt.Sprintf("%s does not match fatbin.sha256: run make fatbin", file)
	}
	for _, src := range sources(fsys, dir, name+".cu") {
		if set.changed[src] {
			return fmt.Sprintf("the fat image is stale: %s changed since scripts/fatbin.sh ran", src)
		}
	}
	if pickCode(set.codes, major, minor) == "" {
		return fmt.Sprintf("the fat image holds %s, nothing sm_%d%d runs", strings.Join(set.codes, " "), major, minor)
	}
	return ""
}
