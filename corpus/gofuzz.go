package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bitparity/bitparity/fuzz/native"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/gofuzzfile"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Native fuzz target names (fuzz/native/native_test.go) are
// "Fuzz" + op word (its package's ops.CaseOp.FuzzWord) + relation word:
//
//	op:        rmsnorm RMSNorm, gemm GEMM, logprob LogProb,
//	           attn_prefill AttnPrefill, attn_decode Decode
//	relation:  batch_invariance BatchInvariance, padding Padding,
//	           oracle_parity OracleParity, path_parity PathParity,
//	           determinism Determinism, logprob_parity Parity
//
// so FuzzRMSNormPadding is rmsnorm under padding and FuzzLogProbParity is
// logprob under logprob_parity.
var relWords = map[string]string{spec.RelBatchInvariance: "BatchInvariance", spec.RelPadding: "Padding",
	spec.RelOracleParity: "OracleParity", spec.RelPathParity: "PathParity", spec.RelDeterminism: "Determinism",
	spec.RelLogProbParity: "Parity"}

// FuzzTargetName returns the native fuzz target of op under relation.
func FuzzTargetName(op spec.Op, relation string) (string, error) {
	k, ok1 := all.Case(op)
	r, ok2 := relWords[relation]
	if !ok1 || !ok2 {
		return "", fmt.Errorf("no native fuzz target for %s under %s", op, relation)
	}
	return "Fuzz" + k.FuzzWord() + r, nil
}

// ParseFuzzTargetName is the inverse of FuzzTargetName.
func ParseFuzzTargetName(name string) (spec.Op, string, error) {
	for _, k := range all.Cases {
		rest, ok := strings.CutPrefix(name, "Fuzz"+k.FuzzWord())
		if !ok {
			continue
		}
		for rel, r := range relWords {
			if rest == r {
				return k.Name(), rel, nil
			}
		}
	}
	return "", "", fmt.Errorf("%q is not a native fuzz target name (Fuzz<Op><Relation>, e.g. FuzzRMSNormPadding)", truncate(name))
}

// GoFuzzOptions tune ImportGoFuzz; the zero value is valid.
type GoFuzzOptions struct {
	// Sets are the target sets each input is run against, as in
	// native.TargetSets; nil means native.TargetSets(op, relation) (the
	// invariant targets plus $BITPARITY_FUZZ_TARGETS), the sets the native
	// target ran.
	Sets [][]string
	// MaxElements skips inputs whose case needs more input values
	// (spec.Case.Elements); 0 means spec.MaxElements.
	MaxElements int
	// All also stores inputs that find nothing, as pass cases on the first
	// target set.
	All bool
	// Source labels the stored files (File.Source); default "gofuzz:<FuzzName>".
	Source string
}

// GoFuzzResult is what ImportGoFuzz did with one input file.
type GoFuzzResult struct {
	Path     string
	FuzzName string
	// Name is the stored case file, empty when none was stored.
	Name  string
	Added bool
	// Finding is the kind of finding the input gave ("" when none).
	Finding string
	// Skipped says why the input was not stored (no finding, too large).
	Skipped string
	Err     error
}

