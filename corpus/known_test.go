package corpus

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/mapper"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var update = flag.Bool("update", false, "regenerate corpus/known/ from fuzz.Check (go test ./corpus -run TestKnown -update)")

// knownDir holds the shipped cases that every `go test` replays.
const knownDir = "known"

// known is one shipped case: what it shows and whether fuzz.Check must find
// something (a drift model, a misuse) or nothing (an invariant target).
type known struct {
	note    string
	c       spec.Case
	finding bool
}

func knownCase(op spec.Op, rel string, shape spec.Shape, p spec.RelParams, targets ...string) spec.Case {
	return spec.Case{Version: spec.CaseVersion, Op: op, Relation: rel, Targets: targets, Shape: shape,
		In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, GenVersion: 1, Rel: p} // generator version 1: the shipped files replay it
}

// knownCases are the patterns the shipped corpus pins (docs/architecture.md, facts behind the drift models: the seed
// bug and the anchors' thresholds). Each drift case has a twin on an
// invariant target, or on the safe side of the threshold, that must pass.
func knownCases() []known {
	rms := spec.Shape{Rows: 928, Hidden: 4096}
	prefill := func(seqLen int) spec.Shape {
		return spec.Shape{Seqs: 2, SeqLen: seqLen, Heads: 8, KVHeads: 2, HeadDim: 128}
	}
	decode := spec.Shape{Rows: 8, KV: 512, Heads: 4, KVHeads: 2, HeadDim: 64}
	logprob := spec.Shape{Rows: 8, Vocab: 4096}
	trainVsInfer := knownCase(spec.OpLogProb, spec.RelLogProbParity, logprob, spec.RelParams{}, "drift-logprob-train-bf16", target.OracleName(spec.OpLogProb))
	trainVsInfer.Compare = spec.FP32
	trainVsInferBF16 := trainVsInfer
	trainVsInferBF16.Compare = spec.BF16
	return []known{
		{"TransformerEngine-like RMSNorm (path by rows % 32): 928 rows vs the same rows in a batch of 2274",
			knownCase(spec.OpRMSNorm, spec.RelPadding, rms, spec.RelParams{Pad: 2274, Filler: "normal"}, "drift-rmsnorm-te-mod32"), true},
		{"the oracle RMSNorm keeps its bits from 928 to 2274 rows",
			knownCase(spec.OpRMSNorm, spec.RelPadding, rms, spec.RelParams{Pad: 2274, Filler: "normal"}, target.OracleName(spec.OpRMSNorm)), false},
		{"decode batch padded to the CUDA-graph size 4548 with zero rows: the rows % 32 path changes",
			knownCase(spec.OpRMSNorm, spec.RelPadding, rms, spec.RelParams{Pad: 4548, Filler: "zeros"}, "drift-rmsnorm-te-mod32"), true},
		{"FlashAttention tile 48 vs 64: differs from 49 KV tokens",
			knownCase(spec.OpAttnPrefill, spec.RelPathParity, prefill(49), spec.RelParams{}, target.OracleName(spec.OpAttnPrefill), "drift-attn-tile48"), true},
		{"FlashAttention tile 48 vs 64: identical up to 48 KV tokens",
			knownCase(spec.OpAttnPrefill, spec.RelPathParity, prefill(48), spec.RelParams{}, target.OracleName(spec.OpAttnPrefill), "drift-attn-tile48"), false},
		{"cuBLAS-like split-K chosen by M: M = 64 (split 4) vs the same rows at M = 65 (no split)",
			knownCase(spec.OpGEMM, spec.RelBatchInvariance, spec.Shape{Rows: 64, Hidden: 1024, N: 256}, spec.RelParams{Batch: 65}, "drift-gemm-splitk-by-m"), true},
		{"FlashDecoding num_splits by batch size: 8 requests x 4 heads (4 splits) vs 40 x 4 >= 132 SMs (1 split)",
			knownCase(spec.OpAttnDecode, spec.RelBatchInvariance, decode, spec.RelParams{Batch: 40}, "drift-decode-splits-by-batch"), true},
		{"the oracle decode keeps its bits from 8 to 40 requests",
			knownCase(spec.OpAttnDecode, spec.RelBatchInvariance, decode, spec.RelParams{Batch: 40}, target.OracleName(spec.OpAttnDecode)), false},
		{"vLLM RMSNorm block size switch at 256 tokens: 255 vs 256 rows",
			knownCase(spec.OpRMSNorm, spec.RelBatchInvariance, spec.Shape{Rows: 255, Hidden: 4096}, spec.RelParams{Batch: 256}, "drift-rmsnorm-vllm-256"), true},
		{"log-probs of a bf16 training path compared in fp32: a misuse",
			trainVsInfer, true},
		{"the same log-probs compared in bf16, the training dtype: equal",
			trainVsInferBF16, false},
		{"zero-filled prompt positions the engine never reported, compared: a misuse",
			knownCase(spec.OpLogProb, spec.RelLogProbParity, logprob, spec.RelParams{}, target.OracleName(spec.OpLogProb), "drift-logprob-zerofill"), true},
		{"only the reported positions declared in rel.mask: equal",
			knownCase(spec.OpLogProb, spec.RelLogProbParity, logprob, spec.RelParams{Mask: []int{4, 5, 6, 7}}, target.OracleName(spec.OpLogProb), "drift-logprob-zerofill"), false},
	}
}

