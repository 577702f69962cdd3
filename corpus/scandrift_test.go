package corpus

import (
	"os"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// rmsnormScan is a scan of target over items 1..to: rmsnorm, hidden 64,
// bf16 in and out, normal values of seed 1, generator version 2.
func rmsnormScan(target string, to int) spec.ScanSpec {
	return spec.ScanSpec{Target: target, Op: spec.OpRMSNorm, Dim: spec.ScanItems, From: 1, To: to,
		Shape: spec.Shape{Hidden: 64}, In: spec.BF16, Out: spec.BF16, Dists: []spec.Dist{spec.DistNormal}, Seed: 1, GenVersion: 2}
}

func TestScanDriftStore(t *testing.T) {
	d := mustDir(t)
	s := rmsnormScan("drift-rmsnorm-te-mod32", 40)
	found := spec.ScanResult{Scan: s, Verdict: spec.ScanDrift, Differing: 15,
		Map: &spec.DriftMap{Dim: "rows", Rule: "rows == 32 -> B, otherwise -> A", Kind: "irregular"}}
	name, err := d.PutScanDrift(NewScanDrift(found, spec.Env{Bitparity: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := CertHash(s)
	if name != "drift-"+cert+".json" || IsName(name) || IsCertName(name) || !IsScanDriftName(name) {
		t.Fatalf("name %s", name)
	}
	got, err := d.GetScanDrift(name)
	if err != nil || got.Status.State != StateOpen || got.Found.Differing != 15 || got.Format != spec.ScanDriftFormat {
		t.Fatalf("get: %+v %v", got, err)
	}
	if names, err := d.ScanDrifts(); err != nil || len(names) != 1 || names[0] != name {
		t.Errorf("list %v %v", names, err)
	}
	if names, err := d.List(); err != nil || len(names) != 0 {
		t.Errorf("case list %v %v: a drift file is no case", names, err)
	}

	// a rerun that certifies fixes it; one that drifts keeps it open
	fixed := RecheckedScanDrift(*got, spec.ScanResult{Scan: s, Verdict: spec.ScanCertified}, spec.Env{Bitparity: "here"}, "certified")
	if fixed.Status.State != StateFixed || fixed.Status.FixedEnv.Bitparity != "here" || fixed.Status.Checked.IsZero() {
		t.Errorf("fixed %+v", fixed.Status)
	}
	open := RecheckedScanDrift(fixed, found, spec.Env{}, "drift")
	if open.Status.State != StateOpen || !open.Status.FixedAt.IsZero() || open.Status.FixedEnv != nil {
		t.Errorf("open again %+v", open.Status)
	}

	// a file renamed, edited or of another kind is refused
	data, _ := os.ReadFile(d.PathOf(name))
	for _, tt := range []struct{ name, data, want string }{
		{"drift-0000000000000000.json", string(data), "hashes to"},
		{name, strings.Replace(string(data), `"state": "open"`, `"state": "gone"`, 1), "status"},
		{name, strings.Replace(string(data), `"bitparity-scan-drift"`, `"bitparity-certificate"`, 1), "format"},
		{name, strings.Replace(string(data), `"found": {`, `"found": {"extra": 1, `, 1), "unknown field"},
	} {
		if err := os.WriteFile(d.PathOf(tt.name), []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := d.GetScanDrift(tt.name); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.want, err, tt.want)
		}
		os.Remove(d.PathOf("drift-0000000000000000.json"))
	}
}

// TestStoreScan: a drift is put as a scan drift file with its adapter; a
// later scan of the same spec that agrees marks it fixed, once; a fault
// is stored like a drift.
func TestStoreScan(t *testing.T) {
	d := mustDir(t)
	s := rmsnormScan("exec:a", 40)
	env := spec.Env{Bitparity: "test"}
	adapter := &spec.Adapter{Name: "a", Exec: "./a"}
	drift := spec.ScanResult{Scan: s, Verdict: spec.ScanDrift, Differing: 3, Map: &spec.DriftMap{Dim: "rows", Rule: "rows == 32 -> B, otherwise -> A"}}
	agree := spec.ScanResult{Scan: s, Verdict: spec.ScanAgree}
	for _, tc := range []struct {
		name  string
		r     spec.ScanResult
		want  ScanStored
		state string
	}{
		{"drift", drift, ScanStored{Drift: "d"}, StateOpen},
		{"agree", agree, ScanStored{Fixed: "d"}, StateFixed},
		{"agree again", agree, ScanStored{}, StateFixed},
		{"fault", spec.ScanResult{Scan: s, Verdict: spec.ScanFault, Fault: "illegal address"}, ScanStored{Drift: "d"}, StateOpen},
	} {
		got, err := StoreScan(d, tc.r, env, nil, adapter)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		name, _ := ScanDriftName(s)
		if tc.want.Drift != "" {
			tc.want.Drift = name
		}
		if tc.want.Fixed != "" {
			tc.want.Fixed = name
		}
		if got != tc.want {
			t.Errorf("%s: stored %+v, want %+v", tc.name, got, tc.want)
		}
		rec, err := d.GetScanDrift(name)
		if err != nil || rec.Status.State != tc.state || rec.Adapter == nil || rec.Adapter.Exec != "./a" {
			t.Errorf("%s: stored drift %+v, %v; want state %s with the adapter", tc.name, rec, err, tc.state)
		}
	}
}
