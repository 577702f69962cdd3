package oracle

import (
	"errors"
	"fmt"
)

// WarpOrder is how the 32 lanes of a warp (or the Threads lanes when a row
// has fewer than 32 threads) combine their partial sums.
type WarpOrder uint8

const (
	// WarpButterfly: for off = lanes/2, ..., 2, 1: v[l] = v[l] + v[l^off]
	// (__shfl_xor_sync). Every lane ends with the same value.
	WarpButterfly WarpOrder = iota
	// WarpSequential: lane 0 computes ((v0 + v1) + v2) + ... + v[lanes-1].
	WarpSequential
)

// CrossOrder is how partials of several warps (or several K/KV splits)
// combine.
type CrossOrder uint8

const (
	// CrossSequential: ((p0 + p1) + p2) + ... in index order.
	CrossSequential CrossOrder = iota
	// CrossTree: a butterfly over the partials: for off = n/2, ..., 1:
	// p[i] = p[i] + p[i^off]; the result is p[0]. n must be a power of two.
	CrossTree
)

func (w WarpOrder) String() string {
	if w == WarpSequential {
		return "sequential"
	}
	return "butterfly"
}

func (c CrossOrder) String() string {
	if c == CrossTree {
		return "tree"
	}
	return "sequential"
}

// Reduction fully states how a kernel sums n values of one row.
//
// Thread t (0 <= t < Threads) accumulates, starting from +0, the elements
//
//	for base := t*Vec; base < n; base += Threads*Vec {
//		for v := 0; v < Vec && base+v < n; v++ { acc = term(acc, x[base+v]) }
//	}
//
// Threads are grouped in warps of min(Threads, 32) lanes; each warp combines
// its lanes by Warp; the warp partials combine by Cross.
type Reduction struct {
	Threads int        // threads per row: 1 (a plain loop), 2, 4, ..., 1024
	Vec     int        // contiguous elements per load: 1, 2, 4 or 8
	Warp    WarpOrder  // lane combine order
	Cross   CrossOrder // warp-partial combine order
}

// Sequential is the plain left-to-right loop: one thread, one element at a
// time.
var Sequential = Reduction{Threads: 1, Vec: 1}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Validate reports whether r is a schedule a kernel can run.
func (r Reduction) Validate() error {
	if !isPow2(r.Threads) || r.Threads > 1024 {
		return fmt.Errorf("reduction: threads %d: want a power of two in 1..1024", r.Threads)
	}
	switch r.Vec {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("reduction: vec %d: want 1, 2, 4 or 8", r.Vec)
	}
	if r.Warp > WarpSequential {
		return fmt.Errorf("reduction: unknown warp order %d", r.Warp)
	}
	if r.Cross > CrossTree {
		return fmt.Errorf("reduction: unknown cross-warp order %d", r.Cross)
	}
	return nil
}

func (r Reduction) String() string {
	return fmt.Sprintf("threads=%d vec=%d warp=%s cross=%s", r.Threads, r.Vec, r.Warp, r.Cross)
}

// ScaleOrder is the order of the two multiplies of RMSNorm's output.
type ScaleOrder uint8

const (
	// ScaleThenWeight: y = (x · rstd) · w, each product rounded (the
	// TransformerEngine and Apex order).
	ScaleThenWeight ScaleOrder = iota
	// WeightedScale: y = x · (rstd · w).
	WeightedScale
)

func (s ScaleOrder) String() string {
	if s == WeightedScale {
		return "x*(rstd*w)"
	}
	return "(x*rstd)*w"
}

// RMSNormSchedule is the full reduction order of RMSNorm.
type RMSNormSchedule struct {
	// Reduce sums x[i]² with term(acc, x) = fma(x, x, acc).
	Reduce Reduction
	Order  ScaleOrder
}

// Validate reports whether s is a schedule a kernel can run.
func (s RMSNormSchedule) Validate() error {
	if err := s.Reduce.Validate(); err != nil {
		return fmt.Errorf("rmsnorm schedule: %w", err)
	}
	if s.Order > WeightedScale {
		return fmt.Errorf("rmsnorm schedule: unknown scale order %d", s.Order)
	}
	return nil
}

