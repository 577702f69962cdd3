package corpus

import (
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
