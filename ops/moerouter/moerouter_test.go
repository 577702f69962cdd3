package moerouter

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/oracle"
)

var small = ops.Shape{DimHidden: 256, moeroute.DimExperts: 32, moeroute.DimTopK: 4}

// TestAmplification: a router GEMM whose split-K is chosen by M (split-K
// 4 up to 64 tokens, none above) changes every token's logits from 65
// tokens on; on the sensitive draw a share of the tokens change experts
// (by a tie or a near-tie at the top-k boundary), on the normal draw
// none do: they keep their experts with other weights. Below 65 tokens
// every row equals the token alone.
func TestAmplification(t *testing.T) {
	ctx := context.Background()
	tg := Op{}.Targets()[1]
	for _, tt := range []struct {
		dist    string
		changed string // in the words at 65 tokens
	}{
		{DistSensitive, "65 of 65 tokens differ: 12 (18.5%) changed experts (5 by a near-tie (within 1 ulp of the k-th logit), 6 by a tie, 1 by a near-tie (within 2 ulp"},
		{"normal", "64 of 65 tokens differ: 0 (0.0%) changed experts, 64 kept their experts with other weights or order"},
	} {
		in, err := Op{}.Seeded(ops.Draw{Shape: small, DType: oracle.BF16, Dist: tt.dist, Seed: 1}, keys(65))
		if err != nil {
			t.Fatal(err)
		}
		alone, err := ops.Alone(ctx, tg, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []int{1, 64, 65} {
			ch, err := ops.BatchInvariance(ctx, tg, in, alone, v)
			if err != nil {
				t.Fatal(err)
			}
			if (len(ch.Rows) > 0) != (v > SplitKUpTo) {
				t.Errorf("%s, %d tokens: %d rows differ", tt.dist, v, len(ch.Rows))
			}
			if v == 65 {
				if w := (Op{}).Words(ch.Batch, ch.Want, ch.Got, ch.Rows); !strings.Contains(w, tt.changed) {
					t.Errorf("%s, 65 tokens: %q, want %q", tt.dist, w, tt.changed)
				}
			}
		}
	}
}

// TestSensitiveRow: the sensitive draw brings the k-th and (k+1)-th
// logits of most of its moved tokens (43 of the 48 with key % 4 != 3)
// within 2 ulps; no token of the normal draw is that close.
func TestSensitiveRow(t *testing.T) {
	for _, tt := range []struct {
		dist     string
		near, of int // tokens within 2 ulps
	}{{DistSensitive, 43, 64}, {"normal", 0, 64}} {
		in, err := Op{}.Seeded(ops.Draw{Shape: small, DType: oracle.BF16, Dist: tt.dist, Seed: 1}, keys(tt.of))
		if err != nil {
			t.Fatal(err)
		}
		l, err := Logits(in.(*Batch), Policy{SplitK: 1})
		if err != nil {
			t.Fatal(err)
		}
		near := 0
		for r := range tt.of {
			if moeroute.Boundary(l[r*32:(r+1)*32], 4, oracle.FP32).ULPs <= 2 {
				near++
			}
		}
		if near != tt.near {
			t.Errorf("%s: %d of %d tokens within 2 ulps at the boundary, want %d", tt.dist, near, tt.of, tt.near)
		}
	}
}

// TestReferenceAndPolicy: the oracle target is the reference of the
// declared policy; split_k parses and a bad policy is an error.
func TestReferenceAndPolicy(t *testing.T) {
	in, err := Op{}.Seeded(ops.Draw{Shape: small, DType: oracle.BF16, Dist: DistSensitive, Seed: 2}, keys(8))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Op{}.Reference(in, "split_k=1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Op{}.Targets()[0].Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 8 {
		if !got.SameRow(r, ref, r) {
			t.Errorf("oracle row %d differs from the reference", r)
		}
	}
	if p, err := ParsePolicy("split_k=4"); err != nil || p.SplitK != 4 || p.String() != "split_k=4" {
		t.Errorf("ParsePolicy: %+v, %v", p, err)
	}
	for _, bad := range []string{"split_k=0", "split_k=x", "tie=lowest"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q): no error", bad)
		}
	}
	if _, err := (Op{}).Columns(ops.Shape{DimHidden: 0, moeroute.DimExperts: 8, moeroute.DimTopK: 2}); err == nil {
		t.Error("hidden 0: no error")
	}
}

func keys(n int) []uint64 {
	k := make([]uint64, n)
	for i := range k {
		k[i] = uint64(i)
	}
	return k
}
