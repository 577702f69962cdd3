package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
)

// TestResolveSelect: a case is found by name (with or without .json) or
// by path; an unknown name wraps ErrNotFound; no names select every case.
func TestResolveSelect(t *testing.T) {
	d := mustDir(t)
	f := NewFile(seedCase(1), nil, spec.Env{}, "")
	name, _, err := d.Put(f)
	if err != nil {
		t.Fatal(err)
	}
	d.Put(NewFile(seedCase(2), nil, spec.Env{}, ""))
	for _, arg := range []string{name, strings.TrimSuffix(name, ".json"), d.PathOf(name)} {
		if e, err := Resolve(d, arg); err != nil || e.Name != name || e.File.Case.Seed != 1 {
			t.Errorf("Resolve(%q) = %+v, %v; want %s", arg, e, err, name)
		}
	}
	if _, err := Resolve(d, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resolve of an unknown name: %v, want ErrNotFound", err)
	}
	all, bad, err := Select(d, nil)
	if len(all) != 2 || len(bad) != 0 || err != nil {
		t.Errorf("Select(nil) = %d entries, %v, %v; want 2", len(all), bad, err)
	}
	if one, _, err := Select(d, []string{name}); len(one) != 1 || err != nil {
		t.Errorf("Select(%s) = %d entries, %v", name, len(one), err)
	}
	if _, _, err := Select(d, []string{name, "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Select with an unknown name: %v, want ErrNotFound", err)
	}
}

// TestOpenLayered: a missing local folder is fs.ErrNotExist unless
// created; shared stores are read only.
func TestOpenLayered(t *testing.T) {
	ctx := context.Background()
	local, shared := filepath.Join(t.TempDir(), "local"), mustDir(t)
	if _, err := OpenLayered(ctx, local, nil, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing local folder: %v, want fs.ErrNotExist", err)
	}
	l, err := OpenLayered(ctx, local, []string{shared.Path()}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Shared) != 1 {
		t.Fatalf("shared stores %d, want 1", len(l.Shared))
	}
	if _, _, err := l.Shared[0].Put(NewFile(seedCase(1), nil, spec.Env{}, "")); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put on a shared store: %v, want ErrReadOnly", err)
	}
	if _, err := OpenLayered(ctx, local, []string{filepath.Join(t.TempDir(), "none")}, false); err == nil || !strings.Contains(err.Error(), "shared corpus") {
		t.Errorf("missing shared folder: %v", err)
	}
	if err := CheckLocation(ctx, "mem://"); err != nil {
		t.Errorf("CheckLocation(mem://): %v", err)
	}
	if err := CheckLocation(ctx, "s3://"); err == nil {
		t.Errorf("CheckLocation(s3://) without a bucket: no error")
	}
}

// TestWriteBundleFile: only open findings with OpenOnly; the file is a
// bundle Unbundle reads back whole.
func TestWriteBundleFile(t *testing.T) {
	c := seedCase(3)
	open := Entry{Name: "a", File: NewFile(c, sampleFinding(c), spec.Env{}, "")}
	pass := Entry{Name: "b", File: NewFile(seedCase(4), nil, spec.Env{}, "")}
	if got := OpenOnly([]Entry{pass, open}); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("OpenOnly = %+v, want a", got)
	}
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	m, size, err := WriteBundleFile(p, []Entry{open, pass})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Size() != size || len(m.Files) != 2 {
		t.Fatalf("wrote %d bytes (%v), said %d; manifest %d files", st.Size(), err, size, len(m.Files))
	}
	fh, _ := os.Open(p)
	defer fh.Close()
	rep, err := Unbundle(fh, mustDir(t))
	if err != nil || len(rep.Added) != 2 {
		t.Errorf("Unbundle: %+v, %v", rep, err)
	}
}

// TestReadCase: a case as JSON, a case file, and JSON with an unknown
// field (an error naming the case JSON).
func TestReadCase(t *testing.T) {
	c := seedCase(5)
	b, _ := json.Marshal(c)
	if got, f, err := ReadCase(" " + string(b)); err != nil || f != nil || got.Seed != 5 {
		t.Errorf("ReadCase(JSON) = %+v, %v, %v", got, f, err)
	}
	p := filepath.Join(t.TempDir(), "c.json")
	enc, _ := Encode(NewFile(c, sampleFinding(c), spec.Env{}, ""))
	os.WriteFile(p, enc, 0o644)
	if got, f, err := ReadCase(p); err != nil || f == nil || got.Seed != 5 {
		t.Errorf("ReadCase(file) = %+v, %v, %v", got, f, err)
	}
	if _, _, err := ReadCase(`{"op":"rmsnorm","nonsense":1}`); err == nil || !strings.Contains(err.Error(), "case JSON") {
		t.Errorf("ReadCase with an unknown field: %v", err)
	}
}

