package inputs

import (
	"slices"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestRowPowerReadsSearch: RowPower of a sensitive batch Of made reads
// the sets its search measured, and they are the sets measured row by row
// (the same batch copied, which RowPower measures); a batch whose rows
// changed since is measured again.
func TestRowPowerReadsSearch(t *testing.T) {
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM, spec.OpLogProb} {
		t.Run(string(op), func(t *testing.T) {
			c := powerCase(op, 256, 12, spec.BF16, spec.DistSensitive, 41)
			c.Draw = 1
			b, f := batchAndFamily(t, c)
			k, in, _ := b.Kind()
			rows := *k.ItemRows(in)
			if _, ok := measuredSets(b, rows, f, k.Items(in)); !ok {
				t.Fatal("the draw's sets were not kept")
			}
			read, err := RowPower(c, b, f)
			if err != nil {
				t.Fatal(err)
			}
			copied := copyBatch(t, b)
			measuredAgain, err := RowPower(c, copied, f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(read, measuredAgain, slices.Equal[power.Set]) {
				t.Fatalf("the search's sets differ from the rows measured again:\n%v\n%v", read, measuredAgain)
			}
			rows[len(rows)/2] = oracle.Round(b.In, rows[len(rows)/2]*1.5) // a row changed: measured again
			if _, ok := measuredSets(b, rows, f, k.Items(in)); ok {
				t.Fatal("sets of a changed batch were read")
			}
			changed, err := RowPower(c, b, f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := RowPower(c, copyBatch(t, b), f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(changed, want, slices.Equal[power.Set]) {
				t.Fatal("a changed batch's sets are not its rows'")
			}
		})
	}
}

// copyBatch is b with its item rows copied (another batch: RowPower
// measures it).
func copyBatch(t testing.TB, b *target.Batch) *target.Batch {
	t.Helper()
	k, in, err := b.Kind()
	if err != nil {
		t.Fatal(err)
	}
	cp := *b
	switch x := in.(type) {
	case *oracle.RMSNormInput:
		y := *x
		cp.Input = &y
	case *oracle.GEMMInput:
		y := *x
		cp.Input = &y
	case *oracle.LogProbInput:
		y := *x
		cp.Input = &y
	default:
		t.Fatalf("copy a %T", in)
	}
	_, cin, _ := cp.Kind()
	*k.ItemRows(cin) = slices.Clone(*k.ItemRows(in))
	return &cp
}

// TestMadeRowsReused: a sensitive draw of more rows (the same case, seed
// and draw) rebuilds the rows a draw of fewer made, bit for bit, and
// searches only the rows past them; its sets are those of a search from
// nothing.
func TestMadeRowsReused(t *testing.T) {
	t.Setenv(sensitiveCacheEnv, "off")
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM, spec.OpLogProb} {
		t.Run(string(op), func(t *testing.T) {
			c := powerCase(op, 128, 10, spec.BF16, spec.DistSensitive, 57)
			c.Draw = 1
			if _, err := Of(c); err != nil { // rows 0..9 made
				t.Fatal(err)
			}
			more := c
			more.SetBatchRows(16)
			before := rowsSearched.Load()
			b, sets, err := sensitiveDraw(more)
			if err != nil {
				t.Fatal(err)
			}
			if n := rowsSearched.Load() - before; n != 6 {
				t.Errorf("searched %d rows, want the 6 not made before", n)
			}
			madeRows.forget() // search every row again
			fresh, freshSets, err := sensitiveDraw(more)
			if err != nil {
				t.Fatal(err)
			}
			k, in, _ := b.Kind()
			_, fin, _ := fresh.Kind()
			if !slices.Equal(*k.ItemRows(in), *k.ItemRows(fin)) || !slices.EqualFunc(sets, freshSets, slices.Equal[power.Set]) {
				t.Fatal("rows rebuilt from their choices differ from rows searched")
			}
		})
	}
}

// BenchmarkRowPowerSensitive is RowPower of a sensitive rmsnorm batch of
// 256 rows at hidden 4096 (bf16): read, the batch the draw made (its
// search's sets), against measured, a copy of it (every row measured).
func BenchmarkRowPowerSensitive(b *testing.B) {
	c := powerCase(spec.OpRMSNorm, 4096, 256, spec.BF16, spec.DistSensitive, 61)
	c.Draw = 1
	made, f := batchAndFamily(b, c)
	for _, tc := range []struct {
		name  string
		batch *target.Batch
	}{{"read", made}, {"measured", copyBatch(b, made)}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := RowPower(c, tc.batch, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// batchAndFamily is case c's batch (Of) and its family of reduction
// orders (Family).
func batchAndFamily(tb testing.TB, c spec.Case) (*target.Batch, *power.Family) {
	tb.Helper()
	b, err := Of(c)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := Family(c)
	if err != nil {
		tb.Fatal(err)
	}
	return b, f
}
