package external

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestStepCuts: adapters of the kit holding a path scan's sequences answer
// a step of KV cuts (in any order) with the digests of the rows a batch
// sent whole gives: at cut v the prefill's rows of position v-1 of the
// sequences cut to v tokens, the decode's rows of the query at v-1 against
// the first v tokens; hold them again after a crash; and refuse a cut
// past the sequences and a step of items.
func TestStepCuts(t *testing.T) {
	for _, op := range []spec.Op{spec.OpAttnPrefill, spec.OpAttnDecode} {
		t.Run(string(op), func(t *testing.T) { checkStepCuts(t, numpyTarget(t, op)) })
	}
}

// TestTorchStepCuts is TestStepCuts for adapters/torch_ops.py on the CPU
// (torch's array functions: the sequences held as tensors, digested by
// torch), with BITPARITY_TEST_TORCH=1.
func TestTorchStepCuts(t *testing.T) {
	torchPython(t)
	for _, op := range []spec.Op{spec.OpAttnPrefill, spec.OpAttnDecode} {
		t.Run(string(op), func(t *testing.T) {
			tg, err := New(adapterCmd(t, "adapters/torch_ops.py", string(op), "--device", "cpu"), op, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tg.Close() })
			checkStepCuts(t, tg)
		})
	}
}

func checkStepCuts(t *testing.T, tg *Target) {
	t.Helper()
	ctx := context.Background()
	if !tg.StepsCuts() {
		t.Fatalf("hello %v: no scan_cuts=%d", tg.Hello(), CutsVersion)
	}
	c := testCase(spec.OpAttnPrefill, spec.BF16, spec.BF16, spec.DistNormal, 3)
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.HoldSequences(ctx, b); err != nil {
		t.Fatal(err)
	}
	cuts := []int{70, 1, 49, 65}
	sts, err := tg.StepCuts(ctx, cuts)
	if err != nil {
		t.Fatal(err)
	}
	p := prefillOf(t, b)
	for i, v := range cuts {
		want := cutRows(t, tg, b, v)
		st := sts[i]
		if st.Rows != p.Seqs*p.Heads || len(st.Digests) != st.Rows {
			t.Fatalf("cut %d: %d rows, %d digests, want %d", v, st.Rows, len(st.Digests), p.Seqs*p.Heads)
		}
		for r := range st.Rows {
			words := make([]uint32, want.Cols)
			for j := range words {
				words[j] = math.Float32bits(want.Values[r*want.Cols+j]) >> 16 // bf16: the widened value's high half
			}
			if got := RowDigest(words); got != st.Digests[r] {
				t.Fatalf("cut %d row %d: digest %016x, the batch sent whole gives %016x", v, r, st.Digests[r], got)
			}
		}
	}
	// A crash loses the held sequences: the step after it holds them again.
	tg.mu.Lock()
	killGroup(tg.proc.cmd)
	tg.mu.Unlock()
	if _, err := tg.StepCuts(ctx, cuts); err == nil {
		t.Fatal("a step of KV cuts answered from a killed adapter")
	}
	again, err := tg.StepCuts(ctx, cuts)
	if err != nil {
		t.Fatalf("the step after the crash: %v", err)
	}
	for i, v := range cuts {
		if !slices.Equal(again[i].Digests, sts[i].Digests) {
			t.Fatalf("cut %d after the restart: other digests", v)
		}
	}
	if _, err := tg.StepCuts(ctx, []int{71}); err == nil || !strings.Contains(err.Error(), "outside the held sequences' 1..70 tokens") {
		t.Errorf("cut 71 of 70 tokens: %v", err)
	}
	if _, err := tg.Step(ctx, []int{0}, false, nil); err == nil || !strings.Contains(err.Error(), "holds the sequences of a path scan") {
		t.Errorf("a step of items on held sequences: %v", err)
	}
}

// cutRows runs tg on the batch of a path scan at KV length v of sequences
// b, sent whole: the prefill's rows of position v-1, or the decode of the
// query at v-1 against the first v tokens.
func cutRows(t *testing.T, tg *Target, b *target.Batch, v int) *target.Output {
	t.Helper()
	p := prefillOf(t, b)
	qw, kw := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
	cut := *p
	cut.SeqLen, cut.Q, cut.K, cut.V = v, nil, nil, nil
	d := &oracle.DecodeInput{Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim, Out: p.Out}
	var rows []int
	for s := range p.Seqs {
		at := s * p.SeqLen
		cut.Q = append(cut.Q, p.Q[at*qw:(at+v)*qw]...)
		cut.K = append(cut.K, p.K[at*kw:(at+v)*kw]...)
		cut.V = append(cut.V, p.V[at*kw:(at+v)*kw]...)
		d.Q = append(d.Q, p.Q[(at+v-1)*qw:(at+v)*qw]...)
		d.K = append(d.K, p.K[at*kw:(at+v)*kw])
		d.V = append(d.V, p.V[at*kw:(at+v)*kw])
		for h := range p.Heads {
			rows = append(rows, (s*v+v-1)*p.Heads+h)
		}
	}
	var o *target.Output
	var err error
	if tg.Info().Op == spec.OpAttnPrefill {
		o, err = tg.Run(context.Background(), b.With(&cut), rows)
	} else {
		o, err = tg.Run(context.Background(), (&target.Batch{Op: spec.OpAttnDecode, In: b.In, Out: b.Out}).With(d), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// prefillOf is the prefill input of batch b.
func prefillOf(t *testing.T, b *target.Batch) *oracle.PrefillInput {
	t.Helper()
	_, in, err := b.Kind()
	if err != nil {
		t.Fatal(err)
	}
	return in.(*oracle.PrefillInput)
}
