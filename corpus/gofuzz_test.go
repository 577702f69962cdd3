package corpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestFuzzTargetNames checks the naming against fuzz/native's own seed
// folders: each one names an op and relation, and back.
func TestFuzzTargetNames(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join("..", "fuzz", "native", "testdata", "fuzz"))
	if err != nil {
		t.Skipf("fuzz/native seed corpus: %v", err)
	}
	for _, e := range ents {
		op, rel, err := ParseFuzzTargetName(e.Name())
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if n, _ := FuzzTargetName(op, rel); n != e.Name() {
			t.Errorf("%s -> %s %s -> %s", e.Name(), op, rel, n)
		}
	}
	if _, _, err := ParseFuzzTargetName("FuzzRMSNormPaddingX"); err == nil {
		t.Errorf("parsed a wrong name")
	}
}

// driftPadding is an rmsnorm padding case (fp32 output, so the drift shows
// on every run) that the rows % 32 drift model fails.
func driftPadding() spec.Case {
	c := knownCase(spec.OpRMSNorm, spec.RelPadding, spec.Shape{Rows: 32, Hidden: 64}, spec.RelParams{Pad: 33, Filler: "zeros"}, "drift-rmsnorm-te-mod32")
	c.Out = spec.FP32
	return c
}

func TestGoFuzzExportImport(t *testing.T) {
	ctx := context.Background()
	f := found(t, driftPadding())
	root := filepath.Join(t.TempDir(), "testdata", "fuzz")
	path, err := ExportGoFuzz(f, root)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(filepath.Dir(path)) != "FuzzRMSNormPadding" {
		t.Errorf("exported to %s, want the FuzzRMSNormPadding folder", path)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "go test fuzz v1\n[]byte(") {
		t.Errorf("not a go fuzz file:\n%s", b)
	}
	// a passing entry next to it, and a file in a folder that names no target
	passing := found(t, driftPadding())
	passing.Case.Seed = 99
	passing.Case.Targets = []string{"oracle-rmsnorm"}
	if _, err := ExportGoFuzz(NewFile(passing.Case, nil, spec.Env{}, ""), root); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "NotAFuzzTarget"), 0o755)
	os.WriteFile(filepath.Join(root, "NotAFuzzTarget", "x"), b, 0o644)

	dst := mustDir(t)
	sets := [][]string{{"drift-rmsnorm-te-mod32"}}
	res, err := ImportGoFuzz(ctx, dst, []string{root}, GoFuzzOptions{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("results %+v, want the two entries of FuzzRMSNormPadding", res)
	}
	var added []string
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Path, r.Err)
		}
		if r.Added {
			added = append(added, r.Name)
		}
	}
	want, _ := f.Name()
	if len(added) != 2 || (added[0] != want && added[1] != want) {
		t.Errorf("added %v, want %s among them (the exported case came back as itself)", added, want)
	}
	g, err := dst.Get(want)
	if err != nil || g.Finding == nil || g.Signature != f.Signature || !strings.HasPrefix(g.Source, "gofuzz:FuzzRMSNormPadding") {
		t.Errorf("imported file %+v, %v", g, err)
	}
	// with the invariant oracle, nothing fails: nothing is stored unless All
	dst2 := mustDir(t)
	res, err = ImportGoFuzz(ctx, dst2, []string{path}, GoFuzzOptions{Sets: [][]string{{"oracle-rmsnorm"}}})
	if err != nil || len(res) != 1 || res[0].Skipped == "" || res[0].Name != "" {
		t.Errorf("passing input: %+v %v, want skipped", res, err)
	}
	res, err = ImportGoFuzz(ctx, dst2, []string{path}, GoFuzzOptions{Sets: [][]string{{"oracle-rmsnorm"}}, All: true})
	if err != nil || len(res) != 1 || !res[0].Added {
		t.Errorf("passing input with All: %+v %v", res, err)
	} else if p, _ := dst2.Get(res[0].Name); p.Finding != nil || p.Case.Targets[0] != "oracle-rmsnorm" {
		t.Errorf("pass case %+v", p)
	}
	// explicit data cannot be exported
	if _, err := ExportGoFuzz(NewFile(explicitCase(spec.BF16), nil, spec.Env{}, ""), root); !errors.Is(err, ErrNotNative) {
		t.Errorf("explicit case exported: %v", err)
	}
}

// TestGoFuzzImportNativeSeeds imports fuzz/native's own seed corpus the way
// the nightly does: every entry must read, and none may fail on the
// invariant targets.
func TestGoFuzzImportNativeSeeds(t *testing.T) {
	dir := filepath.Join("..", "fuzz", "native", "testdata", "fuzz", "FuzzRMSNormPadding")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fuzz/native seed corpus: %v", err)
	}
	res, err := ImportGoFuzz(context.Background(), mustDir(t), []string{dir}, GoFuzzOptions{MaxElements: 1 << 18})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		t.Fatalf("no inputs found in %s", dir)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Path, r.Err)
		}
		if r.Finding != "" {
			t.Errorf("%s: a seed fails an invariant target: %s", r.Path, r.Finding)
		}
	}
}

// TestParseSets: comma-separated sets, '+' joining a pair, blanks dropped.
func TestParseSets(t *testing.T) {
	got := ParseSets(" a, b+c ,,")
	if len(got) != 2 || strings.Join(got[0], "+") != "a" || strings.Join(got[1], "+") != "b+c" {
		t.Errorf("ParseSets = %q", got)
	}
	if got := ParseSets(""); got != nil {
		t.Errorf("ParseSets(\"\") = %q, want none", got)
	}
}
