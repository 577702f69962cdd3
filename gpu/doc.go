// Package gpu runs bitparity's own CUDA kernels on an NVIDIA GPU through
// gorgonia.org/cu: every op of the oracle (RMSNorm, GEMM, token log-prob,
// attention prefill and decode), parameterised by the oracle's schedules
// and built only from correctly rounded operations, so that a kernel
// running schedule S is bitwise equal to oracle(S); the drift models of
// package fuzz as GPU targets (the same policies choosing the schedule by
// the batch); and a device-side row compare that returns, per differing row,
// the mismatch count, the first mismatching column and the largest ulp
// distance, so only those summaries cross to the host; and input generator
// version 2 on the device (Generate, kernels/gen.cu), bit for bit the
// values inputs.Of makes on the host.
//
// The kernels are CUDA C++ in kernels/*.cu, compiled to PTX for compute_80
// by scripts/ptx.sh (make ptx) and embedded; kernels/kernels.sha256 records
// the hash of every source and PTX file, and a plain `go test ./gpu/` checks
// that the embedded PTX was made from the sources in the tree and that it
// holds no .approx and no .ftz instruction.
//
// Every file that imports gorgonia.org/cu is built only with the cuda build
// tag. Without it the package still builds: Available reports ErrNoCUDA and
// no GPU target is registered. With it, importing the package registers
// the targets cuda-<op> (the exact kernels, Info.Schedule set) and
// cuda-drift-<model> (the drift models) with target.Register; their factories
// fail with a clear error where no GPU or driver is found.
package gpu
