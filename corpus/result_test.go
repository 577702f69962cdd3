package corpus

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

func TestImportResult(t *testing.T) {
	good := *found(t, splitK(8, 64, "drift-gemm-splitk-by-m")).Finding
	bad := good
	bad.Case.Shape.Rows = -1
	res := spec.Result{Version: spec.ResultVersion, Started: time.Now().UTC(), Findings: []spec.Finding{good, bad, good},
		Env: spec.Env{Bitparity: "campaign-env"}}
	b, _ := json.Marshal(res)
	p := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(p, b, 0o644)
	r, err := ReadResult(p)
	if err != nil {
		t.Fatal(err)
	}
	d := mustDir(t)
	added, existing, errs := ImportResult(d, r)
	if len(added) != 1 || len(existing) != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "findings[1]") {
		t.Errorf("added %v existing %v errs %v", added, existing, errs)
	}
	f, err := d.Get(added[0])
	if err != nil || f.Source != "campaign" || f.Signature != good.Signature {
		t.Errorf("stored %+v %v", f, err)
	}
	res.Version = 9
	b, _ = json.Marshal(res)
	os.WriteFile(p, b, 0o644)
	if _, err := ReadResult(p); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("read a result of another version: %v", err)
	}
}

// TestOpenFindings: the open findings of a folder, each with a repro line
// naming its file; a finding marked fixed is left out.
func TestOpenFindings(t *testing.T) {
	d := mustDir(t)
	var names []string
	for _, seed := range []uint64{8, 9} {
		f := *found(t, splitK(seed, 64, "drift-gemm-splitk-by-m")).Finding
		f.Repro = ""
		added, _, errs := ImportResult(d, &spec.Result{Version: spec.ResultVersion, Findings: []spec.Finding{f}})
		if len(added) != 1 || len(errs) > 0 {
			t.Fatalf("import: %v %v", added, errs)
		}
		names = append(names, added[0])
	}
	if err := d.Update(names[1], func(f *File) error { f.Status.State, f.Status.FixedAt = StateFixed, time.Now().UTC(); return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := OpenFindings(context.Background(), d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Repro != spec.ReproFile(d.PathOf(names[0])) || got[0].Signature == "" {
		t.Errorf("OpenFindings = %d finding(s), first %+v; want the open one, repro %s", len(got), got, spec.ReproFile(d.PathOf(names[0])))
	}
	if _, err := OpenFindings(context.Background(), filepath.Join(d.Path(), "none")); err == nil {
		t.Error("OpenFindings of a missing folder: no error")
	}
}
