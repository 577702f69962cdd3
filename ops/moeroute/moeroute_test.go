package moeroute

import (
	"context"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

func route(t *testing.T, x []float32, k int, p Policy) ([]int32, []float32) {
	t.Helper()
	ids, w := make([]int32, k), make([]float32, k)
	Route(x, p, ids, w)
	return ids, w
}

// TestRouteTieBreak: two experts with equal logits at the top-k boundary
// are taken in the declared index order, with equal weights.
func TestRouteTieBreak(t *testing.T) {
	x := []float32{1, 3, 3, 2}
	for _, tt := range []struct {
		k    int
		p    Policy
		want []int32
	}{
		{1, Policy{}, []int32{1}},
		{1, Policy{Tie: TieHighest}, []int32{2}},
		{2, Policy{}, []int32{1, 2}},
		{2, Policy{Tie: TieHighest}, []int32{2, 1}},
		{3, Policy{Sum: SumPairwise}, []int32{1, 2, 3}},
	} {
		ids, w := route(t, x, tt.k, tt.p)
		if !slices.Equal(ids, tt.want) {
			t.Errorf("k=%d %s: ids %v, want %v", tt.k, tt.p, ids, tt.want)
		}
		if tt.k == 1 && w[0] != 1 || tt.k == 2 && (w[0] != 0.5 || w[1] != 0.5) {
			t.Errorf("k=%d %s: weights %v", tt.k, tt.p, w)
		}
	}
	// four equal logits: q = 1/4 each, W = 1/2, w = 1/2 (every step exact)
	if ids, w := route(t, []float32{0, 0, 0, 0}, 2, Policy{}); !slices.Equal(ids, []int32{0, 1}) || w[0] != 0.5 || w[1] != 0.5 {
		t.Errorf("equal logits: %v %v", ids, w)
	}
}

// TestRouteSelectsLargest: on rows without near-ties, the ids are the k
// largest logits, largest first, lowest index first among equal logits.
func TestRouteSelectsLargest(t *testing.T) {
	op := Op{}
	for _, dist := range []string{"normal", "ties"} {
		in, err := op.Seeded(ops.Draw{Shape: ops.Shape{DimExperts: 64, DimTopK: 6}, DType: oracle.BF16, Dist: dist, Seed: 3}, []uint64{0, 1, 2, 3, 4, 5, 6, 7})
		if err != nil {
			t.Fatal(err)
		}
		b := in.(*ops.Rows)
		for r := range b.Items() {
			ids, _ := route(t, b.Row(r), 6, Policy{})
			var want []int32
			for _, e := range rank(b.Row(r))[:6] {
				want = append(want, int32(e))
			}
			if !slices.Equal(ids, want) {
				t.Errorf("%s row %d: ids %v, the largest logits are %v", dist, r, ids, want)
			}
		}
	}
}

// TestSensitiveRows: key%4 == 0 ties the k-th and (k+1)-th logits, 1 and
// 2 put them one ulp apart with the higher index larger, 3 leaves the row
// as drawn.
func TestSensitiveRows(t *testing.T) {
	op := Op{}
	for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16} {
		d := ops.Draw{Shape: ops.Shape{DimExperts: 128, DimTopK: 8}, DType: dt, Dist: DistSensitive, Seed: 1}
		keys := []uint64{0, 1, 2, 3, 4, 5, 6, 7}
		in, err := op.Seeded(d, keys)
		if err != nil {
			t.Fatal(err)
		}
		d.Dist = "normal"
		plain, _ := op.Seeded(d, keys)
		s, p := in.(*ops.Rows), plain.(*ops.Rows)
		for i, key := range keys {
			x := s.Row(i)
			c := Boundary(x, 8, dt)
			switch key % 4 {
			case 0:
				if c.ULPs != 0 {
					t.Errorf("%s key %d: boundary %d ulps apart, want a tie", dt, key, c.ULPs)
				}
			case 1, 2:
				o := rank(x)
				if c.ULPs != 1 || o[7] < o[8] {
					t.Errorf("%s key %d: boundary %d ulps apart, experts %d then %d: want 1 ulp, the higher index larger", dt, key, c.ULPs, o[7], o[8])
				}
			case 3:
				if !slices.Equal(x, p.Row(i)) {
					t.Errorf("%s key %d: row changed", dt, key)
				}
			}
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{{}, {Tie: TieHighest}, {Sum: SumPairwise}, {TieHighest, SumPairwise}} {
		if got, err := ParsePolicy(p.String()); err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("tie=random"); err == nil {
		t.Error("tie=random: no error")
	}
}

// TestDriftOnsets: batch invariance holds for each drift model one token
// below its onset and fails at it, and the tokens that changed experts
// did so by a tie or a near-tie.
func TestDriftOnsets(t *testing.T) {
	op := Op{}
	ctx := context.Background()
	keys := make([]uint64, 130)
	for i := range keys {
		keys[i] = uint64(i)
	}
	in, err := op.Seeded(ops.Draw{Shape: ops.Shape{DimExperts: 128, DimTopK: 8}, DType: oracle.FP32, Dist: DistSensitive, Seed: 1}, keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		onset int
	}{{TieHighName, TieHighFrom}, {PairwiseName, PairwiseFrom}} {
		tg := targetNamed(t, tt.name)
		alone, err := ops.Alone(ctx, tg, in)
		if err != nil {
			t.Fatal(err)
		}
		below, err := ops.BatchInvariance(ctx, tg, in, alone, tt.onset-1)
		if err != nil {
			t.Fatal(err)
		}
		at, err := ops.BatchInvariance(ctx, tg, in, alone, tt.onset)
		if err != nil {
			t.Fatal(err)
		}
		if len(below.Rows) != 0 || len(at.Rows) == 0 {
			t.Errorf("%s: %d rows differ at %d tokens, %d at %d: want none below the onset, some at it", tt.name, len(below.Rows), tt.onset-1, len(at.Rows), tt.onset)
		}
		changed := 0
		for _, r := range at.Rows {
			if Changed(at.Want, r, at.Got, r) {
				changed++
				if c := Boundary(in.(*ops.Rows).Row(r), 8, oracle.FP32); c.ULPs > NearTieULPs {
					t.Errorf("%s: token %d changed experts with a boundary gap of %d ulps", tt.name, r, c.ULPs)
				}
			}
		}
		if changed == 0 {
			t.Errorf("%s: no token changed experts at %d tokens", tt.name, tt.onset)
		}
	}
}

// TestWords says a tie broken the other way in words.
func TestWords(t *testing.T) {
	op := Op{}
	in, err := op.Explicit(ops.Shape{DimExperts: 4, DimTopK: 1}, oracle.FP32, []float32{1, 3, 3, 2, 0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := op.Reference(in, "")
	got, _ := op.Reference(in, "tie=highest")
	const w = "1 of 2 tokens differ: 1 (50.0%) changed experts (1 by a tie); first: token 0: experts [1] -> [2]"
	if s := op.Words(in, want, got, []int{0}); s != w {
		t.Errorf("words\n%s\nwant\n%s", s, w)
	}
	if _, err := op.Explicit(ops.Shape{DimExperts: 4, DimTopK: 1}, oracle.BF16, []float32{1.001, 0, 0, 0}); err == nil {
		t.Error("a value that is not bf16: no error")
	}
	if _, err := op.Columns(ops.Shape{DimExperts: 4, DimTopK: 5}); err == nil {
		t.Error("top_k above experts: no error")
	}
}

func targetNamed(t *testing.T, name string) ops.Target {
	t.Helper()
	for _, tg := range (Op{}).Targets() {
		if tg.Name() == name {
			return tg
		}
	}
	t.Fatalf("no target %s", name)
	return nil
}
