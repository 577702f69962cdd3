package oracle

import "fmt"

// GEMMInput is a batch for y = x·W: X is M x K, W is K x N (row-major),
// both of the input dtype. Out is the output dtype.
type GEMMInput struct {
	X, W    []float32
	M, K, N int
	Out     DType
}

// GEMM computes, for each selected row m (all rows when rows is nil), into
// out[i*N : (i+1)*N] for the i-th selected row, for every column n:
//
//	chunk = ceil(K / SplitK)             // rounded up to a multiple of KTile when KTile > 1
//	for c := 0; c < SplitK; c++ {
//		p[c] = +0
//		for k := c*chunk; k < min((c+1)*chunk, K); k++ { p[c] = fma(x[m][k], W[k][n], p[c]) }
//	}
//	y[m][n] = round_out(combine(p))   // ((p0+p1)+p2)+... or a tree
//
// With s.MMA set, chunk c instead chains tensor-core steps (tc =
// TensorCoreH200(s.MMA), tc.K products each):
//
//	for k := c*chunk; k < hi; k += tc.K { p[c] = tc.DotAdd(x[m][k:min(k+tc.K, hi)], W[k:..][n], p[c]) }
//
// Rows are independent: row m's bits never depend on M or other rows.
func GEMM(in GEMMInput, s GEMMSchedule, rows []int) ([]float32, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if in.M < 0 || in.K < 1 || in.N < 1 {
		return nil, fmt.Errorf("gemm: m %d k %d n %d: %w", in.M, in.K, in.N, ErrShape)
	}
	if err := checkLen("gemm x", len(in.X), in.M*in.K); err != nil {
		return nil, err
	}
	if err := checkLen("gemm w", len(in.W), in.K*in.N); err != nil {
		return nil, err
	}
	sel, err := SelectRows(rows, in.M)
	if err != nil {
		return nil, fmt.Errorf("gemm: %w", err)
	}
	K, N := in.K, in.N
	chunk := s.Chunk(K)
	out := make([]float32, len(sel)*N)
	parallelRows(len(sel), func(i int) {
		x := in.X[sel[i]*K : (sel[i]+1)*K]
		parts := make([]float32, s.SplitK)
		acc := make([]float32, N*s.SplitK) // acc[c*N+n]
		for c := 0; c < s.SplitK; c++ {
			lo, hi := c*chunk, min((c+1)*chunk, K)
			a := acc[c*N : (c+1)*N]
			if s.MMA != MMANone {
				mmaChain(TensorCoreH200(s.MMA), x, in.W, N, lo, hi, a)
				continue
			}
			for k := lo; k < hi; k++ {
				axpy32(x[k], in.W[k*N:(k+1)*N], a) // a[n] = fma(x[k], W[k][n], a[n])
			}
		}
		y := out[i*N : (i+1)*N]
		for n := range y {
			for c := range parts {
				parts[c] = acc[c*N+n]
			}
			y[n] = combineParts(s.Combine, parts, opAdd)
		}
		RoundSlice(in.Out, y)
	})
	return out, nil
}

// mmaChain accumulates into a[n], for every column n, the tensor-core steps
// over k in [lo, hi): a[n] = tc.DotAdd(x[k:k+tc.K], W[k:k+tc.K][n], a[n]).
func mmaChain(tc TensorCore, x, w []float32, N, lo, hi int, a []float32) {
	col := make([]float32, tc.K)
	for k := lo; k < hi; k += tc.K {
		e := min(k+tc.K, hi)
		for n := range a {
			for j := k; j < e; j++ {
				col[j-k] = w[j*N+n]
			}
			a[n] = tc.DotAdd(x[k:e], col[:e-k], a[n])
		}
	}
}
