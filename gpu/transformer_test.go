//go:build cuda

package gpu

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/spec"
)

// The command registers the "cuda" transformer backend
// (cmd/bitparity/gpu_cuda.go); the tests here register it the same way.
func init() {
	transformer.RegisterBackend("cuda", func() (transformer.Ops, error) {
		d, err := Default()
		if err != nil {
			return nil, err
		}
		return TransformerOps{D: d}, nil
	})
}

// TestTransformerParity is the GPU half of the end-to-end check: over
// fuzzed models and request mixes (transformer.Gen; one case in four with
// KV lengths past 48), with fixed kernels,
//
//  1. both paths on the GPU agree bitwise under path parity (log-probs in
//     the training dtype and every op's fp32 output per token);
//  2. the train path on the CPU oracle and the inference path on the GPU
//     agree the same way (the trainer and the engine on different
//     devices);
//  3. each path's log-probs on the GPU have the bits of the same path on
//     the CPU (three-way).
func TestTransformerParity(t *testing.T) {
	device(t)
	ctx := context.Background()
	n := 120
	if testing.Short() {
		n = 24
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		seed := uint64(9000 + i)
		g := transformer.Gen{}
		if i%4 == 0 {
			g.MinSeqLen = 56
		}
		c := g.Case(seed)
		c.Relation = spec.RelPathParity
		for _, bk := range [][2]string{{"cuda", "cuda"}, {"cpu", "cuda"}} {
			f, err := fuzz.Check(ctx, transformer.WithBackends(c, bk[0], bk[1]), transformer.Source("", ""))
			if err != nil {
				t.Fatalf("seed %d train on %s, infer on %s: %v", seed, bk[0], bk[1], err)
			}
			if f != nil {
				t.Fatalf("seed %d train on %s, infer on %s (%+v): %s", seed, bk[0], bk[1], c.Shape, f.Message)
			}
		}
		ct, ci, err := transformer.Paths(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		gt, gi, err := transformer.Paths(ctx, transformer.WithBackends(c, "cuda", "cuda"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			path     string
			cpu, gpu []float32
		}{{"train", ct, gt}, {"infer", ci, gi}} {
			if len(p.cpu) != len(p.gpu) {
				t.Fatalf("seed %d %s: %d log-probs on the CPU, %d on the GPU", seed, p.path, len(p.cpu), len(p.gpu))
			}
			for j := range p.cpu {
				if math.Float32bits(p.cpu[j]) != math.Float32bits(p.gpu[j]) {
					t.Fatalf("seed %d %s position %d: CPU %08x, GPU %08x", seed, p.path, j,
						math.Float32bits(p.cpu[j]), math.Float32bits(p.gpu[j]))
				}
			}
		}
	}
	t.Logf("%d fuzzed transformer cases: GPU train == GPU infer, CPU train == GPU infer (path parity, taps included), GPU == CPU log-probs per path; %v",
		n, time.Since(start).Round(time.Millisecond))
}

// TestTransformerCampaign runs the transformer campaign with both paths on
// the GPU: invariant cases give no finding, every drift model planted at a
// random site of its kind is found and localised to that site and op, and
// both misuses are flagged.
func TestTransformerCampaign(t *testing.T) {
	device(t)
	d := 20 * time.Second
	if testing.Short() {
		d = 6 * time.Second
	}
	c := &fuzz.Campaign{Duration: d, Seed: 1, NoShrink: true, Workers: 1,
		Sources: []*fuzz.Source{transformer.Source("cuda", "cuda")}, Targets: []string{"transformer"}}
	s, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range s.Targets {
		if !j.Invariant && j.Findings == 0 {
			t.Errorf("control %s not found in %d cases", j.Target, j.Cases)
		}
	}
	if s.InvariantCases == 0 {
		t.Error("no invariant case ran")
	}
	for _, f := range s.Findings {
		if !f.Expected {
			t.Errorf("unexpected %s %s: %s", f.Relation, f.Kind, f.Message)
		}
		t.Logf("%s after %d cases, %v: %s", f.Kind, f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond),
			f.Message[:min(len(f.Message), 220)])
	}
	t.Logf("%d cases (%d invariant, all agreeing) in %v, both paths on the GPU", s.Cases, s.InvariantCases,
		time.Duration(s.Duration).Round(time.Millisecond))
}
