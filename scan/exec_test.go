package scan

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// sameScan reports where result a (called as in the errors) and result
// b (bs) differ: their maps (rule, values, classes) or their counts
// (batches, rows compared, differing, diffs), or whether each certified.
func sameScan(t *testing.T, as string, a *Result, bs string, b *Result) {
	t.Helper()
	if a.Map.Rule != b.Map.Rule || !slices.Equal(a.Map.Values, b.Map.Values) || !reflect.DeepEqual(a.Map.Classes, b.Map.Classes) {
		t.Errorf("maps differ: %s %q, %s %q", as, a.Map.Rule, bs, b.Map.Rule)
	}
	if (a.Certificate == nil) != (b.Certificate == nil) || !reflect.DeepEqual(a.Diffs, b.Diffs) {
		t.Errorf("verdicts differ: %s certified %v, diffs %+v; %s %v, %+v", as, a.Certificate != nil, a.Diffs, bs, b.Certificate != nil, b.Diffs)
	}
	if a.Batches != b.Batches || a.RowsCompared != b.RowsCompared || a.Differing != b.Differing || !slices.Equal(a.Diffs, b.Diffs) {
		t.Errorf("counts differ: %s %d batches %d rows %d differing, %s %d %d %d",
			as, a.Batches, a.RowsCompared, a.Differing, bs, b.Batches, b.RowsCompared, b.Differing)
	}
}

// firstOther is the first diff of a that b does not have at its index.
func firstOther(a, b []Diff) any {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return a[i]
		}
	}
	return nil
}

// adapter returns the command line of a script under adapters/.
func adapter(py, script string, args ...string) string {
	_, file, _, _ := runtime.Caller(0)
	cl := py + " " + filepath.Join(filepath.Dir(file), "..", "adapters", script)
	for _, a := range args {
		cl += " " + a
	}
	return cl
}

// adapterTargets numbers the targets adapterTarget registers (a name is
// registered once).
var adapterTargets atomic.Int64

// adapterTarget registers the adapter cmdline for op under a fresh name,
// with the kit's environment variable key set to value ("" leaves the
// kit's default), and returns the name and the started target, closed
// when the test ends.
func adapterTarget(t testing.TB, cmdline string, op spec.Op, key, value string) (string, *external.Target) {
	t.Helper()
	name := fmt.Sprintf("exec:test-%d-%s-%s", adapterTargets.Add(1), op, value)
	var env []string
	if value != "" {
		env = []string{key + "=" + value}
	}
	external.Register(name, cmdline, op, external.Options{Env: env})
	tg, err := target.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	et := tg.(*external.Target)
	t.Cleanup(func() { et.Close() })
	return name, et
}

// TestExecScanAgainstAlone: scans of NumPy adapters go through the steps
// compared with the items alone on the adapter's side (the kit's default),
// and give the same result, count for count, as the same scans with every
// row's digest sent (BITPARITY_SCAN_AGAINST=none, the frames before
// against existed): the kit's exact RMSNorm certifies, the two-halves
// RMSNorm from 40 rows gives its exact map, a position scan certifies
// below 40 items, and a padding scan (whose filler items never ran alone:
// its steps answer every digest) agrees.
func TestExecScanAgainstAlone(t *testing.T) {
	py := pythontest.NumPy(t)
	split := adapter(py, "examples/numpy_split.py", "--from", "40")
	exact := adapter(py, "numpy_ops.py", "rmsnorm")
	dists := []spec.Dist{spec.DistNormal, spec.DistBoundary}
	tests := []struct {
		name    string
		cmdline string
		s       spec.ScanSpec
		rule    string // the map's rule; "" for a certificate, "?" for either
		against bool   // steps are compared with the items alone
	}{
		{"exact", exact, spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 72, Shape: spec.Shape{Hidden: 48}, Dists: dists, Seed: 1}, "", true},
		{"split", split, spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 72, Shape: spec.Shape{Hidden: 48}, Dists: dists, Seed: 1},
			"rows <= 39 -> A, rows >= 40 -> B", true},
		{"position", split, spec.ScanSpec{Dim: spec.ScanPosition, From: 0, To: 36, Watch: 3, Shape: spec.Shape{Hidden: 32}, Dists: dists[:1], Seed: 1}, "", true},
		{"pad", split, spec.ScanSpec{Dim: spec.ScanPad, From: 30, To: 50, Real: 30, Shape: spec.Shape{Hidden: 32}, Dists: dists[:1], Seed: 1}, "?", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]*Result
			for i, against := range []string{"", "none"} {
				name, et := adapterTarget(t, tc.cmdline, spec.OpRMSNorm, "BITPARITY_SCAN_AGAINST", against)
				if et.ComparesAlone() != (against == "") {
					t.Fatalf("BITPARITY_SCAN_AGAINST=%q: ComparesAlone %v, hello %v", against, et.ComparesAlone(), et.Hello())
				}
				s := tc.s
				s.Target = name
				r, err := Run(context.Background(), s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if n := et.StepsAgainstAlone(); (n > 0) != (tc.against && against == "") {
					t.Fatalf("BITPARITY_SCAN_AGAINST=%q: %d steps compared with the items alone", against, n)
				}
				got[i] = r
			}
			a, b := got[0], got[1]
			switch {
			case tc.rule == "" && a.Certificate == nil:
				t.Fatalf("no certificate: %d differing, diffs %+v", a.Differing, a.Diffs)
			case tc.rule != "" && tc.rule != "?" && a.Map.Rule != tc.rule:
				t.Fatalf("map %q, want %q", a.Map.Rule, tc.rule)
			}
			sameScan(t, "against the items alone", a, "every digest", b)
		})
	}
}

