package power

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// prefillWant is row r of in under schedule s as the oracle gives it: one
// split, oracle.Prefill's row; more, oracle.Decode of the row's query over
// its sequence's KV tokens 0..p (the split-KV prefill).
func prefillWant(t *testing.T, in oracle.PrefillInput, s oracle.AttentionSchedule, r int) []float32 {
	t.Helper()
	if s.Splits == 1 {
		y, err := oracle.Prefill(in, s, []int{r})
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	h, p, seq := r%H, (r/H)%in.SeqLen, r/H/in.SeqLen
	var k, v []float32
	for j := range p + 1 {
		off := ((seq*in.SeqLen+j)*KH + h/(H/KH)) * D
		k, v = append(k, in.K[off:off+D]...), append(v, in.V[off:off+D]...)
	}
	y, err := oracle.Decode(oracle.DecodeInput{Q: in.Q[r*D : (r+1)*D], K: [][]float32{k}, V: [][]float32{v},
		Heads: 1, KVHeads: 1, HeadDim: D, Out: in.Out}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// TestPrefillFamilyAgainstOracle: an attn_prefill row shows alternative a
// exactly when the oracle gives the row other bits under a than under the
// declared schedule (prefillWant), at the query drawn and after the query
// moved through PrefillCheck.Query, for rows before position 16 (they show
// none: a tile of 16 or more covers them), at the sequence's last position
// and between, of the second sequence, in bf16, fp16 and fp32.
func TestPrefillFamilyAgainstOracle(t *testing.T) {
	const S, L, H, KH, D = 2, 70, 4, 2, 8
	f := attnFamily(t, spec.OpAttnPrefill, L)
	vals := normals(rand.New(rand.NewSource(5)), oracle.BF16)
	for _, out := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		in := oracle.PrefillInput{Q: vals(S * L * H * D), K: vals(S * L * KH * D), V: vals(S * L * KH * D),
			Seqs: S, SeqLen: L, Heads: H, KVHeads: KH, HeadDim: D, Out: out}
		for _, pos := range []int{5, 15, 16, 33, L - 1} {
			r := ((1*L)+pos)*H + 3 // sequence 1, head 3 (KV head 1)
			c, err := f.NewPrefillCheck(in, r, out)
			if err != nil {
				t.Fatal(err)
			}
			if pos < 16 != (c.Distinct().Len() == 0) {
				t.Fatalf("%s position %d: %d alternatives can show", out, pos, c.Distinct().Len())
			}
			q := in.Q[r*D : (r+1)*D]
			check := func(when string) Set {
				t.Helper()
				copy(q, c.Query()) // the oracle reads the batch: the check's query, there
				got, err := c.Shows()
				if err != nil {
					t.Fatal(err)
				}
				ref := prefillWant(t, in, attnDecl, r)
				row, err := c.Row()
				if err != nil {
					t.Fatal(err)
				}
				for d := range row {
					if oracle.Round(out, row[d]) != ref[d] {
						t.Fatalf("%s position %d %s: Row column %d is %g, the oracle %g", out, pos, when, d, row[d], ref[d])
					}
				}
				for a, alt := range f.Alts {
					if diff := !sameBits(prefillWant(t, in, alt.(oracle.AttentionSchedule), r), ref); diff != got.Has(a) {
						t.Fatalf("%s position %d %s, %s: shows %v, the oracle differs %v", out, pos, when, alt, got.Has(a), diff)
					}
				}
				return got
			}
			got := check("as drawn")
			// move the query's last value (by 2^6 fp32 ulps) until the row
			// shows something
			for i := 0; i < 1<<13 && got.Len() == 0 && c.Distinct().Len() > 0; i++ {
				c.Query()[D-1] = math.Float32frombits(math.Float32bits(c.Query()[D-1]) + 1<<6)
				if got, err = c.Shows(); err != nil {
					t.Fatal(err)
				}
			}
			if pos > 16 && got.Len() == 0 {
				t.Fatalf("%s position %d: no query near the drawn one shows an alternative: the test checks nothing", out, pos)
			}
			got = check("moved")
			t.Logf("%s position %d: shows %d of %d (%d can)", out, pos, got.Len(), len(f.Alts), c.Distinct().Len())
		}
	}
}

// TestPrefillEdgesAndRows: Edges is the tokens past 0 where the given
// alternatives start a tile or a split and the declared schedule (tile 64,
// one split) does not, at a row of 34 tokens ([16 32] for the family, [32]
// for the tile-32 alternatives alone, none for none); Rows is the row's fp32
// output under the declared schedule (Row's bits), then under each group of
// the given alternatives, as the oracle gives it.
func TestPrefillEdgesAndRows(t *testing.T) {
	const L, H, KH, D, pos = 40, 2, 1, 8, 33
	f := attnFamily(t, spec.OpAttnPrefill, L)
	vals := normals(rand.New(rand.NewSource(3)), oracle.BF16)
	in := oracle.PrefillInput{Q: vals(L * H * D), K: vals(L * KH * D), V: vals(L * KH * D),
		Seqs: 1, SeqLen: L, Heads: H, KVHeads: KH, HeadDim: D, Out: oracle.FP32}
	r := pos*H + 1
	c, err := f.NewPrefillCheck(in, r, oracle.BF16)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != pos+1 {
		t.Errorf("Len %d, want %d", c.Len(), pos+1)
	}
	tile32 := NewSet(len(f.Alts))
	for a, alt := range f.Alts {
		if alt.(oracle.AttentionSchedule).Tile == 32 && c.Distinct().Has(a) {
			tile32.Add(a)
		}
	}
	for _, tc := range []struct {
		name string
		s    Set
		want []int
	}{
		{"all", c.Distinct(), []int{16, 32}},
		{"tile 32", tile32, []int{32}},
		{"none", NewSet(len(f.Alts)), nil},
	} {
		if got := c.Edges(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("Edges(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}

	rows, err := c.Rows(c.Distinct())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(c.alts) {
		t.Fatalf("Rows: %d rows, want the declared and %d groups", len(rows), len(c.alts))
	}
	row, err := c.Row()
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(rows[0], row) || !sameBits(rows[0], prefillWant(t, in, attnDecl, r)) {
		t.Errorf("Rows[0] %v, Row %v", rows[0], row)
	}
	for g, alts := range c.alts {
		if want := prefillWant(t, in, f.Alts[alts[0]].(oracle.AttentionSchedule), r); !sameBits(rows[g+1], want) {
			t.Errorf("Rows[%d] (%s) %v, the oracle %v", g+1, f.Alts[alts[0]], rows[g+1], want)
		}
	}
	groups := 0 // tile 32 at 34 tokens: one split, and two ([0,32) [32,34))
	for _, alts := range c.alts {
		if slices.ContainsFunc(alts, tile32.Has) {
			groups++
		}
	}
	if rows, err := c.Rows(tile32); err != nil || groups != 2 || len(rows) != 1+groups {
		t.Errorf("Rows(tile 32): %d rows (%v), want the declared and %d groups (2)", len(rows), err, groups)
	}
}
