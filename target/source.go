package target

import (
	"fmt"
	"math"
	"sync"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Source says where a batch's values come from when they are a pure
// function of a case's seed: item i of the batch is item Items[i] of the
// batch the generator of Case makes (every input row depends only on
// (seed, tensor, item), never on the batch around it, so any item can be
// made alone, on any device).
//
// A batch with a Source may be lazy (Lazy): its sizes and shared tensors
// are set and its per-item values are nil until Materialize fills them. A target that makes the
// values where it computes (a GPU with the device generator: Generator)
// runs a lazy batch as it is, so a GPU campaign moves nothing but the case
// and the item numbers to the device; any other target is handed the batch
// materialized (fuzz does that, in one place).
type Source struct {
	Case spec.Case
	// Items[i] is the case's item that item i copies, or FillerItem for a
	// filler row of kind Filler (padding); nil: item i.
	Items  []int
	Filler string // zeros, nan or huge: the filler rows' values (FillerValues)
	// Tensor is the recipe of the per-item tensor a generating target
	// makes (x of rmsnorm and gemm, log-prob's logits); the tensors the
	// items share (weights, target ids) are in the batch.
	Tensor ItemTensor
	// QKV are the recipes of attention's Q, K and V (the row keys: item
	// for decode's Q; item<<32 | position for the others, positions
	// 0..SeqLen-1 of a prefill sequence, 0..Shape.KVLen(item)-1 of a
	// decode request's cache); nil for the token ops.
	QKV []ItemTensor
}

// ItemTensor is how the case's generator makes a per-item tensor: tensor
// id ID, distribution Dist, scale Scale, and as a row's key the item
// number (Source.Items[i] for row i).
type ItemTensor struct {
	ID    uint64
	Dist  spec.Dist
	Scale float64
}

// FillerItem in Source.Items is a padding row of the source's Filler kind
// instead of one of the case's items.
const FillerItem = -1

// Filled reports whether item i of a batch from s is a filler row.
func (s *Source) Filled(i int) bool { return s.Items != nil && s.Items[i] == FillerItem }

// FillerValues returns value j of a filler row of kind filler in dtype dt
// (its fp32 value, exact in dt):
//
//	zeros ("")  +0
//	nan         the quiet NaN 0x7fc00000
//	huge        +MaxFinite(dt) for even j, -MaxFinite(dt) for odd j
//
// The other fillers of padding (normal, copy) are items of the case.
func FillerValues(filler string, dt oracle.DType) (func(j int) float32, error) {
	switch filler {
	case "zeros", "":
		return func(int) float32 { return 0 }, nil
	case "nan":
		nan := math.Float32frombits(0x7fc00000)
		return func(int) float32 { return nan }, nil
	case "huge":
		h := oracle.MaxFinite(dt)
		return func(j int) float32 {
			if j%2 == 1 {
				return -h
			}
			return h
		}, nil
	}
	return nil, fmt.Errorf("filler %q is not a constant filler (zeros, nan, huge)", filler)
}

// Key returns the generator's row key of item i of a batch from s.
func (s *Source) Key(i int) uint64 {
	if s.Items == nil {
		return uint64(i)
	}
	return uint64(s.Items[i])
}

// Generator is a target that makes a lazy batch's input values itself.
type Generator interface {
	// Generates reports whether the target makes the values of batches
	// from src where it computes.
	Generates(src *Source) bool
}

// lazy is the materialization state of a lazy batch.
type lazy struct {
	mu   sync.Mutex
	fill func(*Batch) error // nil once it ran
	err  error
}

// NewLazy returns b (its Input holding sizes only: every value slice
// nil) as a lazy batch from src, whose Materialize calls fill once to set
// the value slices.
func NewLazy(b *Batch, src *Source, fill func(*Batch) error) *Batch {
	b.Source = src
	b.lazy = &lazy{fill: fill}
	return b
}

// Lazy reports whether b's values are not made yet.
func (b *Batch) Lazy() bool {
	if b.lazy == nil {
		return false
	}
	b.lazy.mu.Lock()
	defer b.lazy.mu.Unlock()
	return b.lazy.fill != nil
}

// Materialize makes the values of a lazy batch on the host (once; later
// calls return the first call's error). A batch that is not lazy is left
// as it is.
func (b *Batch) Materialize() error {
	l := b.lazy
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fill != nil {
		if err := l.fill(b); err != nil {
			l.err = fmt.Errorf("materialize %s batch: %w", b.Op, err)
		}
		l.fill = nil
	}
	return l.err
}
