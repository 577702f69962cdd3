//go:build cuda

package gpu

// #cgo LDFLAGS: -lcublas
// #include <cuda.h>
// #include <cublas_v2.h>
//
// // y[m][n] = x[m][k] · w[k][n], all row-major, is in cuBLAS's column-major
// // terms y' = w' · x' with y' n x m (ld n), w' n x k (ld n), x' k x m
// // (ld k): no transposes and no copies.
// static cublasStatus_t bp_sgemm(cublasHandle_t h, int m, int n, int k,
// 		unsigned long long x, unsigned long long w, unsigned long long y) {
// 	const float alpha = 1.0f, beta = 0.0f;
// 	return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
// 		(const float *)w, n, (const float *)x, k, &beta, (float *)y, n);
// }
//
// static cublasStatus_t bp_gemmex(cublasHandle_t h, int m, int n, int k,
// 		unsigned long long x, unsigned long long w, unsigned long long y, int ab, int c) {
// 	const float alpha = 1.0f, beta = 0.0f;
// 	return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
// 		(const void *)w, (cudaDataType)ab, n, (const void *)x, (cudaDataType)ab, k, &beta,
// 		(void *)y, (cudaDataType)c, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
// }
//
// static int bp_version(cublasHandle_t h) { int v = 0; cublasGetVersion(h, &v); return v; }
import "C"

