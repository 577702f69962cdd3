package scan

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// hasFamily reports whether scan s measures power: its op has a family
// (inputs.SensitiveOps) and its values are batches whose positions are
// items (dims items, pad and position); an attention scan over KV
// lengths, neighbours, chunks, pages or prefixes varies something else
// than the items a family's coverage counts.
func hasFamily(s spec.ScanSpec) bool {
	switch s.Dim {
	case spec.ScanItems, spec.ScanPad, spec.ScanPosition:
		return slices.Contains(inputs.SensitiveOps, s.Op)
	}
	return false
}

// MaxDefaultAttnWork bounds the attention scans that take the sensitive
// draw and the power loop by default: the op's draw work
// (ops.CaseOp.SensitiveWork) at most this, attn_decode's heads x kv x
// head_dim of a request, attn_prefill's heads x head_dim x
// seq_len·(seq_len+1)/2 of a sequence (its rows' KV lengths summed). The
// decode draw costs about 4 x heads x (family + 1) single-row decodes a
// request on the host, the prefill draw about 30 + 9 x family passes over
// its KV range a row (docs/detection.md): at this cap about half a second
// a request or sequence on 2 shared cores, minutes at llama3-8b's 32 heads
// x 128 x a few thousand tokens; there a scan measures power only when
// asked (--power, --dists sensitive). At the test profile's 6 heads of 16
// a prefill takes it by default up to seq_len 51.
const MaxDefaultAttnWork = 1 << 17

// cheapSensitive reports whether scan s's sensitive draw is cheap enough
// to be its default: always, except where the op's draw work
// (ops.CaseOp.SensitiveWork) is above MaxDefaultAttnWork.
func cheapSensitive(s spec.ScanSpec) bool {
	k, ok := all.Case(s.Op)
	return !ok || k.SensitiveWork(s.Shape) <= MaxDefaultAttnWork
}

// addPower adds draw k's rows to the scan's power (package power): the
// alternatives of the family each position's row shows, from the draw's
// largest batch when its rows are on the host, else from the draw's
// inputs made again on the host.
func (sc *scanner) addPower(k int) error {
	if sc.cov == nil {
		return nil
	}
	c := sc.caseFor(k)
	b := sc.batch
	sc.batch = nil
	if !rowsOnHost(b) {
		var err error
		if b, err = inputs.Of(c); err != nil {
			return fmt.Errorf("scan: draw %s, power: %w", sc.draws[k], err)
		}
	}
	sets, err := inputs.RowPower(c, b, sc.cov.Family)
	if err != nil {
		return fmt.Errorf("scan: draw %s, power: %w", sc.draws[k], err)
	}
	if err := sc.cov.AddDraw(sets[:sc.refItems()]); err != nil {
		return fmt.Errorf("scan: draw %s: %w", sc.draws[k], err)
	}
	return nil
}

// rowsOnHost reports whether batch b holds its rows on the host (rmsnorm,
// gemm, logprob, attn_decode or attn_prefill; a lazy or device batch does
// not).
func rowsOnHost(b *target.Batch) bool {
	if b == nil {
		return false
	}
	switch in := b.Input.(type) {
	case *oracle.RMSNormInput:
		return in != nil && in.X != nil
	case *oracle.GEMMInput:
		return in != nil && in.X != nil
	case *oracle.LogProbInput:
		return in != nil && in.Logits != nil
	case *oracle.DecodeInput:
		return in != nil && in.Q != nil
	case *oracle.PrefillInput:
		return in != nil && in.Q != nil
	}
	return false
}

// morePower reports whether the power loop adds a draw: the scan asks for
// power, some position shows less than the target share of the family,
// fewer than MaxDraws draws ran, and no row differed yet (a drift needs
// no more draws to be shown).
func (sc *scanner) morePower() bool {
	if sc.cov == nil || sc.res.Differing > 0 || len(sc.draws) >= sc.s.MaxDraws {
		return false
	}
	return !sc.cov.Summary(sc.s.Power).Met
}

// powerWords is p in one line: "every position 1..400 shows >= 99.1% of
// 217 reduction orders in at least one of 6 draws (mean 99.8%, 388
// positions all of them)".
func powerWords(p *spec.Power) string {
	s := fmt.Sprintf("every position 1..%d shows >= %.1f%% of %d reduction orders (at row length %d) in at least one of %d draws (mean %.1f%%, %d positions all of them",
		p.Positions, 100*p.Min, p.Family, p.Cols, p.Draws, 100*p.Mean, p.Full)
	if p.Never > 0 {
		s += fmt.Sprintf("; %d orders no position shows", p.Never)
	}
	s += ")"
	if !p.Met {
		s += fmt.Sprintf("; below the target %.1f%%", 100*p.Target)
	}
	return s
}

// PowerWords is p in one line (nil: "not measured").
func PowerWords(p *spec.Power) string {
	if p == nil {
		return "not measured"
	}
	return powerWords(p)
}
