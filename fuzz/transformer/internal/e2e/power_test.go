package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLogProbDetectionPower measures how often log-prob parity (bf16, the
// user-facing relation) sees a drift model planted at layer 0 of a medium
// model (hidden 128, 4 layers, 8 heads over 2 kv heads of 16, ffn 256,
// vocab 512, 8 requests of up to 64 tokens), and checks that whenever it
// does, the finding names the planted site. It takes minutes, so it runs
// only with BITPARITY_LONG=1.
func TestLogProbDetectionPower(t *testing.T) {
	if os.Getenv("BITPARITY_LONG") == "" {
		t.Skip("set BITPARITY_LONG=1 to measure (minutes)")
	}
	ctx := context.Background()
	const n = 8
	for _, name := range []string{"gemm_splitk_by_m", "rmsnorm_rows_mod32", "decode_splits_by_batch"} {
		m, err := LookupDriftModel(name)
		if err != nil {
			t.Fatal(err)
		}
		site := PlantSites(m.Kind, 1)[0]
		if m.Kind == KindGEMM {
			site = Site{0, OpMLPUp}
		}
		found, positions := 0, 0
		start := time.Now()
		for i := range n {
			seed := uint64(60000 + i)
			c := (Gen{}).Case(seed)
			s := &c.Shape
			s.Hidden, s.Rows, s.Vocab, s.Seqs, s.SeqLen, s.N = 128, 4, 512, 8, 64, 256
			s.Heads, s.KVHeads, s.HeadDim = 8, 2, 16
			c.Rel.Mask = ReportedMask(Plan(seed, s.Seqs, s.SeqLen, s.Vocab))
			if c, err = Plant(c, name, site); err != nil {
				t.Fatal(err)
			}
			f, err := Check(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				continue
			}
			if !strings.Contains(f.Message, "first divergence: "+site.String()+" ") {
				t.Fatalf("seed %d: planted at %s: %s", seed, site, f.Message)
			}
			found++
			positions += f.RowsDiffering
		}
		t.Logf("%s at %s: log-prob parity found it in %d of %d cases (%d differing positions), %v",
			name, site, found, n, positions, time.Since(start).Round(time.Second))
	}
}
