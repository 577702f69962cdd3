package corpus

import (
	"errors"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestRecheckScanDrifts: every open drift is rerun and written back, fixed
// when the rerun agrees and open when it drifts; a rerun that fails is
// reported and the drift left as it was; a fixed drift is not rerun.
func TestRecheckScanDrifts(t *testing.T) {
	d := mustDir(t)
	env := spec.Env{Bitparity: "here"}
	want := map[int]string{} // To -> what the recheck does: fixed, open, error, skipped
	for to, what := range map[int]string{40: "fixed", 41: "open", 42: "error", 43: "skipped"} {
		r := spec.ScanResult{Scan: rmsnormScan("drift-rmsnorm-te-mod32", to), Verdict: spec.ScanDrift, Differing: 3, Map: &spec.DriftMap{Dim: "rows", Rule: "r"}}
		if _, err := StoreScan(d, r, env, nil, nil); err != nil {
			t.Fatal(err)
		}
		if what == "skipped" { // the same scan agreed since: fixed
			if _, err := StoreScan(d, spec.ScanResult{Scan: rmsnormScan("drift-rmsnorm-te-mod32", to), Verdict: spec.ScanAgree}, env, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		want[to] = what
	}
	rerun := func(r *spec.ScanDriftRecord) (spec.ScanResult, error) {
		switch want[r.Scan.To] {
		case "fixed":
			return spec.ScanResult{Scan: r.Scan, Verdict: spec.ScanAgree}, nil
		case "open":
			return r.Found, nil
		}
		return spec.ScanResult{}, errors.New("no device")
	}
	got := map[int]string{}
	err := RecheckScanDrifts(d, env, rerun, func(r spec.ScanResult) string { return r.Verdict }, func(r DriftRecheck) {
		switch {
		case r.Was == nil:
			t.Errorf("%s: unreadable: %v", r.Name, r.Err)
		case r.Err != nil:
			got[r.Was.Scan.To] = "error"
		default:
			got[r.Was.Scan.To] = map[string]string{StateFixed: "fixed", StateOpen: "open"}[r.Got.Status.State]
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for to, what := range want {
		if what == "skipped" {
			what = ""
		}
		if got[to] != what {
			t.Errorf("drift of --to %d: %q, want %q", to, got[to], what)
		}
	}
}
