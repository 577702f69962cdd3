package oracle

import (
	"fmt"
	"testing"
	"time"
)

var sink float32

// BenchmarkFMA32 is one correctly rounded fma over varied inputs, each
// depending on the one before (latency). exact-ns/op is the same loop on
// the exact path alone (fma32Odd, FMA32 before its fast path), timed in the
// same run; speedup is exact-ns/op over ns/op.
func BenchmarkFMA32(b *testing.B) {
	r := newRNG(90)
	xs := randVals(r, FP32, 1024, 1)
	acc := float32(0)
	for i := 0; b.Loop(); i++ {
		acc = FMA32(xs[i&1023], xs[(i+1)&1023], acc)
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	t0 := time.Now()
	for i := range b.N {
		acc = fma32Odd(xs[i&1023], xs[(i+1)&1023], acc)
	}
	exact := float64(time.Since(t0).Nanoseconds()) / float64(b.N)
	sink = acc
	b.ReportMetric(exact, "exact-ns/op")
	b.ReportMetric(exact/ns, "speedup")
}

// BenchmarkRMSNorm reports rows/s at hidden 4096 (bf16 in and out), 256
// rows per call on all GOMAXPROCS.
func BenchmarkRMSNorm(b *testing.B) {
	const rows, hidden = 256, 4096
	in := rmsnormInput(newRNG(91), BF16, BF16, rows, hidden)
	for _, red := range []Reduction{Sequential, {Threads: 1024, Vec: 4, Warp: WarpButterfly, Cross: CrossTree}} {
		s := RMSNormSchedule{Reduce: red}
		b.Run(red.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := RMSNorm(in, s, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkGEMMRow reports GFLOP/s (2·K·N per row) of one output row at
// K = N = 4096.
func BenchmarkGEMMRow(b *testing.B) {
	const k, n = 4096, 4096
	in := gemmInput(newRNG(92), BF16, BF16, 1, k, n)
	for _, s := range []GEMMSchedule{{SplitK: 1, Combine: CrossSequential}, {SplitK: 8, Combine: CrossTree}} {
		b.Run(s.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := GEMM(in, s, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*k*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkDecodeRow is one decode row (one request, one head) against a
// KV cache of 4096 tokens, head dim 128.
func BenchmarkDecodeRow(b *testing.B) {
	const kv, d = 4096, 128
	in := decodeInput(newRNG(93), BF16, BF16, []int{kv}, 1, 1, d)
	for _, s := range []AttentionSchedule{{Tile: 64, Splits: 1}, {Tile: 64, Splits: 8}} {
		b.Run(fmt.Sprintf("tile=%d/splits=%d", s.Tile, s.Splits), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Decode(in, s, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkExpLog is one Exp32 and one Log32.
func BenchmarkExpLog(b *testing.B) {
	xs := randVals(newRNG(94), FP32, 1024, 4)
	b.Run("exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink = Exp32(xs[i&1023])
		}
	})
	b.Run("log", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink = Log32(xs[i&1023] + 5)
		}
	})
}
