package gpu

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/bitparity/bitparity/target"
)

// PrefixCheck is one bulk check of a held batch's prefixes.
type PrefixCheck struct {
	// Items are the prefixes checked, ascending: the batches of held
	// items 0..v-1 for v in Items.
	Items []int
	// Alone are the rows alone (Alone's output, at least the last
	// prefix's rows); Ref, when not nil, the reference batch (Run of held
	// items 0..n-1, n at least the last prefix), on the batch's device.
	Alone, Ref *target.Output
	// Taps compares the fp32 taps too.
	Taps bool
	// Panel is the number of first rows whose digests a flagged prefix
	// returns.
	Panel int
}

// PrefixStep is a prefix the bulk check flagged: the batch of held items
// 0..Items-1, of which a row digests (values, or taps when compared) to
// other than the same row alone.
type PrefixStep struct {
	Items int
	// Alone are the rows that differ from the same row alone, Ref those
	// that differ from the same row of the reference batch (none without
	// one), ascending.
	Alone, Ref []int
	// Panel are the digests (external.RowDigest) of rows
	// 0..min(rows, PrefixCheck.Panel)-1, PanelTaps of their taps (nil
	// when the batch has none).
	Panel, PanelTaps []uint64
	// Sum digests every row of the output, and its taps when compared:
	// two runs of the batch that answer alike have the same Sum.
	Sum uint64
}

// countUnset is what the host writes where compare_rows and check_steps
// store their count before the launch: a count the kernel cannot give (it
// is at most the number of pairs or rows), so a kernel that did not finish
// is not read as "no rows differ".
const countUnset = ^uint32(0)

// stepRecordSize is the bytes of one step's record (kernels/steps.cuh):
// a count and a sum, the panel digests of values and taps (panel rows),
// the two row bitmaps (words uint32 each).
func stepRecordSize(panel, words int) int { return 16 + 16*panel + 8*words }

// readStepRecord reads rec, the record (kernels/steps.cuh) of the step of
// v items and rows rows of a check of panel panel rows and bitmaps of
// words words, whose output has taps when taps: nil when no row differs
// from its row alone.
func readStepRecord(rec []byte, v, rows, panel, words int, taps bool) (*PrefixStep, error) {
	n := binary.LittleEndian.Uint32(rec)
	switch {
	case n == countUnset:
		return nil, fmt.Errorf("check_steps completed without storing its record")
	case int(n) > rows:
		return nil, fmt.Errorf("check_steps counted %d differing rows of %d", n, rows)
	case n == 0:
		return nil, nil
	}
	st := &PrefixStep{Items: v, Sum: binary.LittleEndian.Uint64(rec[8:])}
	p := min(rows, panel)
	st.Panel = uint64s(rec[16:], p)
	if taps {
		st.PanelTaps = uint64s(rec[16+8*panel:], p)
	}
	bitmaps := rec[16+16*panel:]
	st.Alone = setBits(bitmaps, rows)
	st.Ref = setBits(bitmaps[4*words:], rows)
	if len(st.Alone) != int(n) {
		return nil, fmt.Errorf("check_steps counted %d differing rows and marked %d", n, len(st.Alone))
	}
	return st, nil
}

// uint64s reads n little-endian uint64 from b.
func uint64s(b []byte, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// setBits returns the rows r < rows whose bit is set in the bitmap b
// (little-endian uint32 words, bit r%32 of word r/32), ascending.
func setBits(b []byte, rows int) []int {
	var out []int
	for w := 0; 32*w < rows; w++ {
		x := binary.LittleEndian.Uint32(b[4*w:])
		for x != 0 {
			r := 32*w + bits.TrailingZeros32(x)
			if r < rows {
				out = append(out, r)
			}
			x &= x - 1
		}
	}
	return out
}
