package scan

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// An adapter that speaks the scan frames (external.Target.Scans) holds the
// largest batch in its own process, on its device: each step sends the
// item ids of its batch and gets back a digest of every output row
// (external.RowDigest). An adapter that also compares steps with the
// items alone (external.Target.ComparesAlone) keeps the rows of the draw's
// items-alone step and answers a later step with the rows that differ
// from their item alone only: a step costs the op and one compare on the
// adapter's device, and a few bytes of reply; external.Target.Step fills
// in the digests of the rows not named from the items alone's, so every
// compare here is the same. Compares are compares of digests; full rows
// travel only for witnesses, the rows of a differing value whose bits
// name its class. Adapters that predate the scan frames are held on the
// host (hostHeld): every step sends its whole batch through the pipe.

// holdExec holds b in the adapter t runs, when t is an external target
// that speaks the scan frames. The hold frame goes with the first run
// (which has a context).
func holdExec(t target.Target, b *target.Batch) (held, error) {
	et, ok := t.(*external.Target)
	if !ok || !et.Scans() {
		return nil, nil
	}
	return &execHeld{t: et, b: b, kr: b.RowsPerItem(), cols: b.Cols(), dt: b.OutDType()}, nil
}

// execHeld is a batch held by an adapter.
type execHeld struct {
	t      *external.Target
	b      *target.Batch
	sent   bool
	kr     int
	cols   int
	dt     oracle.DType
	ctx    context.Context // the last run's: witnesses fetch under it
	fetchN int64           // rows fetched as witnesses
	// ahead holds the answers to prefix steps asked for ahead (a scan
	// asks for prefixes v, v+1, ... in turn), by prefix size; panels
	// those to panel batches (panelBatches), by their first item and size.
	ahead  map[int]*external.Step
	panels map[[2]int]*external.Step
	ident  []int // 0, 1, ...: every output's Rows, shared, never written
}

// aheadRows bounds the output rows of one frame of prefix steps asked
// for ahead, and aheadSteps its steps: a frame's work and its reply (16
// bytes a row) stay bounded. An adapter that compares with the items
// alone (external.Target.ComparesAlone) answers only the rows that differ,
// so its frames take more: aheadAloneRows and aheadAloneSteps (fewer round
// trips, and fewer waits for its device between them).
const (
	aheadRows       = 1 << 20
	aheadSteps      = 64
	aheadAloneRows  = 1 << 23
	aheadAloneSteps = 512
)

func (h *execHeld) resident() bool { return true }
func (h *execHeld) release()       {}

func (h *execHeld) run(ctx context.Context, ids []int) (*target.Output, error) {
	return h.step(ctx, ids, false)
}

func (h *execHeld) alone(ctx context.Context, n int) (*target.Output, error) {
	return h.step(ctx, spec.Iota(n), true)
}

// step runs the batch of held items ids (each: every item alone) and
// returns an output whose rows are digests on the adapter's side.
func (h *execHeld) step(ctx context.Context, ids []int, each bool) (*target.Output, error) {
	h.ctx = ctx
	if !h.sent {
		if err := h.t.Hold(ctx, h.b); err != nil {
			return nil, fmt.Errorf("hold the largest batch in the adapter: %w", err)
		}
		h.sent = true
	}
	var st *external.Step
	var err error
	switch {
	case !each && spec.IsIota(ids):
		st, err = h.prefix(ctx, len(ids))
	case !each && h.isPanel(ids):
		st, err = h.panel(ctx, ids)
	default:
		st, err = h.t.Step(ctx, ids, each, nil)
	}
	if err != nil {
		return nil, err
	}
	if len(h.ident) < st.Rows {
		h.ident = spec.Iota(max(st.Rows, h.b.Rows()))
	}
	o := &target.Output{Rows: h.ident[:st.Rows:st.Rows], Cols: h.cols, DType: h.dt, TapCols: st.TapCols,
		Device: &digestRows{h: h, ids: ids, each: each, d: st.Digests}}
	if st.TapCols > 0 {
		o.DeviceTaps = &digestRows{h: h, ids: ids, each: each, d: st.TapDigests, taps: true}
	}
	return o, nil
}

