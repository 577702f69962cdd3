//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops"
	opsall "github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/moeroute"
)

// Names of the GPU targets of op moe_route.
const (
	MoERouteName        = "cuda-moe_route"
	MoERouteTieHighName = "cuda-drift-moe-route-tie-high-128"
)

// moeRoute is a target of op moe_route that runs our kernel
// (kernels/moe_route.cu) on the default device with the policy at(items)
// chooses for a batch; the kernel sums the softmax denominator
// sequentially, so every policy it runs has sum=sequential.
type moeRoute struct {
	name, models string
	declared     moeroute.Policy
	at           func(items int) moeroute.Policy
}

func (t *moeRoute) Name() string     { return t.name }
func (t *moeRoute) Op() ops.Op       { return moeroute.Op{} }
func (t *moeRoute) Declared() string { return t.declared.String() }
func (t *moeRoute) Models() string   { return t.models }
func (t *moeRoute) Invariant() bool  { return t.name == MoERouteName }

// Run uploads the batch's logits, routes every token on the device and
// copies the ids and weights back.
func (t *moeRoute) Run(ctx context.Context, in ops.Input) (*ops.Output, error) {
	return runRowsOp(ctx, t.name, "router logits", moeroute.Op{}, in, func(b *ops.Rows, o *ops.Output) (func(d *Device) error, error) {
		p := t.at(b.Items())
		if p.Sum != moeroute.SumSequential {
			return nil, fmt.Errorf("target %s: policy %s: the kernel sums sequentially", t.name, p)
		}
		return func(d *Device) error { return d.moeRoute(b, p.Tie, o) }, nil
	})
}

// moeRoute runs kernel moe_route on b with tie-break tie and fills o's
// columns (under do).
func (d *Device) moeRoute(b *ops.Rows, tie moeroute.TieBreak, o *ops.Output) error {
	n, e, k := b.Items(), b.Cols, b.Shape[moeroute.DimTopK]
	var bs [3]*buffer
	defer func() { d.pool.put(bs[:]...) }()
	var err error
	if bs[0], err = d.upload(b.DType, b.Values); err != nil {
		return err
	}
	for i := 1; i < 3; i++ {
		if bs[i], err = d.pool.get(4 * n * k); err != nil {
			return err
		}
	}
	tieHigh := 0
	if tie == moeroute.TieHighest {
		tieHigh = 1
	}
	const block = 128
	if err := d.launch("moe_route", (n+block-1)/block, 1, block, ptrArg(bs[0]), ptrArg(bs[1]), ptrArg(bs[2]),
		arg(n), arg(e), arg(k), arg(b.DType), arg(tieHigh)); err != nil {
		return err
	}
	if err := d.sync("moe_route"); err != nil {
		return err
	}
	for c, buf := range []*buffer{bs[1], bs[2]} { // moeroute.ColIDs, moeroute.ColWeights
		if err := d.fromDevice(o.Data[c], buf, 0); err != nil {
			return err
		}
	}
	return nil
}

// init registers our kernel as a target of moe_route (exact, the default
// policy at every batch size) and its drift twin of the CPU model
// drift-moe-route-tie-high-128 (ties broken highest index first from 128
// tokens on), a negative control the GPU scan must find at 128.
func init() {
	def := moeroute.Policy{}
	opsall.RegisterDevice(&moeRoute{name: MoERouteName, declared: def,
		models: "bitparity's exact CUDA kernel (gpu/kernels/moe_route.cu), bitwise equal to the oracle with the default policy (tie=lowest sum=sequential)",
		at:     func(int) moeroute.Policy { return def }})
	opsall.RegisterDevice(&moeRoute{name: MoERouteTieHighName, declared: def,
		models: fmt.Sprintf("our kernel as a top-k whose path changes with the batch: ties broken lowest index first below %d tokens, highest index first from %d on (drift-moe-route-tie-high-128 on the GPU)", moeroute.TieHighFrom, moeroute.TieHighFrom),
		at: func(n int) moeroute.Policy {
			if n >= moeroute.TieHighFrom {
				return moeroute.Policy{Tie: moeroute.TieHighest}
			}
			return def
		}})
}
