package inputs

import (
	"fmt"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Check refuses case c as Of refuses it (dtypes, generator version, op,
// a dimension below 1, a count of values over the memory budget) without
// making any of its values, shared tensors included: the check before a
// scan whose target makes every tensor of the case on its device (a
// 4096 x 4096 W is 64 MiB and about 0.25 s of CPU on the host). A case
// with explicit data or of the sensitive distribution is checked by
// making it (Of): its rows are the host's.
func Check(c spec.Case) error {
	if c.Data != nil || c.Dist == spec.DistSensitive {
		_, err := Of(c)
		return err
	}
	in, out, err := caseDTypes(c)
	if err != nil {
		return err
	}
	if c.GenVersion < 0 || c.GenVersion > spec.GeneratorVersion {
		_, err := Of(c) // its error names the versions
		return err
	}
	k, ok := all.Case(c.Op)
	if !ok {
		return fmt.Errorf("unknown op %q", c.Op)
	}
	b := &target.Batch{Op: c.Op, In: in, Out: out}
	_, err = k.FromSeed(c, b.In, b.Out, seeded{c: c, dt: in, lazy: true, sizesOnly: true}, nil)
	return err
}