// prefix answers the step of the first n held items: from the steps asked
// for ahead, else in one frame with the prefixes n+1, n+2, ... that follow
// it (up to aheadSteps steps and aheadRows rows, aheadAloneSteps and
// aheadAloneRows for an adapter that compares with the items alone, within
// the held items).
func (h *execHeld) prefix(ctx context.Context, n int) (*external.Step, error) {
	if st, ok := h.ahead[n]; ok {
		delete(h.ahead, n)
		return st, nil
	}
	sizes := []int{n}
	rows := n * h.kr
	for m := n + 1; m <= h.b.Items() && h.fits(len(sizes), rows, m); m++ {
		sizes = append(sizes, m)
		rows += m * h.kr
	}
	sts, err := h.t.StepPrefixes(ctx, sizes)
	if err != nil {
		return nil, err
	}
	h.ahead = make(map[int]*external.Step, len(sizes)-1)
	for i, m := range sizes[1:] {
		h.ahead[m] = sts[i+1]
	}
	return sts[0], nil
}

// fits reports whether a prefix of m items fits in a frame of prefix
// steps that holds steps steps of rows rows: at most aheadSteps steps and
// aheadRows rows, or aheadAloneSteps and aheadAloneRows for an adapter
// that compares with the items alone.
func (h *execHeld) fits(steps, rows, m int) bool {
	maxSteps, maxRows := aheadSteps, aheadRows
	if h.t.ComparesAlone() {
		maxSteps, maxRows = aheadAloneSteps, aheadAloneRows
	}
	return steps < maxSteps && rows+m*h.kr <= maxRows
}

// isPanel reports whether ids are a panel batch of a scan of the held
// items (panelBatches: v < PanelItems items from first = a multiple of v)
// and the adapter takes several batches a frame (StepsBatches).
func (h *execHeld) isPanel(ids []int) bool {
	v, items := len(ids), h.b.Items()
	if v < 1 || v >= PanelItems || !h.t.StepsBatches() {
		return false
	}
	first := ids[0]
	if first < v || first%v != 0 || first >= min(items, PanelItems) {
		return false
	}
	for i, id := range ids {
		if id != (first+i)%items {
			return false
		}
	}
	return true
}

// panel answers panel batch ids (isPanel): from the panel batches asked
// for ahead, else in one frame with every later panel batch of its size
// and those of the larger sizes below PanelItems, as the scan asks for
// them next (itemsClass, value after value), within aheadAloneRows rows.
func (h *execHeld) panel(ctx context.Context, ids []int) (*external.Step, error) {
	v, first := len(ids), ids[0]
	if st, ok := h.panels[[2]int{first, v}]; ok {
		delete(h.panels, [2]int{first, v})
		return st, nil
	}
	items := h.b.Items()
	var batches [][]int
	var keys [][2]int
	rows := 0
	for u := v; u < min(items, PanelItems) && rows < aheadAloneRows; u++ {
		for _, b := range panelBatches(u, items) {
			if u == v && b[0] < first {
				continue
			}
			batches, keys = append(batches, b), append(keys, [2]int{b[0], u})
			rows += u * h.kr
		}
	}
	sts, err := h.t.StepBatches(ctx, batches)
	if err != nil {
		return nil, err
	}
	h.panels = make(map[[2]int]*external.Step, len(keys)-1)
	for i, k := range keys[1:] {
		h.panels[k] = sts[i+1]
	}
	return sts[0], nil
}

// digestRows is a step's output (or its taps) as the adapter's digests of
// its rows: a target.DeviceOutput whose compares compare digests and whose
// Fetch runs the step again for the rows' bits.
type digestRows struct {
	h    *execHeld
	ids  []int
	each bool
	d    []uint64
	taps bool
}

// CompareRows reports the pairs whose digests differ; a digest says
// nothing of which column differs (FirstCol -1, Count 1).
func (r *digestRows) CompareRows(other target.DeviceOutput, ra, rb []int, dt oracle.DType) ([]target.RowDiff, error) {
	o, ok := other.(*digestRows)
	if !ok {
		return nil, fmt.Errorf("compare adapter digests with a %T", other)
	}
	var ds []target.RowDiff
	for i := range ra {
		if r.d[ra[i]] != o.d[rb[i]] {
			ds = append(ds, target.RowDiff{PosA: ra[i], PosB: rb[i], Count: 1, FirstCol: -1})
		}
	}
	return ds, nil
}