// TestKnownGenerate rewrites corpus/known/ from real findings: it runs each
// known case through fuzz.Check and stores the case with the finding it
// got (or none). It runs only with -update.
func TestKnownGenerate(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate corpus/known/")
	}
	old, _ := filepath.Glob(filepath.Join(knownDir, "*.json"))
	for _, p := range old {
		os.Remove(p)
	}
	d, err := OpenDir(knownDir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range knownCases() {
		fd, err := fuzz.Check(context.Background(), k.c)
		if err != nil {
			t.Fatalf("%s: %v", k.note, err)
		}
		if (fd != nil) != k.finding {
			t.Fatalf("%s: finding %v, want finding=%v", k.note, fd, k.finding)
		}
		env := spec.HostEnv()
		if fd != nil {
			env = fd.Env
			if fd.DriftMap, err = mapper.Map(context.Background(), fd); err != nil {
				t.Fatalf("%s: drift map: %v", k.note, err)
			}
			fd.Signature = spec.Signature(*fd)
		}
		f := NewFile(k.c, fd, env, "known")
		f.Note = k.note
		name, _, err := d.Put(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", name, k.note)
	}
}

// TestKnownReplay replays every case file shipped in corpus/known/: a
// drift or misuse case must show its finding again, of the same kind and
// signature, and its drift map swept again (mapper.Map; skipped with -short)
// must give the recorded rule; an invariant case must still pass. A first difference at another row, column or bits than
// recorded is logged: it moves when the oracle's or a drift model's values
// change, which their own golden tests pin. Every case of
// knownCases must be shipped.
func TestKnownReplay(t *testing.T) {
	if *update {
		t.Skip("regenerating")
	}
	d, err := OpenDir(knownDir, false)
	if err != nil {
		t.Fatal(err)
	}
	entries, errs := Load(d)
	for _, err := range errs {
		t.Errorf("shipped case file unreadable: %v", err)
	}
	shipped := map[string]bool{}
	for _, e := range entries {
		shipped[e.Name] = true
	}
	have := map[string]bool{}
	for _, n := range target.Names() {
		have[n] = true
	}
	for _, k := range knownCases() {
		for _, tn := range k.c.Targets {
			if !have[tn] {
				t.Errorf("known case %q names target %s, which target.Names() does not list", k.note, tn)
			}
		}
		f := NewFile(k.c, nil, spec.Env{}, "")
		if name, _ := f.Name(); !shipped[name] {
			t.Errorf("known case %q is not shipped as %s (go test ./corpus -run TestKnown -update)", k.note, name)
		}
	}
	// one sweep per signature (the signature holds the rule): the file
	// with the smallest case re-sweeps, the others share its rule
	sweeper := map[string]Entry{}
	for _, e := range entries {
		if e.File.Finding == nil || e.File.Finding.DriftMap == nil {
			continue
		}
		if cur, ok := sweeper[e.File.Signature]; !ok || e.File.Case.Elements() < cur.File.Case.Elements() {
			sweeper[e.File.Signature] = e
		}
	}
	for _, e := range entries {
		e := e
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			o, err := Replay(context.Background(), e.File)
			if err != nil {
				t.Fatalf("%s: %v", e.File.Note, err)
			}
			switch e.File.Expect() {
			case ExpectFinding:
				if o.Verdict != Reproduced {
					t.Fatalf("%s: %v (found %+v), want the recorded %s finding", e.File.Note, o.Verdict, o.Finding, e.File.Finding.Kind)
				}
				if !o.SameSpot {
					// the bug is the same (kind and signature); where it
					// shows first moves when the oracle or the drift
					// model's values change (regenerate with -update)
					t.Logf("%s: first difference now at row %d col %d %s/%s, recorded row %d col %d %s/%s", e.File.Note,
						o.Finding.Row, o.Finding.Col, o.Finding.A.Hex, o.Finding.B.Hex,
						e.File.Finding.Row, e.File.Finding.Col, e.File.Finding.A.Hex, e.File.Finding.B.Hex)
				}
				if rec := e.File.Finding.DriftMap; rec != nil && !testing.Short() && sweeper[e.File.Signature].Name == e.Name {
					dm, err := mapper.Map(context.Background(), o.Finding)
					if err != nil {
						t.Fatalf("%s: drift map: %v", e.File.Note, err)
					}
					if dm == nil || dm.Rule != rec.Rule {
						t.Errorf("%s: drift map now %+v, recorded rule %q", e.File.Note, dm, rec.Rule)
					}
				}
			case ExpectPass:
				if o.Verdict != Passed {
					t.Errorf("%s: %v: %s", e.File.Note, o.Verdict, o.Finding.Message)
				}
			}
		})
	}
}