// TestImport: a result file's findings are stored, the refused ones
// counted; a result that does not read is an error.
func TestImport(t *testing.T) {
	good := *found(t, splitK(8, 64, "drift-gemm-splitk-by-m")).Finding
	bad := good
	bad.Case.Shape.Rows = -1
	b, _ := json.Marshal(spec.Result{Version: spec.ResultVersion, Findings: []spec.Finding{good, bad}})
	p := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(p, b, 0o644)
	d := mustDir(t)
	var out, warn bytes.Buffer
	refused, err := Import(context.Background(), d, "DIR", []string{p}, GoFuzzOptions{}, &out, &warn)
	if err != nil || refused != 1 {
		t.Fatalf("Import = %d refused, %v; want 1", refused, err)
	}
	if !strings.Contains(out.String(), "imported 2 finding(s) of "+p+": 1 added, 0 already there, 1 refused") ||
		!strings.Contains(warn.String(), "refused "+p+": findings[1]") {
		t.Errorf("Import wrote:\n%s\nwarned:\n%s", out.String(), warn.String())
	}
	os.WriteFile(p, []byte("{"), 0o644)
	if _, err := Import(context.Background(), d, "DIR", []string{p}, GoFuzzOptions{}, &out, &warn); err == nil {
		t.Errorf("Import of a broken result: no error")
	}
}

// TestDedupStore: the dropped duplicate is deleted, and only said with dry.
func TestDedupStore(t *testing.T) {
	d := mustDir(t)
	for _, rows := range []int{64, 32} {
		if _, _, err := d.Put(found(t, splitK(uint64(rows), rows, "drift-gemm-splitk-by-m"))); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLayered(d)
	var out, warn bytes.Buffer
	DedupStore(l, true, &out, &warn)
	if names, _ := d.List(); len(names) != 2 || !strings.Contains(out.String(), "would delete") {
		t.Errorf("dry dedup left %d files, wrote:\n%s", len(names), out.String())
	}
	out.Reset()
	DedupStore(l, false, &out, &warn)
	if names, _ := d.List(); len(names) != 1 || !strings.Contains(out.String(), "1 signature(s) with duplicates, 1 file(s) deleted") {
		t.Errorf("dedup left %d files, wrote:\n%s", len(names), out.String())
	}
}

// TestMinimizeExportAll: a pass file cannot be minimized (ErrNoFinding,
// naming it); exporting writes one entry per case.
func TestMinimizeExportAll(t *testing.T) {
	d := mustDir(t)
	pass := Entry{Name: "p.json", File: NewFile(seedCase(1), nil, spec.Env{}, "")}
	var out, warn bytes.Buffer
	err := MinimizeAll(context.Background(), d, []Entry{pass}, shrink.Options{}, false, &out, &warn)
	if !errors.Is(err, ErrNoFinding) || !strings.Contains(err.Error(), "p.json") {
		t.Errorf("MinimizeAll of a pass file: %v, want ErrNoFinding naming p.json", err)
	}
	root := t.TempDir()
	ExportAll([]Entry{pass}, root, &out, &warn)
	if !strings.Contains(out.String(), "exported 1 of 1 case(s) to "+root) {
		t.Errorf("ExportAll wrote:\n%s\nwarned:\n%s", out.String(), warn.String())
	}
}

// TestMergeResultFiles: the shards' results merge; another seed does not.
func TestMergeResultFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, seed uint64, cases int64) string {
		b, _ := json.Marshal(spec.Result{Version: spec.ResultVersion, Seed: seed, Cases: cases, Started: time.Now().UTC()})
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	a, b, c := write("a.json", 1, 10), write("b.json", 1, 5), write("c.json", 2, 1)
	if r, err := MergeResultFiles(a, b); err != nil || r.Cases != 15 {
		t.Errorf("MergeResultFiles(a, b) = %+v, %v; want 15 cases", r, err)
	}
	if _, err := MergeResultFiles(a, c); err == nil {
		t.Errorf("merged results of two seeds")
	}
	if _, err := MergeResultFiles(filepath.Join(dir, "none.json")); err == nil {
		t.Errorf("merged a missing file")
	}
}
