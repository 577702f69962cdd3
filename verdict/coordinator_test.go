package verdict

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCoordinator: a worker that leaves a result and exits with a verdict
// (here 6, interrupted) is merged and marked; one that exits 3 is a
// failure; a later Resume of the work folder takes the unmarked folder
// with its result and leaves the merged one.
func TestCoordinator(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	work := t.TempDir()
	res := spec.Result{Version: spec.ResultVersion, Seed: 9, Cases: 12, Interrupted: true,
		Findings: []spec.Finding{finding("vendor-a", false, 3)}}
	b, err := jsonIndent(res)
	if err != nil {
		t.Fatal(err)
	}
	co := &Coordinator{}
	for k, script := range []string{"cp ../result.in result.json; exit 6", "exit 3"} {
		dir := filepath.Join(work, "shard-"+string(rune('0'+k)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		co.Workers = append(co.Workers, &Worker{Shard: spec.Shard{Index: k, Count: 2}, Dir: dir, Cmd: cmd, Where: "CPU"})
	}
	if err := os.WriteFile(filepath.Join(work, "result.in"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := co.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Result == nil || o.Result.Cases != 12 || len(o.Result.Findings) != 1 || !o.Result.Interrupted {
		t.Fatalf("merged result %+v", o.Result)
	}
	if len(o.Failed) != 1 || !strings.Contains(o.Failed[0], "worker 1 (shard 1/2)") || o.FailedErr(2, work) == nil {
		t.Fatalf("failed %q", o.Failed)
	}
	if _, err := os.Stat(filepath.Join(work, "shard-0", mergedMark)); err != nil {
		t.Errorf("the merged worker folder is not marked: %v", err)
	}
	// shard-1 is unmarked: a later Resume takes it, with the result a killed
	// worker leaves, its Interrupted cleared (the resuming run continues it)
	os.WriteFile(filepath.Join(work, "shard-1", "result.json"), b, 0o644)
	left, err := Resume(work, 9, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Results) != 1 || left.Results[0].Interrupted || len(left.Dirs) != 1 || !strings.HasSuffix(left.Dirs[0], "shard-1") {
		t.Fatalf("resume: %d result(s), dirs %v", len(left.Results), left.Dirs)
	}
}
