package corpus

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

func journalFinding(seed uint64, rows int) spec.Finding {
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
		Targets: []string{"drift-rmsnorm-rows32"}, Shape: spec.Shape{Rows: rows, Hidden: 64},
		In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: seed, GenVersion: spec.GeneratorVersion}
	return spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0]}
}

func TestJournalRebuild(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json"+JournalSuffix)
	head := spec.Result{Version: spec.ResultVersion, Started: time.Unix(1e9, 0).UTC(), Seed: 7}
	j, err := CreateJournal(path, head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateJournal(path, head); err == nil {
		t.Fatal("a second journal over the first was created")
	}
	a, b := journalFinding(1, 40), journalFinding(2, 50)
	for _, err := range []error{j.Found("a.json", a), j.Found("b.json", b), j.Progress(120, 80)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	small := journalFinding(1, 3)
	if err := j.Shrunk("a.json", small); err != nil {
		t.Fatal(err)
	}
	j.Close()
	// a kill in the middle of a record leaves a line without its newline
	fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fh.WriteString(`{"rec":"found","key":"c.json","fin`)
	fh.Close()

	r, complete, err := RebuildJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if complete || r.Seed != 7 || r.Cases != 120 || r.InvariantCases != 80 || len(r.Findings) != 2 {
		t.Fatalf("rebuilt complete=%v seed %d, %d cases (%d invariant), %d findings; want false, 7, 120 (80), 2",
			complete, r.Seed, r.Cases, r.InvariantCases, len(r.Findings))
	}
	if r.Findings[0].Case.Shape.Rows != 3 || r.Findings[1].Case.Shape.Rows != 50 {
		t.Errorf("findings have %d and %d rows, want the shrunk 3 and the found 50",
			r.Findings[0].Case.Shape.Rows, r.Findings[1].Case.Shape.Rows)
	}
}

func TestJournalEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j"+JournalSuffix)
	j, err := CreateJournal(path, spec.Result{Version: spec.ResultVersion, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	j.Found("a.json", journalFinding(1, 40))
	end := spec.Result{Version: spec.ResultVersion, Seed: 1, Cases: 9, Findings: []spec.Finding{journalFinding(1, 2)}}
	if err := j.End(end); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResultOrJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cases != 9 || len(r.Findings) != 1 || r.Findings[0].Case.Shape.Rows != 2 {
		t.Errorf("rebuilt %d cases, %d findings; want the end record's 9 and its one finding", r.Cases, len(r.Findings))
	}
}

func TestJournalRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"result":  `{"version":1,"seed":1}` + "\n",
		"garbage": "not json\n",
		"empty":   "",
		"badrec":  `{"rec":"start","result":{"version":1}}` + "\n" + `{"rec":"what"}` + "\n",
	} {
		p := filepath.Join(dir, name+JournalSuffix)
		os.WriteFile(p, []byte(content), 0o644)
		if _, _, err := RebuildJournal(p); err == nil {
			t.Errorf("%s: rebuilt without an error", name)
		}
	}
}
