package fuzz

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// attended counts the work of a prefill target: for each row it computes,
// the KV tokens that row attends to, at most the batch's sequence length.
type attended struct {
	target.Target
	tokens *atomic.Int64
}

func (a attended) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	n := len(rows)
	if rows == nil {
		n = b.Rows()
	}
	a.tokens.Add(int64(n) * int64(b.Input.(*oracle.PrefillInput).SeqLen))
	return a.Target.Run(ctx, b, rows)
}

// TestTile48MapWork: the tile-48 control as `make run` finds it (seed 1, a
// prefill of 91 tokens) shrinks to 49 tokens and maps exactly to the
// README's headline, kv <= 48 -> agree, kv >= 49 -> differ, within a
// budget of work, not of time: at most 4.5M attended KV tokens (rows
// computed times the tokens each attends) for the shrink and the map
// together. Comparing every one of kvClass's 256 rows at every length
// costs 10.3M for the map alone (kv 1..100, 3 draws, the first twice, two
// targets: 2·4·256·5050), which on two cores busy with a campaign's
// workers ran past the map's 30 s.
func TestTile48MapWork(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpAttnPrefill, Relation: spec.RelPathParity,
		Targets: []string{target.OracleName(spec.OpAttnPrefill), "drift-attn-tile48"},
		Shape:   spec.Shape{Seqs: 1, SeqLen: 91, Heads: 2, KVHeads: 2, HeadDim: 64},
		In:      spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 8534088944370758809}
	var tokens atomic.Int64
	var ts []target.Target
	for _, name := range c.Targets {
		tg, err := target.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, attended{tg, &tokens})
	}
	ctx := context.Background()
	f, err := Check(ctx, c, ts...)
	if err != nil || f == nil {
		t.Fatalf("the control's case: finding %v, error %v", f, err)
	}
	g, _, err := Minimize(ctx, f, MinimizeOptions{Targets: ts})
	if err != nil {
		t.Fatal(err)
	}
	m := g.DriftMap
	if m == nil || m.Dim != "kv" || m.Rule != "kv <= 48 -> agree, kv >= 49 -> differ" || m.From != 1 || m.To != 100 {
		t.Fatalf("drift map %+v (%s), want over kv 1..100: kv <= 48 -> agree, kv >= 49 -> differ", m, g.Message)
	}
	const budget = 4_500_000
	if n := tokens.Load(); n > budget {
		t.Errorf("shrink and map attended %d KV tokens, want at most %d", n, budget)
	} else {
		t.Logf("shrink and map attended %d KV tokens (budget %d)", n, budget)
	}
}
