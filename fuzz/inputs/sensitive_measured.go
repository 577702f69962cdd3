package inputs

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/target"
)

// measured keeps, for the last few whole sensitive batches of a token op
// made (sensitiveDraw), the alternatives the search found each row to
// show, with a digest of the batch's item rows: RowPower of such a batch,
// its rows unchanged, reads them instead of measuring every row again. A
// scan measures each draw's largest batch right after making it, so its
// sensitive draws are measured once, by their search (or read with them
// from the cache, sensitive_cache.go).
var measured struct {
	sync.Mutex
	draws []measuredDraw // newest last
}

// measuredKept is how many batches measured keeps.
const measuredKept = 4

type measuredDraw struct {
	b      weak.Pointer[target.Batch] // not kept alive by measured: a batch is 134 MB at 8192 x 4096
	digest uint64
	family string // familyKey of the family the sets are of
	sets   []power.Set
}

// keepMeasured keeps sets, row i's alternatives of family f, of batch b
// (a whole sensitive batch of a token op) whose item tensor's rows are
// rows.
func keepMeasured(b *target.Batch, rows []float32, f *power.Family, sets []power.Set) {
	d := measuredDraw{b: weak.Make(b), digest: rowsDigest(rows), family: familyKey(f), sets: sets}
	measured.Lock()
	defer measured.Unlock()
	measured.draws = append(measured.draws, d)
	if len(measured.draws) > measuredKept {
		measured.draws = measured.draws[1:]
	}
}

// measuredSets returns the sets of family f kept for batch b, n rows,
// whose item rows are rows (unchanged since: the same digest); false when
// none are kept.
func measuredSets(b *target.Batch, rows []float32, f *power.Family, n int) ([]power.Set, bool) {
	measured.Lock()
	var d measuredDraw
	found := false
	for _, m := range measured.draws {
		if m.b.Value() == b {
			d, found = m, true
		}
	}
	measured.Unlock()
	if !found || len(d.sets) != n || d.family != familyKey(f) || rowsDigest(rows) != d.digest {
		return nil, false
	}
	return append([]power.Set(nil), d.sets...), true
}

// familyKey names family f: its op, row length, declared schedule and
// alternatives.
func familyKey(f *power.Family) string {
	return fmt.Sprintf("%s %d %v %v", f.Op, f.Cols, f.Declared, f.Alts)
}

// rowsDigest is FNV-1a over the bits of rows, a value at a time.
func rowsDigest(rows []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range rows {
		h = (h ^ uint64(math.Float32bits(v))) * 1099511628211
	}
	return h
}

// madeRows keeps, per chain key of a draw (chainKey: the case but its
// targets and batch), the candidate each row key took and the set it
// showed, for the rows searched so far: a row's bits depend only on
// (case, draw, row key), so a draw of another batch size (a scan's
// further draws at each onset it pins, Seed and Draw alike) rebuilds a
// row made before from its choice (one nudge) instead of searching again.
var madeRows rowMemo[madeRow]

type madeRow struct {
	c   choice
	set power.Set
}

// rowsSearched counts the rows the sensitive search made (tests).
var rowsSearched atomic.Int64
