//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops"
	opsall "github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/quantfp8"
)

// quantFP8 is a target of op quant_fp8 that runs our kernels
// (kernels/quant_fp8.cu) on the default device with policy p.
type quantFP8 struct {
	name string
	p    quantfp8.Policy
}

func (t *quantFP8) Name() string     { return t.name }
func (t *quantFP8) Op() ops.Op       { return quantfp8.Op{} }
func (t *quantFP8) Declared() string { return t.p.String() }
func (t *quantFP8) Invariant() bool  { return t.p.Scaling == quantfp8.PerToken }
func (t *quantFP8) Models() string {
	if t.p.Scaling == quantfp8.PerTensor {
		return fmt.Sprintf("our CUDA kernels, dynamic per-tensor %s scaling: one scale from the batch's amax, so a row depends on other rows' values", t.p.Format)
	}
	return fmt.Sprintf("our CUDA kernels, dynamic per-token %s scaling, bitwise equal to the oracle", t.p.Format)
}

// Run uploads the batch, quantizes every row on the device and copies the
// codes and scales back.
func (t *quantFP8) Run(ctx context.Context, in ops.Input) (*ops.Output, error) {
	return runRowsOp(ctx, t.name, "rows", quantfp8.Op{}, in, func(b *ops.Rows, o *ops.Output) (func(d *Device) error, error) {
		return func(d *Device) error { return d.quantFP8(b, t.p, o) }, nil
	})
}

// quantFP8 runs the quant_fp8 kernels on b with policy p and fills o's
// columns (under do): each row's amax, the batch's (per tensor), then the
// codes and scales.
func (d *Device) quantFP8(b *ops.Rows, p quantfp8.Policy, o *ops.Output) error {
	n, h := b.Items(), b.Cols
	var bs [4]*buffer
	defer func() { d.pool.put(bs[:]...) }()
	var err error
	if bs[0], err = d.upload(b.DType, b.Values); err != nil {
		return err
	}
	for i, size := range []int{4 * (n + 1), n * h, 4 * n} { // amax (and the batch's), q, scale
		if bs[1+i], err = d.pool.get(size); err != nil {
			return err
		}
	}
	x, amax, q, scale := bs[0], bs[1], bs[2], bs[3]
	perTensor, e5m2 := 0, 0
	if p.Scaling == quantfp8.PerTensor {
		perTensor = 1
	}
	if p.Format == quantfp8.E5M2 {
		e5m2 = 1
	}
	const block = 128
	grid := (n + block - 1) / block
	if err := d.launch("fp8_amax_rows", grid, 1, block, ptrArg(x), ptrArg(amax), arg(n), arg(h), arg(b.DType)); err != nil {
		return err
	}
	if perTensor == 1 {
		if err := d.launch("fp8_amax_all", 1, 1, 1, ptrArg(amax), arg(n)); err != nil {
			return err
		}
	}
	if err := d.launch("fp8_quantize", grid, 1, block, ptrArg(x), ptrArg(amax), ptrArg(q), ptrArg(scale),
		arg(n), arg(h), arg(b.DType), arg(perTensor), arg(e5m2)); err != nil {
		return err
	}
	if err := d.sync("quant_fp8"); err != nil {
		return err
	}
	for c, buf := range []*buffer{q, scale} { // quantfp8.ColQ, quantfp8.ColScale
		if err := d.fromDevice(o.Data[c], buf, 0); err != nil {
			return err
		}
	}
	return nil
}

// init registers our quant_fp8 kernels as targets of op quant_fp8, one
// per CPU target's policy, named cuda-<CPU target>: per token certified,
// per tensor a drift under neighbour replacement.
func init() {
	for _, t := range (quantfp8.Op{}).Targets() {
		p, err := quantfp8.ParsePolicy(t.Declared())
		if err != nil {
			panic(fmt.Sprintf("gpu: target %s declares %q: %v", t.Name(), t.Declared(), err))
		}
		opsall.RegisterDevice(&quantFP8{name: "cuda-" + t.Name(), p: p})
	}
}
