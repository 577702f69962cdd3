// Package mykernel is what a team's repository holds: its own RMSNorm
// kernel (here a Go model of it; a CUDA kernel behind a launcher, or a
// Python op behind an adapter process, plugs in the same way) made a
// bitparity target, and a fuzz test (rmsnorm_test.go) that runs
// bitparity's relations against it with go test -fuzz.
package mykernel

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// RMSNorm is the team's kernel. Each row is summed in Lanes interleaved
// lanes (lane l takes columns l, l+Lanes, ...; acc = fma(x, x, acc) from
// +0), the lanes combine pairwise like a warp butterfly, then
//
//	rstd = 1 / sqrt(ss/hidden + eps);  y = round_out((x·rstd)·w)
//
// with correctly rounded fp32 operations. LanesFor, when set, picks the
// lane count from the batch's row count, the way real kernels pick a
// reduction path by M: a batch-invariance bug that bitparity finds.
type RMSNorm struct {
	Lanes    int
	LanesFor func(rows int) int
}

// Info declares the kernel: its name, op, and the oracle schedule it
// implements bit for bit (so oracle parity is bitwise).
func (k RMSNorm) Info() target.Info {
	return target.Info{Name: "mykernel-rmsnorm", Op: rmsnorm.Op{}.Name(), Device: "cpu", Invariant: true,
		Schedule: fmt.Sprintf("threads=%d vec=1 warp=butterfly cross=sequential out=(x*rstd)*w", k.Lanes)}
}

// Run computes the selected rows of the batch (all rows when rows is nil).
func (k RMSNorm) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	in, ok := b.Input.(*oracle.RMSNormInput)
	if !ok || in == nil {
		return nil, fmt.Errorf("mykernel: not an rmsnorm batch")
	}
	lanes := k.Lanes
	if k.LanesFor != nil {
		lanes = k.LanesFor(in.Rows)
	}
	if rows == nil {
		rows = make([]int, in.Rows)
		for i := range rows {
			rows[i] = i
		}
	}
	H := in.Hidden
	out := &target.Output{Rows: rows, Cols: H, DType: b.OutDType(), Values: make([]float32, len(rows)*H)}
	acc := make([]float32, lanes)
	for i, r := range rows {
		if r < 0 || r >= in.Rows {
			return nil, fmt.Errorf("mykernel: row %d out of range", r)
		}
		x := in.X[r*H : (r+1)*H]
		for l := range acc {
			acc[l] = 0
		}
		for j, v := range x {
			acc[j%lanes] = oracle.FMA32(v, v, acc[j%lanes])
		}
		for off := lanes / 2; off >= 1; off /= 2 { // butterfly: lane 0 ends with the sum
			next := make([]float32, lanes)
			for l := range acc {
				next[l] = oracle.Add32(acc[l], acc[l^off])
			}
			copy(acc, next)
		}
		rstd := oracle.Div32(1, oracle.Sqrt32(oracle.Add32(oracle.Div32(acc[0], float32(H)), in.Eps)))
		y := out.Values[i*H : (i+1)*H]
		for j, v := range x {
			y[j] = oracle.Round(in.Out, oracle.Mul32(oracle.Mul32(v, rstd), in.W[j]))
		}
	}
	return out, nil
}
