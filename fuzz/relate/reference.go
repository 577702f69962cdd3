package relate

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// referenceStride is the sampling rate of the CPU oracle behind a device
// reference: of a batch of n items, the CPU oracle recomputes items
// i ≡ seed (mod referenceStride), the watched item and the last item (3
// to 5 of 2274 rows, about 1 in 500, and every row of a batch of up to 3).
const referenceStride = 1024

// DeviceReference returns the reference oracle parity compares target t
// with on its device (target.Referencer with t's declared schedule), or
// nil when t has none: then the CPU oracle computes every row.
func DeviceReference(t target.Target) target.Target {
	r, ok := t.(target.Referencer)
	info := t.Info()
	if !ok || info.Schedule == "" {
		return nil
	}
	s, err := target.ParseSchedule(info.Op, info.Schedule)
	if err != nil {
		return nil
	}
	ref, ok := r.Reference(s)
	if !ok {
		return nil
	}
	return ref
}

// referenceSample returns the items of a batch of n that the CPU oracle
// recomputes behind a device reference (referenceStride), ascending.
func referenceSample(n, watched int, seed uint64) []int {
	take := make(map[int]bool)
	for i := int(seed % referenceStride); i < n; i += referenceStride {
		take[i] = true
	}
	if watched >= 0 && watched < n {
		take[watched] = true
	}
	take[n-1] = true
	ids := make([]int, 0, len(take))
	for i := 0; i < n; i++ {
		if take[i] {
			ids = append(ids, i)
		}
	}
	return ids
}

// checkReference compares device reference run g (every item of b) with
// the CPU oracle cpu on referenceSample's items, and returns a finding of
// kind reference when they differ.
func checkReference(ctx context.Context, c spec.Case, b *target.Batch, g *run, cpu target.Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	ids := referenceSample(b.Items(), c.Rel.Row, c.Seed)
	s, uids, err := inputs.Items(c, b, ids)
	if err != nil {
		return nil, fmt.Errorf("reference sample: %w", err)
	}
	o, err := execute(ctx, cpu, s, uids, fmt.Sprintf("the CPU oracle on %d sampled items", len(ids)))
	if err != nil {
		return nil, err
	}
	defer o.release()
	ra, rb := shared(o, g)
	f, err := differ(ctx, o, g, ra, rb, dt, 0)
	if f != nil {
		f.Kind = spec.KindReference
		f.Message = fmt.Sprintf("the device reference %s and the CPU oracle %s disagree on a sampled row: bitparity or the device is wrong; no verdict on %s stands",
			g.target.Info().Name, cpu.Info().Name, c.Targets[0])
	}
	return f, err
}