// Fetch runs the step again, asking for the rows pos in full; the adapter
// must give the same digests as the first time (else the target is not
// deterministic: the fetch fails with an error wrapping
// errNondeterministic, and the step's value is nondeterministic).
func (r *digestRows) Fetch(pos []int) ([]float32, error) {
	h := r.h
	st, err := h.t.Step(h.ctx, r.ids, r.each, pos)
	if err != nil {
		return nil, err
	}
	got := st.Digests
	if r.taps {
		got = st.TapDigests
	}
	for _, p := range pos {
		if p >= len(got) || got[p] != r.d[p] {
			return nil, fmt.Errorf("fetch: %w", &nondeterminism{rows: 1, first: p,
				detail: fmt.Sprintf("row %d of the step has another digest the second time", p)})
		}
	}
	h.fetchN += int64(len(pos))
	if r.taps {
		return st.Taps, nil
	}
	return st.Values, nil
}

func (r *digestRows) Release() {}

// talkFields are the hello's fields that say how an adapter talks, not
// what it computes: a certificate neither records nor compares them.
var talkFields = map[string]bool{"frame": true, "seq": true, "protocol": true, "scan_against": true, "scan_batches": true, "scan_cuts": true,
	"scan_gen": true, "scan_ops": true}

// AdapterIdentity is what a certificate records of an adapter's hello:
// every field but frame, seq, protocol, scan_against, scan_batches,
// scan_cuts, scan_gen and scan_ops (name, op, device, schedule, about, versions, backend, scan,
// ...).
func AdapterIdentity(hello map[string]string) map[string]string {
	id := make(map[string]string, len(hello))
	for k, v := range hello {
		if !talkFields[k] {
			id[k] = v
		}
	}
	return id
}

// HelloDiff lists the fields in which the hello here differs from the
// recorded one, sorted, but those of talkFields (a certificate recorded
// before they were left out may hold them): `versions: recorded
// "numpy=1.24", here "numpy=2.0"`.
func HelloDiff(recorded, here map[string]string) []string {
	keys := map[string]bool{}
	for k := range recorded {
		keys[k] = true
	}
	for k := range here {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !talkFields[k] && recorded[k] != here[k] {
			out = append(out, fmt.Sprintf("%s: recorded %q, here %q", k, recorded[k], here[k]))
		}
	}
	return out
}

// ExecTarget is the target of a scan of the adapters names (scan --exec,
// started): one adapter, or a model route, by its name; two (prefill and
// decode: a path scan, paths.go) joined by a comma; a note on log names
// an adapter of a path scan that takes no steps of KV cuts. An adapter that predates the scan frames still scans, every
// step through the pipe, and a note on log says so. A name that is not a
// target, or a model route among several, is an error.
func ExecTarget(names []string, log io.Writer) (string, error) {
	for _, n := range names {
		if _, err := target.Lookup(n); err != nil && !(external.IsModel(n) && len(names) == 1) && !IsOpTarget(n) {
			return "", fmt.Errorf("--exec: %v (a model route scans alone)", err)
		}
	}
	name := strings.Join(names, ",")
	if len(names) > 1 {
		for _, n := range names {
			t, _ := target.Lookup(n)
			if et, ok := t.(*external.Target); ok && !et.StepsCuts() {
				fmt.Fprintf(log, "scan: note: adapter %s takes no steps of KV cuts (its hello has no scan_cuts=%d): a path scan sends every KV length's batches through the pipe and back; the Python kit of this tree takes them (docs/protocol.md, Path scans)\n",
					n, external.CutsVersion)
			}
		}
		return name, nil
	}
	t, _ := target.Lookup(name)
	if et, ok := t.(*external.Target); ok && !et.Scans() {
		fmt.Fprintf(log, "scan: note: adapter %s predates the scan frames (its hello has no scan=%d): every step sends its whole batch through the pipe and back, which is slow at large batches; adapters built on the Python kit of this tree speak them (docs/protocol.md, Scans)\n",
			name, external.ScanVersion)
	}
	return name, nil
}

func init() { caseHolders = append(caseHolders, holdExecCase) }

// holdExecCase holds the largest batch of case c in an adapter that makes
// a held batch's rows from the draw's recipe (external.Target.Generates):
// the batch is lazy (inputs.Lazy: sizes and shared tensors), so its
// hold carries the recipe and no rows are made on the host nor written
// to the pipe. A case whose rows the host makes (boundary, sensitive,
// explicit data) is held with its rows, as before.
func holdExecCase(t target.Target, c spec.Case, pre *target.Batch) (held, *target.Batch, error) {
	et, ok := t.(*external.Target)
	if !ok || !et.Generates() {
		return nil, nil, nil
	}
	b, err := lazy(pre, c)
	if err != nil {
		return nil, nil, err
	}
	h, err := holdExec(t, b)
	return h, b, err
}