// TestExecScanBatches: with the kit's several-batch frames (scan_batches)
// a scan of items 1..40 costs a few frames a draw (the items alone, the
// reference batch, one frame of prefixes, one of every panel batch),
// where a frame a batch costs hundreds, and gives the same Result, count
// for count, on an exact and a drifting adapter.
func TestExecScanBatches(t *testing.T) {
	py := pythontest.NumPy(t)
	dists := []spec.Dist{spec.DistNormal}
	for _, cmdline := range []string{adapter(py, "numpy_ops.py", "rmsnorm"), adapter(py, "examples/numpy_split.py", "--from", "30")} {
		var got [2]*Result
		var frames [2]int
		for i, batches := range []string{"", "none"} {
			name, et := adapterTarget(t, cmdline, spec.OpRMSNorm, "BITPARITY_SCAN_BATCHES", batches)
			if et.StepsBatches() != (batches == "") {
				t.Fatalf("BITPARITY_SCAN_BATCHES=%s: StepsBatches %v, hello %v", batches, et.StepsBatches(), et.Hello())
			}
			s := spec.ScanSpec{Target: name, Dim: spec.ScanItems, From: 1, To: 40, Shape: spec.Shape{Hidden: 16}, Dists: dists, Seed: 1}
			var err error
			if got[i], err = Run(context.Background(), s, Options{}); err != nil {
				t.Fatal(err)
			}
			frames[i] = et.Frames()
		}
		a, b := got[0], got[1]
		t.Logf("%s: %d frames with batches, %d without; map %q", cmdline, frames[0], frames[1], a.Map.Rule)
		if a.Map.Rule != b.Map.Rule || !reflect.DeepEqual(a.Map.Classes, b.Map.Classes) || a.Batches != b.Batches ||
			a.RowsCompared != b.RowsCompared || a.Differing != b.Differing || !slices.Equal(a.Diffs, b.Diffs) {
			t.Errorf("results differ: with batches %q %d batches %d rows %d differing, without %q %d %d %d",
				a.Map.Rule, a.Batches, a.RowsCompared, a.Differing, b.Map.Rule, b.Batches, b.RowsCompared, b.Differing)
		}
		if a.Differing == 0 && frames[0] > 6*len(dists) {
			t.Errorf("%d frames for %d draws with batches, want at most %d", frames[0], len(dists), 6*len(dists))
		}
		if frames[0] >= frames[1] {
			t.Errorf("%d frames with batches, %d without", frames[0], frames[1])
		}
	}
}

