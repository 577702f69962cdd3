package external

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// GenVersion is the input generator version whose twin an adapter may
// have (docs/protocol.md, "Generated holds"): an adapter that makes a
// held batch's rows itself from the draw's recipe says so in its hello
// with scan_gen="2".
const GenVersion = 2

// HeldGenerated reports whether the batch the adapter holds was made
// there from its recipe (false before a hold).
func (t *Target) HeldGenerated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held != nil && t.held.generated
}

// Generates reports whether the adapter makes a held batch's rows from
// the draw's recipe (its hello says scan_gen="2"): a hold of a lazy batch
// then carries the recipe instead of the rows.
func (t *Target) Generates() bool {
	return t.Scans() && t.hello["scan_gen"] == strconv.Itoa(GenVersion)
}

// recipe is how the adapter makes the per-item tensor of a held batch:
// rows i = 0..rows-1 of cols values of tensor id of the case's seed under
// generator version 2, row i keyed keys[i] (nil: i), each rounded to the
// batch's input dtype.
type recipe struct {
	name       string // the wire tensor it replaces: x, or logits
	seed, id   uint64
	dist       spec.Dist
	scale      float64
	rows, cols int
	keys       []int // nil: row i keyed i
}

// recipeOf returns the recipe of lazy batch b's per-item tensor, or nil
// when its rows must travel: b is not lazy, not of a token op, not of
// generator version 2, of a boundary case (nudged on the host) or with
// filler rows. A sensitive case is never lazy (inputs.Lazy).
func recipeOf(b *target.Batch) *recipe {
	src := b.Source
	if !b.Lazy() || src == nil || src.QKV != nil || src.Filler != "" || src.Case.GenVersion != GenVersion {
		return nil
	}
	rt := src.Tensor
	if _, err := values.DistCode(rt.Dist); err != nil || rt.Dist == spec.DistBoundary || rt.Dist == spec.DistSensitive {
		return nil
	}
	for _, it := range src.Items {
		if it < 0 {
			return nil // a filler row
		}
	}
	k, in, err := b.Kind()
	if err != nil || !k.Token() {
		return nil
	}
	_, ts, err := k.WireTensors(in)
	if err != nil || len(ts) == 0 || ts[0].Int || len(ts[0].Shape) != 2 {
		return nil
	}
	return &recipe{name: ts[0].Name, seed: src.Case.Seed, id: rt.ID, dist: rt.Dist, scale: rt.Scale,
		rows: ts[0].Shape[0], cols: ts[0].Shape[1], keys: src.Items}
}

// apply makes hold frame f carry r: the tensor r replaces leaves the
// frame (it has no values: the batch is lazy), and the recipe's fields
// join the meta; keys other than 0..rows-1 travel as the I64 tensor
// "<name>_keys" [rows].
func (r *recipe) apply(f *frame, in string) {
	f.tensors = slices.DeleteFunc(f.tensors, func(t tensor) bool { return t.name == r.name })
	p := "gen_" + r.name + "_"
	f.meta["gen"] = strconv.Itoa(GenVersion)
	f.meta["gen_seed"] = strconv.FormatUint(r.seed, 10)
	f.meta["gen_tensors"] = r.name
	f.meta[p+"id"] = strconv.FormatUint(r.id, 10)
	f.meta[p+"dist"] = string(r.dist)
	f.meta[p+"scale"] = strconv.FormatFloat(r.scale, 'g', -1, 64)
	f.meta[p+"dtype"] = in
	f.meta[p+"shape"] = fmt.Sprintf("%d %d", r.rows, r.cols)
	if r.keys != nil {
		f.tensors = append(f.tensors, tensor{name: r.name + "_keys", dtype: wireI64, shape: []int{len(r.keys)}, data: encodeInt64s(nil, r.keys)})
	}
}
