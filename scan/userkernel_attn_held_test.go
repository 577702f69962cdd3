package scan

import (
	"context"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A held attention batch of a user kernel (gpu.HoldUserKernel) keeps the
// ABI inputs of a draw's largest batch on the device and makes each
// step's from them (gpu.HeldAttnInputs says how, on the host). Here the
// CPU twins of the example kernels run on those step inputs: a twin so
// held ("twin-held:NAME", held by holdTwin) must give the bits the twin
// gives on the gathered batch uploaded whole, step by step and in a
// whole scan.

func init() { holders = append(holders, holdTwin) }

// heldTwin is a kernel twin that the scan holds as HoldUserKernel holds
// the kernel (holdTwin).
type heldTwin struct{ kernelTwin }

func (k heldTwin) Info() target.Info {
	i := k.kernelTwin.Info()
	i.Name = "twin-held:" + k.m.Name
	return i
}

// twinHolds counts the batches holdTwin held, twinBulk the windows of
// prefixes their bulk checks ran.
var twinHolds, twinBulk int

// holdTwin holds b for a heldTwin: its ABI inputs, made once.
func holdTwin(t target.Target, b *target.Batch) (held, error) {
	k, ok := t.(heldTwin)
	if !ok {
		return nil, nil
	}
	in, err := gpu.KernelInputs(b, k.sms)
	if err != nil {
		return nil, err
	}
	twinHolds++
	return &twinHeld{k: k.kernelTwin, in: in, out: b.Out, cols: b.Cols()}, nil
}

// twinHeld is a batch held for a kernel twin: each step's inputs are made
// from the held ones (gpu.HeldAttnInputs), as the device makes them.
type twinHeld struct {
	k    kernelTwin
	in   gpu.KernelArgs
	out  oracle.DType
	cols int
}

func (h *twinHeld) run(ctx context.Context, ids []int) (*target.Output, error) {
	a, err := gpu.HeldAttnInputs(h.in, ids)
	if err != nil {
		return nil, err
	}
	y, lse := h.k.rows(a, h.out)
	return &target.Output{Rows: spec.Iota(len(lse)), Cols: h.cols, DType: h.out, TapCols: 1, Values: y, Taps: lse}, nil
}

func (h *twinHeld) alone(ctx context.Context, n int) (*target.Output, error) {
	all := &target.Output{Cols: h.cols, DType: h.out, TapCols: 1}
	for i := range n {
		o, err := h.run(ctx, []int{i})
		if err != nil {
			return nil, err
		}
		all.Values, all.Taps = append(all.Values, o.Values...), append(all.Taps, o.Taps...)
	}
	all.Rows = spec.Iota(len(all.Taps))
	return all, nil
}

// checkPrefixes makes twinHeld a prefixChecker, the host's stand-in for
// the device's bulk check (gpu.UserHeld.CheckPrefixes): hostPrefixSteps.
func (h *twinHeld) checkPrefixes(ctx context.Context, q prefixQuery) ([]*prefixStep, error) {
	twinBulk++
	return hostPrefixSteps(ctx, h, q, nil)
}

func (h *twinHeld) resident() bool { return false }
func (h *twinHeld) release()       {}

// heldTwinOf registers the held twin of example manifest name and returns
// its target name.
func heldTwinOf(t *testing.T, name string) string {
	t.Helper()
	tw := heldTwin{twinOf(t, exampleAttnManifest(t, name), target.SMs).(kernelTwin)}
	n := tw.Info().Name
	if _, err := target.Lookup(n); err != nil {
		target.Register(n, func() (target.Target, error) { return tw, nil })
	}
	return n
}

// attnExamples are the example attention kernels.
var attnExamples = []string{"attn_decode_fixed", "attn_decode_sm", "attn_prefill_fixed", "attn_prefill_maxseqlen", "attn_prefill_prefix"}

// TestAttnTwinsOnHeldSteps: every example kernel's twin on the inputs of
// a step of a held batch (gpu.HeldAttnInputs) gives, bit for bit in its
// values and lse, what it gives on the gathered batch (the held batch's
// layout kept) uploaded whole: prefixes, a gather out of order with a
// repeat, and every item alone, over page sizes (decode) and chunks
// (prefill).
func TestAttnTwinsOnHeldSteps(t *testing.T) {
	kvs := []int{130, 1, 64, 65, 17, 200}
	for _, name := range attnExamples {
		tw := twinOf(t, exampleAttnManifest(t, name), target.SMs).(kernelTwin)
		var b *target.Batch
		var layouts []target.Layout
		if tw.op == spec.OpAttnDecode {
			b = caseBatch(t, decodeCase(len(kvs), kvs, spec.BF16, spec.BF16, 3))
			layouts = []target.Layout{{}, {PageSize: 1}, {PageSize: 5}, {PageSize: 64}}
		} else {
			b = caseBatch(t, prefillCase(5, 20, spec.BF16, spec.FP32, 3))
			layouts = []target.Layout{{}, {ChunkFrom: 4}, {ChunkFrom: 16}, {ChunkFrom: 19}}
		}
		n := b.Items()
		steps := [][]int{{0}, {0, 1, 2}, spec.Iota(n), {n - 1, 0, 2, 2}}
		for i := range n {
			steps = append(steps, []int{i})
		}
		for _, l := range layouts {
			b.Layout = l
			h, err := holdTwin(heldTwin{tw}, b)
			if err != nil {
				t.Fatal(err)
			}
			for _, ids := range steps {
				what := fmt.Sprintf("%s, layout %+v, items %v", name, l, ids)
				got, err := h.run(context.Background(), ids)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				g, err := inputs.Gather(b, ids)
				if err != nil {
					t.Fatal(err)
				}
				g.Layout = l
				want := runAll(t, what, tw, g)
				if i := firstDiff(got.Values, want.Values); i >= 0 {
					t.Fatalf("%s: value %d is %v held, %v on the gathered batch", what, i, got.Values[i], want.Values[i])
				}
				if i := firstDiff(got.Taps, want.Taps); i >= 0 {
					t.Fatalf("%s: lse %d is %v held, %v on the gathered batch", what, i, got.Taps[i], want.Taps[i])
				}
			}
		}
	}
}

// TestAttnTwinHeldScans: a scan of the items dimension of each example
// kernel's held twin (every step's inputs made from the held batch's)
// gives the scan of its twin run step by step on gathered batches: the
// same map, certificate, diffs and counts. The decode scans cross the SM
// rule (requests x 8 heads against 132) at KV lengths of one tile and
// past it, and to 80 requests, whose steps from 64 on the held twin
// checks in bulk (checkPrefixes, as the device does); the prefill ones
// run sequences of 12 and 70 tokens.
func TestAttnTwinHeldScans(t *testing.T) {
	type scanOf struct {
		name  string
		to    int
		shape spec.Shape
	}
	var scans []scanOf
	for _, name := range attnExamples[:2] {
		for _, kv := range []int{1, 65, 130} {
			scans = append(scans, scanOf{name, 24, spec.Shape{KV: kv, Heads: 8, KVHeads: 2, HeadDim: 8}})
		}
		scans = append(scans, scanOf{name, 80, spec.Shape{KV: 130, Heads: 8, KVHeads: 2, HeadDim: 8}}) // 64..80 in bulk
	}
	for _, name := range attnExamples[2:] {
		for _, L := range []int{12, 70} {
			scans = append(scans, scanOf{name, 6, spec.Shape{SeqLen: L, Heads: 4, KVHeads: 2, HeadDim: 8}})
		}
	}
	split := 0
	for _, sc := range scans {
		op := spec.OpAttnDecode
		if sc.shape.SeqLen > 0 {
			op = spec.OpAttnPrefill
		}
		s := spec.ScanSpec{Op: op, From: 1, To: sc.to, Shape: sc.shape, Dists: []spec.Dist{spec.DistNormal}, Out: spec.FP32}
		s.Target = heldTwinOf(t, sc.name)
		held := twinHolds
		got := run(t, s)
		if twinHolds == held {
			t.Fatalf("%s: the scan did not hold the twin's batches", sc.name)
		}
		s.Target = attnTwin(t, sc.name)
		want := run(t, s)
		sameScan(t, fmt.Sprintf("held %s 1..%d at %+v", sc.name, sc.to, sc.shape), got, "unheld", want)
		if want.Certificate == nil {
			split++
		}
	}
	if split == 0 {
		t.Error("every scan certified: no map of a drifting kernel was compared")
	}
	if twinBulk == 0 {
		t.Error("no scan checked its prefixes in bulk")
	}
}
