package inputs

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func powerCase(op spec.Op, cols, rows int, out spec.DType, dist spec.Dist, seed uint64) spec.Case {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: spec.RelBatchInvariance,
		In: spec.BF16, Out: out, Dist: dist, Seed: seed, Eps: 1e-6}
	switch op {
	case spec.OpRMSNorm:
		c.Shape.Hidden = cols
	case spec.OpGEMM:
		c.Shape.Hidden, c.Shape.N = cols, 48
	case spec.OpAttnDecode: // cols: the KV length
		c.Shape.KV, c.Shape.Heads, c.Shape.KVHeads, c.Shape.HeadDim = cols, 4, 2, 16
	case spec.OpAttnPrefill: // rows sequences of cols/8 tokens (every position a row of each head)
		c.Shape.SeqLen, c.Shape.Heads, c.Shape.KVHeads, c.Shape.HeadDim = cols/8, 2, 1, 16
	default:
		c.Shape.Vocab = cols
		c.Out = spec.FP32
		c.Compare = out
	}
	c.SetBatchRows(rows)
	return c
}

// TestSensitivePower: one sensitive draw shows more of the family per row
// than one boundary draw (rmsnorm, gemm, logprob; bf16), and a sensitive
// row's bits never depend on the batch it sits in.
func TestSensitivePower(t *testing.T) {
	for _, op := range SensitiveOps {
		mean := map[spec.Dist]float64{}
		for _, d := range []spec.Dist{spec.DistBoundary, spec.DistSensitive} {
			c := powerCase(op, 256, 16, spec.BF16, d, 5)
			b, f := batchAndFamily(t, c)
			sets, err := RowPower(c, b, f)
			if err != nil {
				t.Fatal(err)
			}
			cov := power.NewCoverage(f, len(sets))
			if err := cov.AddDraw(sets); err != nil {
				t.Fatal(err)
			}
			mean[d] = cov.Summary(0.99).Mean
		}
		t.Logf("%s: one draw's mean power: boundary %.3f, sensitive %.3f", op, mean[spec.DistBoundary], mean[spec.DistSensitive])
		if mean[spec.DistSensitive] <= mean[spec.DistBoundary] {
			t.Errorf("%s: sensitive mean power %.3f, boundary %.3f", op, mean[spec.DistSensitive], mean[spec.DistBoundary])
		}
		small, err := Of(powerCase(op, 256, 8, spec.BF16, spec.DistSensitive, 5))
		if err != nil {
			t.Fatal(err)
		}
		large, err := Of(powerCase(op, 256, 16, spec.BF16, spec.DistSensitive, 5))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := rowValues(small), rowValues(large); !slices.Equal(a, b[:len(a)]) {
			t.Errorf("%s: sensitive rows of a batch of 8 differ from the first 8 of 16", op)
		}
	}
}

// TestSensitiveChain: a targeted draw (Draw 3) of a batch has, at every
// row key, the rows and sets that RowShows makes for a few keys alone
// with nothing kept from before (the chain made again for those keys).
func TestSensitiveChain(t *testing.T) {
	for _, op := range SensitiveOps {
		c := powerCase(op, 256, 12, spec.BF16, spec.DistSensitive, 11)
		c.Draw = 3
		b, sets, err := sensitiveDraw(c)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Of(c); err != nil || !sameBatch(b, again) {
			t.Fatalf("%s: a targeted draw made twice differs (%v)", op, err)
		}
		sensitiveChain.forget()
		madeRows.forget() // the chain made again from nothing
		keys := []int{7, 2, 11}
		got, err := RowShows(c, keys)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range keys {
			if !slices.Equal(got[j], sets[i]) {
				t.Errorf("%s: row key %d shows %v alone, %v in the batch", op, i, got[j], sets[i])
			}
		}
	}
}

func sameBatch(a, b *target.Batch) bool { return slices.Equal(rowValues(a), rowValues(b)) }

// rowValues is the per-item tensor of an rmsnorm, gemm or logprob batch,
// an attn_decode batch's q, K and V of each request in turn.
func rowValues(b *target.Batch) []float32 {
	switch in := b.Input.(type) {
	case *oracle.PrefillInput: // each sequence's q, K and V in turn
		q, kv := in.SeqLen*in.Heads*in.HeadDim, in.SeqLen*in.KVHeads*in.HeadDim
		var v []float32
		for s := range in.Seqs {
			v = append(append(append(v, in.Q[s*q:(s+1)*q]...), in.K[s*kv:(s+1)*kv]...), in.V[s*kv:(s+1)*kv]...)
		}
		return v
	case *oracle.DecodeInput:
		w := in.Heads * in.HeadDim
		var v []float32
		for i := range in.K {
			v = append(append(append(v, in.Q[i*w:(i+1)*w]...), in.K[i]...), in.V[i]...)
		}
		return v
	case *oracle.RMSNormInput:
		return in.X
	case *oracle.GEMMInput:
		return in.X
	}
	return b.Input.(*oracle.LogProbInput).Logits
}

