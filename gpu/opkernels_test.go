//go:build cuda

package gpu

import (
	"testing"

	opsall "github.com/bitparity/bitparity/ops/all"
)

// TestOpKernels: every op of ops/all.Cases has one kernel, in the same
// order, and the device nudges the boundary rows of exactly the ops whose
// package says their boundary cases may be lazy (ops.CaseOp.LazyBoundary).
// It needs no GPU.
func TestOpKernels(t *testing.T) {
	if len(opKernels) != len(opsall.Cases) {
		t.Fatalf("%d op kernels for %d ops", len(opKernels), len(opsall.Cases))
	}
	for i, o := range opsall.Cases {
		if got := opKernels[i].Name(); got != o.Name() {
			t.Errorf("opKernels[%d] is %s, ops/all.Cases[%d] %s", i, got, i, o.Name())
		}
		k, ok := kernelOf(o.Name())
		if !ok || k.Name() != o.Name() {
			t.Errorf("kernelOf(%s) = %v, %v", o.Name(), k, ok)
		}
		if _, nudged := nudgerOf(o.Name()); nudged != o.LazyBoundary() {
			t.Errorf("%s: the device nudges its boundary rows: %v; its package's LazyBoundary: %v", o.Name(), nudged, o.LazyBoundary())
		}
	}
	if _, ok := kernelOf("moe_route"); ok {
		t.Error("kernelOf(moe_route): a kernel for an op that is not a case op")
	}
}