// ImportGoFuzz turns `go test -fuzz` inputs into case files in dst. Each
// path is an input file (testdata/fuzz/FuzzX/NAME or
// $GOCACHE/fuzz/<pkg>/FuzzX/NAME) or a folder searched for such files;
// the folder a file sits in names the native target, hence op and relation
// (ParseFuzzTargetName). Each input is decoded with native.Decode, run
// against the target sets, and stored with the finding it gives; inputs
// that find nothing are skipped unless opts.All. Errors about single files
// are in the results; the error is for a path that cannot be read at all.
func ImportGoFuzz(ctx context.Context, dst Store, paths []string, opts GoFuzzOptions) ([]GoFuzzResult, error) {
	if opts.MaxElements == 0 {
		opts.MaxElements = spec.MaxElements
	}
	var files []string
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if st.Mode().IsRegular() {
			files = append(files, p)
			continue
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a file or folder", p)
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && !isTemp(d.Name()) {
				if _, _, err := ParseFuzzTargetName(filepath.Base(filepath.Dir(path))); err == nil {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var out []GoFuzzResult
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, importOne(ctx, dst, p, opts))
	}
	return out, nil
}

func importOne(ctx context.Context, dst Store, path string, opts GoFuzzOptions) GoFuzzResult {
	r := GoFuzzResult{Path: path, FuzzName: filepath.Base(filepath.Dir(path))}
	fail := func(err error) GoFuzzResult { r.Err = err; return r }
	op, rel, err := ParseFuzzTargetName(r.FuzzName)
	if err != nil {
		return fail(fmt.Errorf("the folder names no native target: %w", err))
	}
	data, err := readLimited(path)
	if err != nil {
		return fail(err)
	}
	vals, err := gofuzzfile.Parse(data)
	if err != nil {
		return fail(err)
	}
	b, ok := vals[0].([]byte)
	if len(vals) != 1 || !ok {
		return fail(fmt.Errorf("want one []byte value, the native targets' argument; got %d value(s)", len(vals)))
	}
	c, err := native.Decode(op, rel, b)
	if err != nil {
		r.Skipped = fmt.Sprintf("not a valid case: %v", err)
		return r
	}
	if e := c.Elements(); e > opts.MaxElements {
		r.Skipped = fmt.Sprintf("%d input values, above the import limit %d", e, opts.MaxElements)
		return r
	}
	sets := opts.Sets
	if sets == nil {
		if sets, err = native.TargetSets(op, rel); err != nil {
			return fail(err)
		}
	}
	if len(sets) == 0 {
		return fail(fmt.Errorf("no target set runs %s under %s in this build", op, rel))
	}
	fd, err := native.Find(ctx, c, sets)
	if err != nil {
		return fail(err)
	}
	source := opts.Source
	if source == "" {
		source = "gofuzz:" + r.FuzzName
	}
	var f *File
	switch {
	case fd != nil:
		r.Finding = string(fd.Kind)
		f = NewFile(fd.Case, fd, fd.Env, source)
	case opts.All:
		c.Targets = sets[0]
		f = NewFile(c, nil, spec.Env{}, source)
	default:
		r.Skipped = "finds nothing on " + describeSets(sets)
		return r
	}
	f.Note = "imported from " + path
	r.Name, r.Added, err = dst.Put(f)
	if err != nil {
		return fail(err)
	}
	return r
}

func describeSets(sets [][]string) string {
	var parts []string
	for _, s := range sets {
		parts = append(parts, strings.Join(s, "+"))
	}
	return strings.Join(parts, ", ")
}

// ErrNotNative is returned by ExportGoFuzz for a case the native byte
// format cannot hold (explicit data, or fields the format drops).
var ErrNotNative = errors.New("the case cannot be written in the native fuzz byte format")

// ExportGoFuzz writes the case of f as a `go test -fuzz` corpus entry:
// root/FuzzX/<case hash>, where FuzzX is FuzzTargetName(op, relation) and
// the content is native.SeedFile (the byte format of native.Encode). The
// native target runs its own target sets, so the case's targets are not
// carried, and neither are fields nothing reads (nativeFields); a case
// whose other fields do not survive native.Encode and native.Decode
// (explicit data, a shape over the native targets' limits) is refused with
// ErrNotNative. The file is written atomically; its path is
// returned.
func ExportGoFuzz(f *File, root string) (string, error) {
	c := f.Case
	name, err := FuzzTargetName(c.Op, c.Relation)
	if err != nil {
		return "", err
	}
	if c.Data != nil {
		return "", fmt.Errorf("%w: explicit data", ErrNotNative)
	}
	back, err := native.Decode(c.Op, c.Relation, native.Encode(c))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotNative, err)
	}
	back.Targets = c.Targets
	h1, _ := CaseHash(c)
	want, _ := CaseHash(nativeFields(c))
	if got, _ := CaseHash(back); got != want {
		return "", fmt.Errorf("%w: it comes back as another case (shape %+v, rel %+v)", ErrNotNative, back.Shape, back.Rel)
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(dir, h1), native.SeedFile(c)); err != nil {
		return "", err
	}
	return filepath.Join(dir, h1), nil
}

// nativeFields returns c without the fields the native format drops
// because nothing reads them: eps outside rmsnorm, and the Rel fields its
// relation does not read (batch_invariance reads row, batch, position and
// perm_seed; padding pad and filler; logprob_parity mask).
func nativeFields(c spec.Case) spec.Case {
	if o, _ := c.Op.Info(); !o.Eps {
		c.Eps = 0
	}
	r := c.Rel
	c.Rel = spec.RelParams{}
	switch c.Relation {
	case spec.RelBatchInvariance:
		c.Rel.Row, c.Rel.Batch, c.Rel.Position, c.Rel.PermSeed = r.Row, r.Batch, r.Position, r.PermSeed
	case spec.RelPadding:
		c.Rel.Pad, c.Rel.Filler = r.Pad, r.Filler
	case spec.RelLogProbParity:
		c.Rel.Mask = r.Mask
	}
	return c
}

// ExportAll writes each entry as a go test -fuzz corpus entry under root
// (ExportGoFuzz), with a line per file written on out and per case it
// skips (with why) on warn, then how many it wrote.
func ExportAll(entries []Entry, root string, out, warn io.Writer) {
	n := 0
	for _, e := range entries {
		p, err := ExportGoFuzz(e.File, root)
		if err != nil {
			fmt.Fprintf(warn, "skipped %s: %v\n", e.Name, err)
			continue
		}
		n++
		fmt.Fprintf(out, "wrote %s\n", p)
	}
	fmt.Fprintf(out, "exported %d of %d case(s) to %s (re-run: go test -run 'FuzzX/<hash>' ./fuzz/native)\n", n, len(entries), root)
}

// ParseSets reads target sets as `bitparity corpus import -targets` takes
// them: comma-separated sets, the targets of a two-target set joined by
// '+' ("a,b+c" is {a} and {b, c}); blanks are dropped, "" is none.
func ParseSets(list string) [][]string {
	var sets [][]string
	for _, set := range strings.Split(list, ",") {
		if set = strings.TrimSpace(set); set != "" {
			sets = append(sets, strings.Split(set, "+"))
		}
	}
	return sets
}