// BenchmarkSensitiveDraw makes sensitive rmsnorm draws of 16 rows at
// llama3-8b's width (hidden 4096, bf16): the first draw of a chain, and
// draw 2 targeted (its chain's draw 1 in memory, as in a scan), and draw 2
// read from the cache (BITPARITY_SENSITIVE_CACHE, a scan's second time).
// ns/row is one row's cost on all cores (eachRow); a scan's host share is
// about rows x draws x ns/row.
func BenchmarkSensitiveDraw(b *testing.B) {
	const rows = 16
	defer func(n int) { cacheMinValues = n }(cacheMinValues)
	for _, tc := range []struct {
		op   spec.Op
		draw int
		kept bool
	}{{spec.OpRMSNorm, 1, false}, {spec.OpRMSNorm, 2, false}, {spec.OpRMSNorm, 2, true}, {spec.OpGEMM, 1, false}, {spec.OpGEMM, 2, false}} {
		name := fmt.Sprintf("%s/hidden4096/draw%d", tc.op, tc.draw)
		if tc.kept {
			name += "/kept"
		}
		b.Run(name, func(b *testing.B) {
			b.Setenv(sensitiveCacheEnv, "off")
			cacheMinValues = 1 << 22
			if tc.kept {
				b.Setenv(sensitiveCacheEnv, b.TempDir())
				cacheMinValues = 0
			}
			c := powerCase(tc.op, 4096, rows, spec.BF16, spec.DistSensitive, 21)
			c.Draw = tc.draw
			if _, err := Of(c); err != nil { // the chain's earlier draws, kept
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				madeRows.forget() // every row searched (or read from the cache) again
				if _, err := Of(c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}

// TestSensitiveCache: a large sensitive draw is kept under the cache
// folder and read back with the same bits and sets; a kept file whose
// checksum fails, or whose choices are not the draw's (a stale algorithm),
// is made again, with the same bits, and rewritten.
func TestSensitiveCache(t *testing.T) {
	t.Setenv(sensitiveCacheEnv, t.TempDir())
	defer func(n int) { cacheMinValues = n }(cacheMinValues)
	cacheMinValues = 0
	c := powerCase(spec.OpRMSNorm, 128, 12, spec.BF16, spec.DistSensitive, 31)
	c.Draw = 2
	made, sets, err := sensitiveDraw(c)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newSensitiveGen(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	path, ok := g.cachePath()
	if !ok {
		t.Fatal("no cache path")
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stale := slices.Clone(good)
	for j := range 12 { // every row's knob step moved by one, checksum made right
		at := len(cacheMagic) + 8 + j*(2+8*len(sets[0]))
		stale[at+1] = (stale[at+1] + 1) % uint8(len(knobVariants))
	}
	sum := sha256.Sum256(stale[:len(stale)-sha256.Size])
	copy(stale[len(stale)-sha256.Size:], sum[:])
	corrupt := slices.Clone(good)
	corrupt[len(cacheMagic)+9] ^= 1
	for _, tc := range []struct {
		name string
		file []byte
		read bool
	}{{"kept", good, true}, {"stale", stale, false}, {"corrupt", corrupt, false}} {
		if err := os.WriteFile(path, tc.file, 0o644); err != nil {
			t.Fatal(err)
		}
		before := cacheLoads.Load()
		b, s, err := sensitiveDraw(c)
		if err != nil {
			t.Fatal(err)
		}
		if read := cacheLoads.Load() > before; read != tc.read {
			t.Errorf("%s: read %v, want %v", tc.name, read, tc.read)
		}
		if !sameBatch(b, made) || !slices.EqualFunc(s, sets, func(a, b power.Set) bool { return slices.Equal(a, b) }) {
			t.Errorf("%s: the draw differs from the one made", tc.name)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, good) {
			t.Errorf("%s: the kept file is not the draw's after the read", tc.name)
		}
	}
}

// TestSensitiveShortRow: a sensitive case whose rows are too short to
// tune (a hand-written case, a scan at hidden 2) is an error naming the
// row, never a panic.
func TestSensitiveShortRow(t *testing.T) {
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpLogProb} {
		for cols := 1; cols < gen.SensitiveMinCols; cols++ {
			c := powerCase(op, cols, 2, spec.BF16, spec.DistSensitive, 1)
			if _, err := Of(c); err == nil || !strings.Contains(err.Error(), "to tune") {
				t.Errorf("%s at %d values: err %v, want the row too short to tune", op, cols, err)
			}
		}
	}
}
