package power

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// attnDecl is the declared schedule of the attention tests: tile 64, one split.
var attnDecl = oracle.AttentionSchedule{Tile: 64, Splits: 1}

// attnFamily is the bf16 family of op (attn_decode or attn_prefill) at
// length L around attnDecl.
func attnFamily(t *testing.T, op spec.Op, L int) *Family {
	t.Helper()
	f, err := NewFamily(op, L, oracle.BF16, attnDecl)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDecodeFamilyAgainstOracle: an attn_decode row shows alternative a
// exactly when oracle.Decode gives the row other bits under a than under
// the declared schedule, before and after V values move through
// DecodeCheck.SetV (a value of the row's column, one of another head).
func TestDecodeFamilyAgainstOracle(t *testing.T) {
	const L, H, KH, D = 150, 4, 2, 8
	f := attnFamily(t, spec.OpAttnDecode, L)
	if len(f.Alts) < 15 {
		t.Fatalf("decode family at L %d has %d alternatives, want >= 15", L, len(f.Alts))
	}
	vals := normals(rand.New(rand.NewSource(3)), oracle.BF16)
	for _, out := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		in := oracle.DecodeInput{Q: vals(H * D), K: [][]float32{vals(L * KH * D)}, V: [][]float32{vals(L * KH * D)},
			Heads: H, KVHeads: KH, HeadDim: D, Out: out}
		const r = 3 // head 3: KV head 1
		c, err := f.NewDecodeCheck(in, r, out)
		if err != nil {
			t.Fatal(err)
		}
		knob := 7*KH*D + 1*D + 2 // token 7, KV head 1, column 2
		if out != oracle.FP32 {
			// move the knob until the row shows some alternative (an
			// untuned bf16 or fp16 row of 8 columns shows almost none)
			p, _ := oracle.NewDecodeProbe(oracle.DecodeInput{Q: in.Q, K: in.K, V: in.V, Heads: H, KVHeads: KH, HeadDim: D, Out: oracle.FP32}, attnDecl, r)
			v0, y0 := in.V[0][knob], p.Col(2)
			in.V[0][knob] = v0 + 0.5
			slope := float64(p.Col(2)-y0) / 0.5
			lo := oracle.Round(out, y0)
			mid := math.Nextafter32(lo, float32(math.Inf(1)))
			for oracle.Round(out, mid) == lo {
				mid = math.Nextafter32(mid, float32(math.Inf(1)))
			}
			base := math.Float32bits(float32(float64(v0) + (float64(mid)-float64(y0))/slope))
			for i := 0; i < 1<<14 && (i == 0 || c.Shows().Len() == 0); i++ {
				d := uint32(i/2 + 1)
				if i%2 == 1 {
					d = -d
				}
				c.SetV(knob, math.Float32frombits(base+d))
			}
			if c.Shows().Len() == 0 {
				t.Fatalf("decode %s: no V value near %g shows an alternative", out, v0)
			}
		}
		c.SetV(0*KH*D+0*D+1, 0.75) // KV head 0: not this row's
		check := func(when string, needSome bool) {
			t.Helper()
			got := c.Shows()
			want := func(s oracle.Schedule) []float32 {
				y, err := oracle.Decode(in, s.(oracle.AttentionSchedule), []int{r})
				if err != nil {
					t.Fatal(err)
				}
				return y
			}
			ref := want(attnDecl)
			for a, alt := range f.Alts {
				if diff := !sameBits(want(alt), ref); diff != got.Has(a) {
					t.Fatalf("decode %s %s, %s: shows %v, the oracle differs %v", out, when, alt, got.Has(a), diff)
				}
			}
			fresh, err := f.Decode(in, r, out)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Len() != got.Len() || fresh.Minus(got).Len() != 0 {
				t.Fatalf("decode %s %s: the check shows %d, made afresh %d", out, when, got.Len(), fresh.Len())
			}
			t.Logf("decode %s %s: shows %d of %d", out, when, got.Len(), len(f.Alts))
			if needSome && got.Len() == 0 {
				t.Fatalf("decode %s %s: shows no alternative: the test checks nothing", out, when)
			}
		}
		check("as set", true)
		c.SetV(knob, math.Float32frombits(math.Float32bits(in.V[0][knob])+1))
		check("after a knob step", false)
	}
}

// TestDecodeFamilyKeys: the family at a KV length drops the schedules
// that run the declared schedule's operations there, and keeps one of
// each other group.
func TestDecodeFamilyKeys(t *testing.T) {
	for _, tc := range []struct{ L, want int }{{1, 0}, {16, 0}, {17, 2}, {150, -1}} {
		f := attnFamily(t, spec.OpAttnDecode, tc.L)
		seen := map[string]bool{decodeKey(attnDecl, tc.L): true}
		for _, a := range f.Alts {
			k := decodeKey(a.(oracle.AttentionSchedule), tc.L)
			if seen[k] {
				t.Fatalf("L %d: %s runs another member's operations", tc.L, a)
			}
			seen[k] = true
		}
		if tc.want >= 0 && len(f.Alts) != tc.want {
			t.Errorf("L %d: %d alternatives, want %d", tc.L, len(f.Alts), tc.want)
		}
	}
	if _, err := NewFamily(spec.OpAttnDecode, 64, oracle.BF16, oracle.AttentionSchedule{Tile: 0, Splits: 1}); err == nil {
		t.Error("a decode family around tile 0: no error")
	}
}
