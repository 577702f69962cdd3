package oracle

import "math"

// The scheduled reductions of a row (see Reduction). Each thread loop is
// written out per term so that the hot loop calls no function values; the
// lane and warp-partial combines are shared. All scratch lives in lanes
// (r.Threads values, owned by the caller) or in fixed-size arrays on the
// stack.

// reduceSumSquares is Σ x[i]² by r with term acc = fma(x, x, acc), every
// thread starting at +0, partials combined with add.rn.
func reduceSumSquares(r Reduction, x, lanes []float32) float32 {
	T, V := r.Threads, r.Vec
	acc := lanes[:T]
	if T == 1 { // one thread visits x in order, whatever Vec
		return fmaChain(0, x, x)
	}
	for t := range acc {
		acc[t] = laneSumSquares(x, t, T, V)
	}
	return combineLanes(r, acc, opAdd)
}

// laneSumSquares is thread t's partial of reduceSumSquares (T threads of V
// elements): fma(x, x, acc) from +0 over x[base : base+V] for base = t·V,
// t·V + T·V, ....
func laneSumSquares(x []float32, t, T, V int) float32 {
	n := len(x)
	a := float32(0)
	for base := t * V; base < n; base += T * V {
		for _, v := range x[base:min(base+V, n)] {
			a = FMA32(v, v, a)
		}
	}
	return a
}

// reduceMax is max x[i] by r with max.f32, every thread starting at -Inf.
func reduceMax(r Reduction, x, lanes []float32) float32 {
	T, V := r.Threads, r.Vec
	acc := lanes[:T]
	for t := range acc {
		acc[t] = laneMax(x, t, T, V)
	}
	return combineLanes(r, acc, opMax)
}

// laneMax is thread t's partial of reduceMax: max.f32 from -Inf over
// thread t's elements (as laneSumSquares visits them).
func laneMax(x []float32, t, T, V int) float32 {
	n := len(x)
	a := float32(math.Inf(-1))
	for base := t * V; base < n; base += T * V {
		for _, v := range x[base:min(base+V, n)] {
			a = Max32(a, v)
		}
	}
	return a
}

// reduceSumExp is Σ Exp32(x[i] - m) by r with term
// acc = acc + Exp32(x - m), every thread starting at +0, partials combined
// with add.rn.
func reduceSumExp(r Reduction, x []float32, m float32, lanes []float32) float32 {
	T, V := r.Threads, r.Vec
	acc := lanes[:T]
	for t := range acc {
		acc[t] = laneSumExp(x, m, t, T, V)
	}
	return combineLanes(r, acc, opAdd)
}

// laneSumExp is thread t's partial of reduceSumExp: acc + Exp32(x - m)
// from +0 over thread t's elements.
func laneSumExp(x []float32, m float32, t, T, V int) float32 {
	n := len(x)
	a := float32(0)
	for base := t * V; base < n; base += T * V {
		for _, v := range x[base:min(base+V, n)] {
			a = Add32(a, Exp32(Sub32(v, m)))
		}
	}
	return a
}

// combineOp is how two partials combine.
type combineOp uint8

const (
	opAdd combineOp = iota // add.rn.f32
	opMax                  // max.f32
)

func (o combineOp) apply(a, b float32) float32 {
	if o == opMax {
		return Max32(a, b)
	}
	return Add32(a, b)
}

// combineLanes combines the thread partials acc (len r.Threads): warps of
// min(Threads, 32) lanes combine by r.Warp, then the warp partials by
// r.Cross. acc is overwritten.
func combineLanes(r Reduction, acc []float32, op combineOp) float32 {
	warp := min(len(acc), 32)
	warps := len(acc) / warp
	var parts [32]float32 // at most 1024/32 warps
	for w := range warps {
		lane := acc[w*warp : (w+1)*warp]
		if r.Warp == WarpSequential {
			s := lane[0]
			for _, v := range lane[1:] {
				s = op.apply(s, v)
			}
			parts[w] = s
		} else {
			parts[w] = butterfly(lane, op)
		}
	}
	return combineParts(r.Cross, parts[:warps], op)
}

// butterfly returns lane 0 of the butterfly
//
//	for off = n/2, ..., 1: v[l] = v[l] op v[l^off] for every lane l at once
//
// (n = len(v), a power of two). Since op is commutative, lanes l and
// l^off hold the same bits after each step, so lane 0's value only needs
// lanes below off: the loop below updates just those, in place, with the
// same operands in the same order (v[l^off] = v[l+off] for l < off).
func butterfly(v []float32, op combineOp) float32 {
	for off := len(v) / 2; off >= 1; off /= 2 {
		for l := range off {
			v[l] = op.apply(v[l], v[l+off])
		}
	}
	return v[0]
}

// combineParts combines partials in the given order: CrossTree is a
// butterfly (when len(parts) is a power of two), otherwise
// ((p0 op p1) op p2) op .... parts is overwritten.
func combineParts(order CrossOrder, parts []float32, op combineOp) float32 {
	if order == CrossTree && isPow2(len(parts)) {
		return butterfly(parts, op)
	}
	s := parts[0]
	for _, p := range parts[1:] {
		s = op.apply(s, p)
	}
	return s
}

// SumBy is Σ v[i] by r with term acc = acc + v, every thread starting at
// +0, partials combined with add.rn: reduceSumExp's order, so that
// SumBy(r, e) with e[i] = Exp32(Sub32(x[i], m)) is bitwise log-prob's sum
// of exponentials under r (the exponentials computed once for many r).
func SumBy(r Reduction, v []float32) float32 {
	T, V := r.Threads, r.Vec
	var stack [1024]float32
	acc := stack[:T]
	n := len(v)
	for t := range acc {
		a := float32(0)
		for base := t * V; base < n; base += T * V {
			for _, x := range v[base:min(base+V, n)] {
				a = Add32(a, x)
			}
		}
		acc[t] = a
	}
	return combineLanes(r, acc, opAdd)
}
