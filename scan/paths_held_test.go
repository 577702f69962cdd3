package scan

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestPathScanHeldCuts: a path scan of two kit adapters that hold the
// sequences and answer frames of KV cuts gives the Result of the same
// scan with every KV length's batches sent (BITPARITY_SCAN_CUTS=none, the
// frames before scan_cuts), count for count, in a few frames where the
// other takes one a length. The pair is a control that both agrees and
// differs: the NumPy prefill at tile 8 (the seed's drift, at a smaller
// tile) against the tile-64 decode agrees up to 8 tokens and at a few
// lengths past, and differs at the others, in fp32 outputs.
func TestPathScanHeldCuts(t *testing.T) {
	py := pythontest.NumPy(t)
	a, b := comparePathScans(t, adapter(py, "numpy_ops.py", "attn_prefill", "--attn-tile", "8"), adapter(py, "numpy_ops.py", "attn_decode"),
		PathSpec{To: 30, Seqs: 2, Heads: 2, KVHeads: 1, HeadDim: 8, Out: spec.FP32, Dists: []spec.Dist{spec.DistNormal}, Seed: 1})
	if len(a.Differ) == 0 || a.Differ[0] <= 8 || len(a.Differ) == 30-8 {
		t.Fatalf("differ at %q, want some lengths past 8, not all", Ranges(a.Differ))
	}
	t.Logf("map %s; differ at %s (both routes)", MapWords(b.Map), Ranges(a.Differ))
}

// TestTorchPathScanHeldCuts is TestPathScanHeldCuts for
// adapters/torch_ops.py on the CPU (its held sequences are tensors, its
// digests torch's), with BITPARITY_TEST_TORCH=1: torch 1.13's prefill and
// decode differ at some KV lengths (docs/scan.md), the same ones on both
// routes.
func TestTorchPathScanHeldCuts(t *testing.T) {
	if os.Getenv("BITPARITY_TEST_TORCH") != "1" {
		t.Skip("set BITPARITY_TEST_TORCH=1 to test adapters/torch_ops.py (needs torch; about 20 s of torch start-ups)")
	}
	py := pythontest.NumPy(t)
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s has no torch", py)
	}
	a, b := comparePathScans(t, adapter(py, "torch_ops.py", "attn_prefill", "--device", "cpu"),
		adapter(py, "torch_ops.py", "attn_decode", "--device", "cpu"),
		PathSpec{To: 80, Heads: 4, KVHeads: 2, HeadDim: 16, Dists: []spec.Dist{spec.DistNormal}, Seed: 1})
	if len(a.Differ) == 0 {
		t.Logf("torch's prefill and decode agree at every length here (map %s)", MapWords(b.Map))
	}
	t.Logf("map %s; differ at %s (both routes)", MapWords(b.Map), Ranges(a.Differ))
}

