package oracle

// reduce folds term(acc, x[i]) over x following r (see Reduction), every
// thread's accumulator starting at init; lanes and warp partials combine with
// combine. lanes holds scratch space of at least r.Threads values.
func reduce(r Reduction, x []float32, lanes []float32, init float32, term, combine func(a, b float32) float32) float32 {
	n := len(x)
	T, V := r.Threads, r.Vec
	acc := lanes[:T]
	for t := 0; t < T; t++ {
		a := init
		for base := t * V; base < n; base += T * V {
			for v := 0; v < V && base+v < n; v++ {
				a = term(a, x[base+v])
			}
		}
		acc[t] = a
	}
	warp := T
	if warp > 32 {
		warp = 32
	}
	warps := T / warp
	for w := 0; w < warps; w++ {
		lane := acc[w*warp : (w+1)*warp]
		switch r.Warp {
		case WarpSequential:
			s := lane[0]
			for l := 1; l < warp; l++ {
				s = combine(s, lane[l])
			}
			lane[0] = s
		default:
			butterfly(lane, combine)
		}
	}
	// warp partials are acc[0], acc[warp], acc[2*warp], ...
	parts := make([]float32, 0, 32)
	for w := 0; w < warps; w++ {
		parts = append(parts, acc[w*warp])
	}
	return combineParts(r.Cross, parts, combine)
}

// butterfly does for off = n/2, ..., 1: v[l] = v[l] + v[l^off], for every
// lane l at once (n a power of two). Afterwards every lane holds the sum.
func butterfly(v []float32, combine func(a, b float32) float32) {
	n := len(v)
	tmp := make([]float32, n)
	for off := n / 2; off >= 1; off /= 2 {
		for l := range v {
			tmp[l] = combine(v[l], v[l^off])
		}
		copy(v, tmp)
	}
}

// combineParts combines partials in the given order.
func combineParts(order CrossOrder, parts []float32, combine func(a, b float32) float32) float32 {
	if order == CrossTree && isPow2(len(parts)) {
		p := append([]float32(nil), parts...)
		butterfly(p, combine)
		return p[0]
	}
	s := parts[0]
	for _, p := range parts[1:] {
		s = combine(s, p)
	}
	return s
}

func sumSquares(acc, x float32) float32 { return FMA32(x, x, acc) }