func (s RMSNormSchedule) String() string { return s.Reduce.String() + " out=" + s.Order.String() }

// GEMMSchedule is the full reduction order of one output element of
// y = x·W: K is cut into SplitK contiguous chunks of ceil(K/SplitK),
// rounded up to a multiple of KTile when KTile > 1 (a kernel that splits K
// in whole K tiles; trailing chunks may then be empty); chunk c
// accumulates acc = fma(x[m][k], W[k][n], acc) for k ascending from +0
// or, with a tensor core (MMA), acc = TensorCoreH200(MMA).DotAdd over
// blocks of its K products from the chunk's start (the last block
// zero-padded); the chunk partials combine by Combine.
type GEMMSchedule struct {
	SplitK  int
	Combine CrossOrder
	MMA     MMAFormat // MMANone: fma chain
	KTile   int       // 0 or 1: chunks of exactly ceil(K/SplitK)
}

// Chunk returns the length of a split-K chunk of s for K.
func (s GEMMSchedule) Chunk(K int) int {
	c := (K + s.SplitK - 1) / s.SplitK
	if s.KTile > 1 {
		c = (c + s.KTile - 1) / s.KTile * s.KTile
	}
	return max(c, 1)
}

// Validate reports whether s is a schedule a kernel can run.
func (s GEMMSchedule) Validate() error {
	if err := inRange("gemm schedule: split-k", s.SplitK, 1, 64); err != nil {
		return err
	}
	if s.Combine == CrossTree && !isPow2(s.SplitK) {
		return fmt.Errorf("gemm schedule: tree combine needs a power-of-two split-k, got %d", s.SplitK)
	}
	if s.Combine > CrossTree {
		return fmt.Errorf("gemm schedule: unknown combine order %d", s.Combine)
	}
	if s.MMA > MMATF32 {
		return fmt.Errorf("gemm schedule: unknown mma format %d", s.MMA)
	}
	return inRange("gemm schedule: k tile", s.KTile, 0, 4096)
}

// String is "splitk=S combine=C", with " mma=F" for a tensor core and
// " ktile=T" for chunks in whole K tiles.
func (s GEMMSchedule) String() string {
	str := fmt.Sprintf("splitk=%d combine=%s", s.SplitK, s.Combine)
	if s.MMA != MMANone {
		str += " mma=" + s.MMA.String()
	}
	if s.KTile > 1 {
		str += fmt.Sprintf(" ktile=%d", s.KTile)
	}
	return str
}

// LogProbSchedule is the reduction order of a token log-prob: the row max
// and the sum of exponentials both follow Reduce (max with PTX max.f32).
type LogProbSchedule struct {
	Reduce Reduction
}

// Validate reports whether s is a schedule a kernel can run.
func (s LogProbSchedule) Validate() error {
	if err := s.Reduce.Validate(); err != nil {
		return fmt.Errorf("logprob schedule: %w", err)
	}
	return nil
}

func (s LogProbSchedule) String() string { return s.Reduce.String() }

// AttentionSchedule is the order of flash-style attention: KV tokens are
// visited in tiles of Tile tokens with the online-softmax rescale once per
// tile; decode cuts the KV range into Splits contiguous, tile-aligned
// chunks whose partials combine by log-sum-exp in split order.
type AttentionSchedule struct {
	Tile   int
	Splits int
}

// Validate reports whether s is a schedule a kernel can run.
func (s AttentionSchedule) Validate() error {
	if err := inRange("attention schedule: tile", s.Tile, 1, 1024); err != nil {
		return err
	}
	return inRange("attention schedule: splits", s.Splits, 1, 128)
}

func (s AttentionSchedule) String() string {
	return fmt.Sprintf("tile=%d splits=%d", s.Tile, s.Splits)
}

// ErrShape is wrapped by every error about inconsistent tensor sizes.
var ErrShape = errors.New("shape mismatch")