// comparePathScans runs path scan ps of adapters pre and dec twice, held
// (the adapters take steps of KV cuts) and with every length's batches
// sent (BITPARITY_SCAN_CUTS=none), checks the routes each took by the
// frames the prefill adapter got (and that scan --exec notes the adapters
// without steps of KV cuts), and that the two Results are the same; it
// returns them.
func comparePathScans(t *testing.T, pre, dec string, ps PathSpec) (held, sent *Result) {
	t.Helper()
	var got [2]*Result
	for i, cuts := range []string{"", "none"} {
		pn, pt := adapterTarget(t, pre, spec.OpAttnPrefill, "BITPARITY_SCAN_CUTS", cuts)
		dn, dt := adapterTarget(t, dec, spec.OpAttnDecode, "BITPARITY_SCAN_CUTS", cuts)
		if pt.StepsCuts() != (cuts == "") || dt.StepsCuts() != (cuts == "") {
			t.Fatalf("BITPARITY_SCAN_CUTS=%q: StepsCuts %v and %v, hellos %v %v", cuts, pt.StepsCuts(), dt.StepsCuts(), pt.Hello(), dt.Hello())
		}
		var log strings.Builder // scan --exec notes each adapter without steps of KV cuts
		if _, err := ExecTarget([]string{pn, dn}, &log); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(log.String(), "takes no steps of KV cuts"); n != map[bool]int{true: 0, false: 2}[cuts == ""] {
			t.Fatalf("BITPARITY_SCAN_CUTS=%q: %d notes on the log: %q", cuts, n, log.String())
		}
		s := ps
		s.Prefill, s.Decode = pn, dn
		r, err := Run(context.Background(), s.ScanSpec(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		lengths := len(ps.Dists) * (ps.To - max(ps.From, 1) + 1)
		if f := pt.Frames(); (cuts == "") != (f < lengths) {
			t.Fatalf("BITPARITY_SCAN_CUTS=%q: %d frames to the prefill adapter for %d KV lengths", cuts, f, lengths)
		}
		got[i] = r
	}
	a, b := got[0], got[1]
	if a.Map.Rule != b.Map.Rule || !slices.Equal(a.Map.Values, b.Map.Values) || !reflect.DeepEqual(a.Map.Classes, b.Map.Classes) {
		t.Errorf("maps differ: held %q, sent %q", MapWords(a.Map), MapWords(b.Map))
	}
	if !slices.Equal(a.Differ, b.Differ) || a.Differing != b.Differing || a.Batches != b.Batches || a.RowsCompared != b.RowsCompared {
		t.Errorf("results differ: held differ at %s (%d batches, %d rows), sent %s (%d, %d)",
			Ranges(a.Differ), a.Batches, a.RowsCompared, Ranges(b.Differ), b.Batches, b.RowsCompared)
	}
	return a, b
}

// TestCutFrames: the frames of KV cuts keep the lengths in order, each at
// most cutsPerFrame cuts, a quarter of a process's share and cutsWork
// prefill scores (one cut a frame when one alone passes it).
func TestCutFrames(t *testing.T) {
	vs := make([]int, 1024)
	for i := range vs {
		vs[i] = i + 1
	}
	for _, tc := range []struct {
		rows, procs, frames int
	}{{1, 1, 16}, {32, 1, 48}, {1 << 28, 1, 1024}, {1, 8, 32}, {32, 8, 55}, {1, 300, 1024}} {
		fs := cutFrames(vs, tc.rows, tc.procs)
		var all []int
		for _, f := range fs {
			work := 0
			for _, v := range f {
				work += tc.rows * v * v
			}
			if len(f) == 0 || len(f) > cutsPerFrame || len(f) > (len(vs)+4*tc.procs-1)/(4*tc.procs) || len(f) > 1 && work > cutsWork {
				t.Fatalf("rows %d, %d processes: a frame of %d cuts, %d scores", tc.rows, tc.procs, len(f), work)
			}
			all = append(all, f...)
		}
		if !slices.Equal(all, vs) || len(fs) != tc.frames {
			t.Errorf("rows %d, %d processes: %d frames (want %d) holding %d lengths", tc.rows, tc.procs, len(fs), tc.frames, len(all))
		}
	}
}

// TestPathScanProcs: a path scan spread over three processes of each
// adapter (Options.Procs: the first and two clones) gives the Result of
// the same scan on one process of each, count for count; the first
// processes answer about a third of the frames.
func TestPathScanProcs(t *testing.T) {
	py := pythontest.NumPy(t)
	ps := PathSpec{To: 30, Seqs: 2, Heads: 2, KVHeads: 1, HeadDim: 8, Out: spec.FP32, Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary}, Seed: 1}
	var got [2]*Result
	var frames [2]int
	for i, procs := range []int{1, 3} {
		names := make([]string, 2)
		var pre *external.Target
		for j, cmd := range []string{adapter(py, "numpy_ops.py", "attn_prefill", "--attn-tile", "8"), adapter(py, "numpy_ops.py", "attn_decode")} {
			op := []spec.Op{spec.OpAttnPrefill, spec.OpAttnDecode}[j]
			names[j] = fmt.Sprintf("exec:test-procs-%d-%s", procs, op)
			external.Register(names[j], cmd, op, external.Options{Procs: procs})
			tg, err := target.Lookup(names[j])
			if err != nil {
				t.Fatal(err)
			}
			et := tg.(*external.Target)
			t.Cleanup(func() { et.Close() })
			if j == 0 {
				pre = et
			}
		}
		s := ps
		s.Prefill, s.Decode = names[0], names[1]
		r, err := Run(context.Background(), s.ScanSpec(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		got[i], frames[i] = r, pre.Frames()
	}
	a, b := got[0], got[1]
	if MapWords(a.Map) != MapWords(b.Map) || !slices.Equal(a.Differ, b.Differ) || a.Differing != b.Differing || a.Batches != b.Batches || a.RowsCompared != b.RowsCompared {
		t.Errorf("one process: %s, differ at %s (%d batches, %d rows); three: %s, differ at %s (%d, %d)",
			MapWords(a.Map), Ranges(a.Differ), a.Batches, a.RowsCompared, MapWords(b.Map), Ranges(b.Differ), b.Batches, b.RowsCompared)
	}
	// each draw: a hold, then frames 0, 3, 6, ... of the scan's frames
	lengths := make([]int, ps.To)
	for i := range lengths {
		lengths[i] = i + 1
	}
	n := len(cutFrames(lengths, ps.Seqs*ps.Heads, 3))
	if want := len(ps.Dists) * (1 + (n+2)/3); frames[1] != want {
		t.Errorf("the first prefill process got %d frames of three processes' scan (%d frames a draw), want %d", frames[1], n, want)
	}
	t.Logf("differ at %s; frames to the first prefill process: %d alone, %d of three", Ranges(a.Differ), frames[0], frames[1])
}
