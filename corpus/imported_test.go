package corpus

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// bundleOf bundles files as another team would send them.
func bundleOf(t *testing.T, files ...*File) []byte {
	t.Helper()
	var entries []Entry
	for _, f := range files {
		n, err := f.Name()
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, Entry{Name: n, File: f})
	}
	data, err := bundleBytes(entries)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// forgery is a small case on the invariant oracle that claims the finding
// of real (its kind, targets and drift rule, so that its signature is
// real's), an older date and, when fixed, a fixed status.
func forgery(t *testing.T, real *File, seed uint64, fixed bool) *File {
	t.Helper()
	c := splitK(seed, 2, target.OracleName(spec.OpGEMM))
	fd := *real.Finding
	fd.Case = c
	fd.Signature = spec.Signature(fd)
	if fd.Signature != real.Signature {
		t.Fatalf("the forgery's signature %s is not the real one's %s", fd.Signature, real.Signature)
	}
	f := NewFile(c, &fd, real.Env, "their team")
	f.Created = real.Created.Add(-24 * time.Hour)
	if fixed {
		f.Status = Status{State: StateFixed, FixedAt: f.Created}
	}
	return f
}

// TestForgedBundle: a bundle cannot make dedup delete a real finding. A
// member whose signature is not the one its finding hashes to is refused;
// small cases that claim a real finding's signature consistently (their
// targets do not show it) and an older date, one of them fixed, are stored
// open and imported, dedup leaves them alone until a recheck, and the
// recheck marks the forgeries fixed and keeps the real finding open, which
// dedup then keeps.
func TestForgedBundle(t *testing.T) {
	ctx := context.Background()
	d := mustDir(t)
	real := found(t, splitK(2, 64, "drift-gemm-splitk-by-m"))
	realName, _, err := d.Put(real)
	if err != nil {
		t.Fatal(err)
	}

	// a signature copied from another finding: refused
	lieName, lie := encoded(t, NewFile(seedCase(3), sampleFinding(seedCase(3)), spec.Env{}, "their team"))
	lie = bytes.ReplaceAll(lie, []byte(sampleFinding(seedCase(3)).Signature), []byte(real.Signature))
	rep, err := Unbundle(bytes.NewReader(makeBundle(t, nil, reg(casesDir+lieName, lie))), d)
	if err != nil || len(rep.Added) != 0 || len(rep.Bad) != 1 || !strings.Contains(rep.Bad[0].Error(), "finding.signature") {
		t.Fatalf("a copied signature: %v %+v, want the member refused naming finding.signature", err, rep)
	}

	// consistent forgeries, older, one open and one fixed
	forged, forgedFixed := forgery(t, real, 9, false), forgery(t, real, 10, true)
	forgedName, _ := forged.Name()
	fixedName, _ := forgedFixed.Name()
	rep, err = Unbundle(bytes.NewReader(bundleOf(t, forged, forgedFixed)), d)
	if err != nil || len(rep.Added) != 2 || !slices.Equal(rep.Reopened, []string{fixedName}) {
		t.Fatalf("unbundle of the forgeries: %v %+v", err, rep)
	}
	for _, n := range rep.Added {
		if g, _ := d.Get(n); g.Status.State != StateOpen || !g.Status.Imported || !g.Status.FixedAt.IsZero() {
			t.Fatalf("a forgery is stored %+v, want open and imported", g.Status)
		}
	}
	entries, errs := Load(d)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if groups := Dedup(entries); len(groups) != 0 {
		t.Fatalf("dedup before a recheck: %+v, want nothing grouped with an imported case", groups)
	}

	res, err := Recheck(ctx, d, spec.Env{Bitparity: "here"}, false)
	if err != nil || len(res) != 3 {
		t.Fatalf("recheck: %v %+v", err, res)
	}
	for _, r := range res {
		if r.Err != nil || r.Fixed != (r.Name != realName) {
			t.Errorf("recheck %s: %+v; want the forgeries fixed, the real finding open", r.Name, r)
		}
	}
	if g, _ := d.Get(forgedName); g.Status.State != StateFixed || g.Status.Imported {
		t.Errorf("a forgery after recheck: %+v, want fixed here, no longer imported", g.Status)
	}
	entries, _ = Load(d)
	groups := Dedup(entries)
	if len(groups) != 1 || groups[0].Keep != realName || len(groups[0].Drop) != 2 {
		t.Errorf("dedup after recheck: %+v, want keep %s (the real finding) and drop the forgeries", groups, realName)
	}
}

// TestRecheckImportedAndAll: an imported case is replayed by the default
// recheck whatever its finding or state (a pass case too), once; a case
// fixed here is replayed only with all, and reopened when it fails again.
func TestRecheckImportedAndAll(t *testing.T) {
	ctx := context.Background()
	d := mustDir(t)
	// from another team: a drift finding they call fixed, and a pass case
	drift := found(t, splitK(2, 64, "drift-gemm-splitk-by-m"))
	drift.Status = Status{State: StateFixed, FixedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pass := NewFile(splitK(3, 8, target.OracleName(spec.OpGEMM)), nil, spec.Env{}, "their team")
	if _, err := Unbundle(bytes.NewReader(bundleOf(t, drift, pass)), d); err != nil {
		t.Fatal(err)
	}
	driftName, _ := drift.Name()
	passName, _ := pass.Name()
	verdicts := func(all bool) map[string]Verdict {
		t.Helper()
		res, err := Recheck(ctx, d, spec.Env{}, all)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Verdict{}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Name, r.Err)
			}
			out[r.Name] = r.Outcome.Verdict
		}
		return out
	}
	if v := verdicts(false); len(v) != 2 || v[driftName] != Reproduced || v[passName] != Passed {
		t.Fatalf("first recheck: %v, want the imported drift reproduced and the pass case passed", v)
	}
	if g, _ := d.Get(driftName); g.Status.State != StateOpen || g.Status.Imported {
		t.Errorf("the drift their team called fixed: %+v, want open here", g.Status)
	}
	if v := verdicts(false); len(v) != 1 || v[driftName] != Reproduced {
		t.Errorf("second recheck: %v, want the open finding alone", v)
	}

	// a finding fixed here that fails again: replayed only with all, reopened
	if err := d.Update(driftName, func(f *File) error {
		f.Status = Status{State: StateFixed, FixedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := verdicts(false); len(v) != 0 {
		t.Errorf("default recheck replayed %v, want nothing (a fixed finding and a pass case)", v)
	}
	res, err := Recheck(ctx, d, spec.Env{}, true)
	if err != nil || len(res) != 2 {
		t.Fatalf("recheck all: %v %+v", err, res)
	}
	for _, r := range res {
		if r.Err != nil || r.Reopened != (r.Name == driftName) {
			t.Errorf("recheck all %s: %+v; want the fixed drift reopened", r.Name, r)
		}
	}
	if g, _ := d.Get(driftName); g.Status.State != StateOpen || !g.Status.FixedAt.IsZero() {
		t.Errorf("the reopened finding: %+v", g.Status)
	}
}