// TestHelloIdentity: a certificate records the hello but the fields that
// say how the adapter talks, and a recheck compares the rest only (a
// certificate that recorded scan_against still holds, and one made before
// scan_batches).
func TestHelloIdentity(t *testing.T) {
	hello := map[string]string{"frame": "hello", "seq": "0", "protocol": "1", "scan": "1", "scan_against": "alone",
		"scan_batches": "1", "name": "numpy.rmsnorm", "versions": "numpy=1.24.2"}
	id := AdapterIdentity(hello)
	if !reflect.DeepEqual(id, map[string]string{"scan": "1", "name": "numpy.rmsnorm", "versions": "numpy=1.24.2"}) {
		t.Fatalf("AdapterIdentity = %v", id)
	}
	old := map[string]string{"scan": "1", "scan_against": "", "name": "numpy.rmsnorm", "versions": "numpy=1.24.2"}
	if d := HelloDiff(old, id); len(d) != 0 {
		t.Errorf("HelloDiff of a hello that differs in scan_against only: %v", d)
	}
	here := map[string]string{"scan": "1", "name": "numpy.rmsnorm", "versions": "numpy=2.0"}
	if d := HelloDiff(id, here); !slices.Equal(d, []string{`versions: recorded "numpy=1.24.2", here "numpy=2.0"`}) {
		t.Errorf("HelloDiff = %q", d)
	}
}

// TestExecScanBulkMatchesPerStep: a scan of an adapter's held batch checks
// its prefixes from PanelItems on in bulk (exec_bulk.go) and gives what
// the per-step path gives: the same map, diffs, differing rows, batches
// and verdict, on an exact adapter, on one that drifts from 90 rows (the
// values 64..89 pass in bulk while the reference batch differs from the
// items alone, so transitivity settles their rows: fewer rows compared),
// without the taps, and with every digest sent (no compare on the
// adapter's side).
func TestExecScanBulkMatchesPerStep(t *testing.T) {
	py := pythontest.NumPy(t)
	exact := adapter(py, "numpy_ops.py", "rmsnorm")
	split := adapter(py, "examples/numpy_split.py", "--from", "90")
	dists := []spec.Dist{spec.DistNormal, spec.DistBoundary}
	s := spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 130, Shape: spec.Shape{Hidden: 32}, Dists: dists, Seed: 1}
	noTaps := s
	noTaps.NoTaps = true
	tests := []struct {
		name, cmdline, against string
		s                      spec.ScanSpec
		settled                bool // the bulk check settles rows by transitivity
	}{
		{"exact", exact, "", s, false},
		{"split", split, "", s, true},
		{"split no taps", split, "", noTaps, true},
		{"split every digest", split, "none", s, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]*Result
			for i, perStep := range []bool{true, false} {
				name, _ := adapterTarget(t, tc.cmdline, spec.OpRMSNorm, "BITPARITY_SCAN_AGAINST", tc.against)
				s := tc.s
				s.Target = name
				r, err := Run(context.Background(), s, Options{perStep: perStep})
				if err != nil {
					t.Fatal(err)
				}
				got[i] = r
			}
			want, bulk := got[0], got[1]
			if tc.cmdline == split && bulk.Map.Rule != "rows <= 89 -> A, rows >= 90 -> B" {
				t.Errorf("map %q, want rows <= 89 -> A, rows >= 90 -> B", bulk.Map.Rule)
			}
			if bulk.Map.Rule != want.Map.Rule || !reflect.DeepEqual(bulk.Map.Classes, want.Map.Classes) {
				t.Errorf("map %q %+v, per step %q %+v", bulk.Map.Rule, bulk.Map.Classes, want.Map.Rule, want.Map.Classes)
			}
			if !reflect.DeepEqual(bulk.Diffs, want.Diffs) || (bulk.Certificate == nil) != (want.Certificate == nil) {
				t.Errorf("%d diffs (certified %v), per step %d (%v); first other: %+v", len(bulk.Diffs), bulk.Certificate != nil,
					len(want.Diffs), want.Certificate != nil, firstOther(bulk.Diffs, want.Diffs))
			}
			if bulk.Differing != want.Differing || bulk.Batches != want.Batches {
				t.Errorf("differing %d, batches %d; per step %d, %d", bulk.Differing, bulk.Batches, want.Differing, want.Batches)
			}
			if settled := bulk.RowsCompared < want.RowsCompared; settled != tc.settled || bulk.RowsCompared > want.RowsCompared {
				t.Errorf("rows compared %d, per step %d: want the bulk check to settle rows %v", bulk.RowsCompared, want.RowsCompared, tc.settled)
			}
		})
	}
}
