package external

import (
	"context"
	"fmt"
	"strconv"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// CutsVersion is the version of the path-scan frames (docs/protocol.md,
// "Path scans: held sequences and KV cuts") this build speaks: an
// attention adapter that takes them says so in its hello with
// scan_cuts="1".
const CutsVersion = 1

// StepsCuts reports whether the adapter holds the sequences of a path
// scan and answers steps of KV cuts (its hello's scan_cuts, on an
// attn_prefill or attn_decode adapter that speaks the scan frames):
// HoldSequences and StepCuts work only then.
func (t *Target) StepsCuts() bool {
	k, ok := all.Case(t.op)
	return t.Scans() && t.hello["scan_cuts"] == strconv.Itoa(CutsVersion) && ok && k.Layouts()
}

// sequencesOf returns the prefill input of b, the sequences of a path scan
// the adapter is to hold (an attn_prefill batch); an error when the
// adapter takes no steps of KV cuts or b is not such a batch.
func (t *Target) sequencesOf(b *target.Batch) (*oracle.PrefillInput, error) {
	if !t.StepsCuts() {
		return nil, fmt.Errorf("target %s: the adapter takes no steps of KV cuts (no scan_cuts=%d in its hello)", t.info.Name, CutsVersion)
	}
	var p *oracle.PrefillInput
	if _, in, err := b.Kind(); err == nil {
		p, _ = in.(*oracle.PrefillInput)
	}
	if p == nil {
		return nil, fmt.Errorf("target %s: the sequences of a path scan are an %s batch, got %s", t.info.Name, attention.Prefill{}.Name(), b.Op)
	}
	return p, nil
}

// HoldSequences sends the sequences b (an attn_prefill batch: q, k, v of
// seqs x seq_len tokens) to the adapter to keep for a path scan (a hold
// frame with path="sequences", whatever the adapter's op): later StepCuts
// run on their first v tokens. It replaces an earlier held batch.
func (t *Target) HoldSequences(ctx context.Context, b *target.Batch) error {
	return t.hold(ctx, b, true)
}

// StepCuts runs the adapter at KV lengths cuts (1 <= v <= the held
// sequences' length) in one frame and returns one Step for each (no rows
// fetched): seqs x heads rows, sequence by sequence, head by head. At
// cut v an attn_prefill adapter answers the rows of the last position
// (v-1) of the prefill of the held sequences cut to their first v tokens;
// an attn_decode adapter those of the decode whose request s is the query
// of sequence s at position v-1 against the first v tokens of sequence s
// as its cache. These are the rows a path scan compares (ops/attention:
// Prefill.Path and its decode).
func (t *Target) StepCuts(ctx context.Context, cuts []int) ([]*Step, error) {
	h, err := t.holding(ctx, true)
	if err != nil || len(cuts) == 0 {
		return nil, err
	}
	out := make([]*Step, len(cuts))
	for k, v := range cuts {
		if v < 1 || v > h.seqLen {
			return nil, fmt.Errorf("target %s: KV cut %d outside the held sequences' 1..%d tokens", t.info.Name, v, h.seqLen)
		}
		out[k] = &Step{Rows: h.items * h.kr, Cols: h.cols}
	}
	never := func() *aloneRows { return nil }
	return t.stepsFrame(ctx, h, out, nil, never, tensor{name: "cuts", dtype: wireI64, shape: []int{len(cuts)}, data: encodeInt64s(nil, cuts)})
}
