package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// bp runs the command line and returns stdout, stderr and the exit code.
func bp(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(&out, &errb, args)
	return out.String(), errb.String(), exitCode(err)
}

const knownDir = "../../corpus/known"

// knownFile returns the path of a shipped case whose note contains s.
func knownFile(t *testing.T, s string) (string, *corpus.File) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(knownDir, "*.json"))
	for _, p := range paths {
		f, err := corpus.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f.Note, s) {
			return p, f
		}
	}
	t.Fatalf("no shipped case with %q", s)
	return "", nil
}

func writeCase(t *testing.T, f *corpus.File) string {
	t.Helper()
	b, err := corpus.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "case.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// splitKFoundHere is a case file of the shipped split-K-by-M case with
// the finding it gives here and now, so that its first difference is
// current.
func splitKFoundHere(t *testing.T) *corpus.File {
	t.Helper()
	_, k := knownFile(t, "split-K chosen by M")
	fd, err := fuzz.Check(context.Background(), k.Case)
	if err != nil || fd == nil {
		t.Fatalf("the known split-K case finds nothing here: %v", err)
	}
	return corpus.NewFile(fd.Case, fd, fd.Env, "test")
}

// claimedFor is a copy of case file f whose case and finding name target
// as the one that drifted, with the signature recomputed.
func claimedFor(f *corpus.File, target string) *corpus.File {
	g, fd := *f, *f.Finding
	g.Case.Targets = []string{target}
	fd.Case, fd.TargetA = g.Case, target
	fd.Signature = spec.Signature(fd)
	g.Finding, g.Signature = &fd, fd.Signature
	return &g
}

func TestRepro(t *testing.T) {
	f := splitKFoundHere(t)
	drift := writeCase(t, f)
	out, _, code := bp(t, "repro", drift)
	if code != spec.ExitFinding || !strings.Contains(out, "REPRODUCED") || !strings.Contains(out, "same row, column and bits") {
		t.Errorf("drift case: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "0x"+f.Finding.A.Hex) || !strings.Contains(out, f.Finding.A.Dec) || !strings.Contains(out, "ulps") {
		t.Errorf("output lacks the hex and decimal values and ulps:\n%s", out)
	}

	// the recorded finding, claimed for the invariant oracle: not reproduced
	g := claimedFor(f, "oracle-gemm")
	g.Env = spec.Env{Bitparity: "v0.9", GPU: "NVIDIA B300 (test)", CC: "10.0", KernelHash: "abc123"}
	out, _, code = bp(t, "repro", writeCase(t, g))
	if code != spec.ExitNotReproduced || !strings.Contains(out, "COULD NOT REPRODUCE") || !strings.Contains(out, "gpu: recorded NVIDIA B300 (test), here ") {
		t.Errorf("fixed case: exit %d\n%s", code, out)
	}

	pass, _ := knownFile(t, "oracle decode keeps its bits")
	if out, _, code := bp(t, "repro", pass); code != spec.ExitOK || !strings.Contains(out, "PASSED") {
		t.Errorf("pass case: exit %d\n%s", code, out)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"format":"bitparity-case","version":7}`), 0o644)
	if _, errs, code := bp(t, "repro", bad); code != spec.ExitUsage {
		t.Errorf("bad file: exit %d %s", code, errs)
	}
	if _, errs, code := bp(t, "repro", "-max-elements", "1000", drift); code != spec.ExitUsage {
		t.Errorf("case above -max-elements: exit %d %s", code, errs)
	}
	if _, _, code := bp(t, "repro"); code != spec.ExitUsage {
		t.Errorf("no file: exit %d", code)
	}

	out, _, code = bp(t, "repro", writeCase(t, claimedFor(f, "cuda-gemm-v9")))
	if code != spec.ExitInternal || !strings.Contains(out, "not in this build") {
		t.Errorf("GPU case on a CPU build: exit %d\n%s", code, out)
	}
}

func TestCorpusCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "local")
	// merge the shipped corpus into a local folder
	out, _, code := bp(t, "corpus", "merge", "-dir", dir, knownDir)
	if code != 0 || !strings.Contains(out, "13 added") {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	out, _, code = bp(t, "corpus", "ls", "-dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 13 {
		t.Fatalf("ls: exit %d, %d lines\n%s", code, len(lines), out)
	}
	name := strings.Fields(lines[0])[0]
	if out, _, code := bp(t, "corpus", "show", "-dir", dir, name); code != 0 || !strings.Contains(out, "case "+name) || !strings.Contains(out, "status: open") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	if out, _, code := bp(t, "corpus", "show", "-dir", dir, "-json", strings.TrimSuffix(name, ".json")); code != 0 || !strings.Contains(out, `"format": "bitparity-case"`) {
		t.Errorf("show -json: exit %d\n%s", code, out)
	}
	if _, _, code := bp(t, "corpus", "show", "-dir", dir, "0000000000000000"); code != spec.ExitUsage {
		t.Errorf("show of a missing case: exit %d", code)
	}

	// dedup: the two rows % 32 padding cases share a signature
	out, _, code = bp(t, "corpus", "dedup", "-dir", dir, "-n")
	if code != 0 || !strings.Contains(out, "would delete") {
		t.Errorf("dedup -n: exit %d\n%s", code, out)
	}

	// bundle and unbundle into another folder
	bundle := filepath.Join(t.TempDir(), "cases.tar.gz")
	if out, _, code := bp(t, "corpus", "bundle", "-dir", dir, "-o", bundle); code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("bundle: exit %d\n%s", code, out)
	}
	other := filepath.Join(t.TempDir(), "other")
	out, _, code = bp(t, "corpus", "unbundle", "-dir", other, bundle)
	if code != 0 || !strings.Contains(out, "13 added") {
		t.Errorf("unbundle: exit %d\n%s", code, out)
	}
	out, _, code = bp(t, "corpus", "unbundle", "-dir", other, bundle)
	if code != 0 || !strings.Contains(out, "0 added, 13 already there") {
		t.Errorf("unbundle again: exit %d\n%s", code, out)
	}
	junk := filepath.Join(t.TempDir(), "junk.tar.gz")
	os.WriteFile(junk, []byte("not a bundle"), 0o644)
	if _, _, code := bp(t, "corpus", "unbundle", "-dir", other, junk); code != spec.ExitUsage {
		t.Errorf("unbundle junk: exit %d", code)
	}

	// recheck: the drift findings still fail (exit 1) and stay open
	out, _, code = bp(t, "corpus", "recheck", "-dir", other, "-kernel-hash", "k1")
	if code != spec.ExitFinding || !strings.Contains(out, "still failing") || !strings.Contains(out, "0 fixed") {
		t.Errorf("recheck: exit %d\n%s", code, out)
	}

	// layered: a local folder over the shared one sees both, writes locally
	local := filepath.Join(t.TempDir(), "mine")
	out, _, code = bp(t, "corpus", "ls", "-dir", local, "-shared", other)
	if code != spec.ExitUsage {
		// the local folder does not exist yet: ls does not create it
		t.Errorf("ls of a missing local folder: exit %d\n%s", code, out)
	}
	os.MkdirAll(local, 0o755)
	out, _, code = bp(t, "corpus", "ls", "-dir", local, "-shared", other)
	if code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 13 {
		t.Errorf("layered ls: exit %d\n%s", code, out)
	}
	// go fuzz interop: export the shipped cases, import them back on the
	// drift model the rows % 32 cases ran
	fuzzRoot := filepath.Join(t.TempDir(), "testdata", "fuzz")
	out, errOut, code := bp(t, "corpus", "export", "-dir", other, "-to", fuzzRoot)
	if code != 0 || !strings.Contains(out, "FuzzRMSNormPadding") {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
	}
	imported := filepath.Join(t.TempDir(), "imported")
	out, errOut, code = bp(t, "corpus", "import", "-dir", imported, "-targets", "drift-rmsnorm-te-mod32", filepath.Join(fuzzRoot, "FuzzRMSNormPadding"))
	if code != 0 || !strings.Contains(out, "(mismatch)") {
		t.Errorf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, _, code := bp(t, "corpus", "nope"); code != spec.ExitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

// TestCorpusSymlink: a case file linked into a corpus folder from inside
// it is listed and rechecked; one linked from outside is refused with a
// warning naming it and fails ls (exit 2) and recheck (exit 3), never
// skipped in silence.
func TestCorpusSymlink(t *testing.T) {
	f := splitKFoundHere(t)
	name, _ := f.Name()
	data, _ := corpus.Encode(f)

	inside := filepath.Join(t.TempDir(), "c")
	os.MkdirAll(filepath.Join(inside, "keep"), 0o755)
	os.WriteFile(filepath.Join(inside, "keep", name), data, 0o644)
	if err := os.Symlink(filepath.Join("keep", name), filepath.Join(inside, name)); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	if out, errs, code := bp(t, "corpus", "ls", "-dir", inside); code != 0 || !strings.Contains(out, name) {
		t.Errorf("ls of a link inside the folder: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code := bp(t, "corpus", "recheck", "-dir", inside); code != spec.ExitFinding || !strings.Contains(out, "still failing "+name) {
		t.Errorf("recheck of a link inside the folder: exit %d, want 1 still failing\n%s%s", code, out, errs)
	}

	outside := filepath.Join(t.TempDir(), "c")
	os.MkdirAll(outside, 0o755)
	os.Symlink(filepath.Join(inside, "keep", name), filepath.Join(outside, name))
	if out, errs, code := bp(t, "corpus", "ls", "-dir", outside); code != spec.ExitUsage || !strings.Contains(errs, "outside the corpus folder") {
		t.Errorf("ls of a link to outside: exit %d, want 2 and a warning\n%s%s", code, out, errs)
	}
	if out, errs, code := bp(t, "corpus", "recheck", "-dir", outside); code != spec.ExitInternal || !strings.Contains(out, "could not run "+name) {
		t.Errorf("recheck of a link to outside: exit %d, want 3 naming it\n%s%s", code, out, errs)
	}
}