import (
	"context"
	"fmt"
	"sync"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// cuBLAS target names.
const (
	CublasSgemm  = "cublas-sgemm"
	CublasGemmEx = "cublas-gemmex"
)

// CublasULPBound is the distance to the oracle (sequential fma over k, in
// ulps of the compared dtype) the cuBLAS targets are held to: cuBLAS does
// not document its reduction order, so oracle parity is a bound, not
// bitwise; a larger distance is reported as a finding with its case.
const CublasULPBound = 16

// blasHandle is one cuBLAS handle per device, created on the device's
// goroutine (its OS thread holds the CUDA context) and used there, and by
// warmShapes' threads before a held batch's first run.
type blasHandle struct {
	once    sync.Once
	h       C.cublasHandle_t
	version int
	err     error
}

var (
	blasMu      sync.Mutex
	blasHandles = map[*Device]*blasHandle{}
)

func (d *Device) blas() (*blasHandle, error) {
	blasMu.Lock()
	bh := blasHandles[d]
	if bh == nil {
		bh = &blasHandle{}
		blasHandles[d] = bh
	}
	blasMu.Unlock()
	bh.once.Do(func() {
		bh.err = d.do(func() error {
			if st := C.cublasCreate(&bh.h); st != C.CUBLAS_STATUS_SUCCESS {
				return fmt.Errorf("gpu: cublasCreate: status %d", int(st))
			}
			bh.version = int(C.bp_version(bh.h))
			return nil
		})
	})
	return bh, bh.err
}

// cublasTarget is a cuBLAS GEMM: y = x·w computed by cublasSgemm (inputs
// widened exactly to fp32, fp32 output) or by cublasGemmEx with A and B in
// the batch's input dtype (CUDA_R_16BF, CUDA_R_16F or CUDA_R_32F), fp32
// compute and accumulation (CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), and C
// in the output dtype where cuBLAS writes it (the input dtype or fp32);
// any other output is computed in fp32 and rounded to nearest even on the
// host, as the oracle rounds. The handle's math mode is cuBLAS's default.
type cublasTarget struct {
	info target.Info
	ex   bool
	d    *Device
}

func (t *cublasTarget) Info() target.Info { return t.info }

// cudaType is the cudaDataType of dt.
func cudaType(dt oracle.DType) C.int {
	switch dt {
	case oracle.BF16:
		return C.CUDA_R_16BF
	case oracle.FP16:
		return C.CUDA_R_16F
	}
	return C.CUDA_R_32F
}

// Run computes the whole batch with cuBLAS and returns the selected rows on
// the host. A cuBLAS or CUDA error after the call wraps
// target.ErrTargetCrashed.
func (t *cublasTarget) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, ok := b.Input.(*oracle.GEMMInput)
	if b.Op != (gemm.Op{}).Name() || !ok || g == nil {
		return nil, fmt.Errorf("target %s runs gemm, not %s", t.info.Name, b.Op)
	}
	if g.M < 0 || g.K < 1 || g.N < 1 || len(g.X) != g.M*g.K || len(g.W) != g.K*g.N {
		return nil, fmt.Errorf("target %s: m %d k %d n %d with %d x and %d w values: %w", t.info.Name, g.M, g.K, g.N, len(g.X), len(g.W), oracle.ErrShape)
	}
	sel, err := oracle.SelectRows(rows, g.M)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	out := &target.Output{Rows: sel, Cols: g.N, DType: g.Out, Values: make([]float32, len(sel)*g.N)}
	if g.M == 0 {
		return out, nil
	}
	bh, err := t.d.blas()
	if err != nil {
		return nil, err
	}
	in, cdt := t.dtypes(b.In, g.Out)
	xb, wb := encoded(in, g.X), encoded(in, g.W)
	err = t.d.do(func() error {
		d := t.d
		x, err := d.uploadBytes(xb)
		if err != nil {
			putHost(wb)
			return err
		}
		w, err := d.uploadBytes(wb)
		if err != nil {
			d.pool.put(x)
			return err
		}
		ybytes := g.M * g.N * dsize(cdt)
		y, err := d.pool.get(ybytes)
		if err != nil {
			d.pool.put(x, w)
			return err
		}
		defer d.pool.put(x, w, y)
		if err := t.gemmOn(bh, x, w, y, g.M, g.N, g.K, in, cdt); err != nil {
			return err
		}
		if err := cu.Synchronize(); err != nil {
			return fmt.Errorf("%w: cublas gemm m %d n %d k %d: %w", target.ErrTargetCrashed, g.M, g.N, g.K, err)
		}
		host := d.stage(ybytes)
		if err := d.fromDevice(host, y, 0); err != nil {
			return fmt.Errorf("%w: %w", target.ErrTargetCrashed, err)
		}
		row := g.N * dsize(cdt)
		for i, r := range sel {
			v := out.Values[i*g.N : (i+1)*g.N]
			decode(v, cdt, host[r*row:(r+1)*row])
			if cdt != g.Out {
				oracle.RoundSlice(g.Out, v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	return out, nil
}

// dtypes are the dtypes t's cuBLAS call reads (A and B) and writes (C)
// for a batch of input dtype in and output dtype out: fp32 and fp32 for
// cublasSgemm; for cublasGemmEx in, and out where cuBLAS writes it (out is
// in or fp32), else fp32 (the caller rounds to out).
func (t *cublasTarget) dtypes(in, out oracle.DType) (ab, c oracle.DType) {
	if !t.ex {
		return oracle.FP32, oracle.FP32
	}
	if out == in || out == oracle.FP32 {
		return in, out
	}
	return in, oracle.FP32
}

// gemmOn queues t's cuBLAS call y = x·w for x of m rows of k values (ab
// dtype, row-major, on the device), w k x n and y m x n (c dtype), on the
// handle's stream, the legacy default stream of lane 0 (t.d), without
// waiting (under do): the one launch of Run and of a held batch
// (GEMMHeld). A status other than success wraps target.ErrTargetCrashed.
func (t *cublasTarget) gemmOn(bh *blasHandle, x, w, y *buffer, m, n, k int, ab, c oracle.DType) error {
	var st C.cublasStatus_t
	if t.ex {
		st = C.bp_gemmex(bh.h, C.int(m), C.int(n), C.int(k), C.ulonglong(x.ptr), C.ulonglong(w.ptr), C.ulonglong(y.ptr), cudaType(ab), cudaType(c))
	} else {
		st = C.bp_sgemm(bh.h, C.int(m), C.int(n), C.int(k), C.ulonglong(x.ptr), C.ulonglong(w.ptr), C.ulonglong(y.ptr))
	}
	if st != C.CUBLAS_STATUS_SUCCESS {
		return fmt.Errorf("%w: cublas gemm m %d n %d k %d: status %d", target.ErrTargetCrashed, m, n, k, int(st))
	}
	return nil
}

func init() {
	for _, c := range []struct {
		name, models string
		ex           bool
	}{
		{CublasSgemm, "cuBLAS cublasSgemm (fp32 inputs, the batch's values widened exactly; output rounded to the case's dtype on the host), default math mode", false},
		{CublasGemmEx, "cuBLAS cublasGemmEx with A and B in the case's input dtype (bf16, fp16 or fp32), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, C in the output dtype", true},
	} {
		c := c
		target.Register(c.name, func() (target.Target, error) {
			d, err := Default()
			if err != nil {
				return nil, err
			}
			bh, err := d.blas()
			if err != nil {
				return nil, err
			}
			return &cublasTarget{ex: c.ex, d: d, info: target.Info{Name: c.name, Op: gemm.Op{}.Name(),
				Device: deviceName(d), Invariant: true, ULPBound: CublasULPBound,
				Models: fmt.Sprintf("%s; cuBLAS version %d", c.models, bh.version)}}, nil
		})
	}
}
