package gen

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestResiduesCoverage(t *testing.T) {
	var r Residues
	for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100} {
		r.Add(spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelPadding, Shape: spec.Shape{Rows: rows, Hidden: 64}, Rel: spec.RelParams{Pad: 2 * rows}})
	}
	tests := []struct {
		dim  string
		m    int
		want float64
	}{
		{"rows", 2, 1}, {"rows", 10, 1}, {"rows", 11, 10.0 / 11}, {"rows", 16, 10.0 / 16}, {"rows", 128, 11.0 / 128},
		{"pad", 2, 0.5}, {"pad", 4, 0.5}, {"pad", 3, 1}, {"batch", 2, 0},
	}
	for _, tt := range tests {
		if got := r.Coverage(tt.dim, tt.m); got != tt.want {
			t.Errorf("Coverage(%s, %d) = %v, want %v", tt.dim, tt.m, got, tt.want)
		}
	}
	if f, m := r.MinCoverage("pad"); f != 11.0/128 || m != 128 {
		t.Errorf("MinCoverage(pad) = %v at %d, want 11/128 at 128", f, m)
	}
	if f, m := r.MinCoverage("rows"); f != 11.0/128 || m != 128 {
		t.Errorf("MinCoverage(rows) = %v at %d, want 11/128 at 128", f, m)
	}
	if got := r.Dims(); !slices.Equal(got, []string{"rows", "pad"}) {
		t.Errorf("Dims() = %v, want [rows pad]", got)
	}
	if r.Max("rows") != 100 || r.Max("pad") != 200 || r.Cases != 11 {
		t.Errorf("Max(rows) %d, Max(pad) %d, Cases %d; want 100, 200, 11", r.Max("rows"), r.Max("pad"), r.Cases)
	}
}

// The dimensions Residues records are named as Dims names them, and the
// watched row only where batch invariance watches one.
func TestResidueDimsAreDims(t *testing.T) {
	for _, p := range pairs() {
		r := rand.New(rand.NewSource(1))
		for range 50 {
			c := Case(r, p.op, p.rel)
			var names []string
			for _, d := range Dims(c) {
				names = append(names, d.Name)
			}
			residueValues(c, func(dim string, v int) {
				if !slices.Contains(names, dim) {
					t.Fatalf("%s/%s: residue dimension %q is not one of Dims %v", p.op, p.rel, dim, names)
				}
				if dim == "row" && p.rel != spec.RelBatchInvariance {
					t.Fatalf("%s/%s: the watched row recorded outside batch invariance", p.op, p.rel)
				}
			})
		}
	}
}

func TestResidueCases(t *testing.T) {
	for _, p := range pairs() {
		r := rand.New(rand.NewSource(seedOr(t, 1)))
		for range 300 {
			c := Case(r, p.op, p.rel)
			got := Residue(c)
			if err := got.Validate(); err != nil {
				t.Fatalf("%s/%s: Residue(%+v) = %+v, invalid: %v", p.op, p.rel, c, got, err)
			}
			if again := Residue(c); !reflect.DeepEqual(got, again) {
				t.Fatalf("%s/%s: two Residue calls differ:\n%+v\n%+v", p.op, p.rel, got, again)
			}
			if got.Op != c.Op || got.Relation != c.Relation || got.In != c.In || got.Out != c.Out ||
				got.Compare != c.Compare || got.Eps != c.Eps || asBoundary(got).Dist != asBoundary(c).Dist || got.Seed != c.Seed {
				t.Fatalf("%s/%s: Residue changed the case's identity: %+v from %+v", p.op, p.rel, got, c)
			}
			residueValues(got, func(dim string, v int) {
				if v > ResidueMax {
					t.Fatalf("%s/%s: %s = %d, above ResidueMax", p.op, p.rel, dim, v)
				}
			})
		}
	}
}

// residueValue reaches every class mod every m <= MaxModulus, values in
// the top half of its range, and keeps a small mean; the counts are of
// one fixed seed (expected: all classes after about 1500 draws).
func TestResidueValue(t *testing.T) {
	r := rand.New(rand.NewSource(seedOr(t, 1)))
	var res Residues
	const n = 3000
	sum, top := 0, 0
	for range n {
		v := residueValue(r, ResidueMax)
		if v < 1 || v > ResidueMax {
			t.Fatalf("residueValue(%d) = %d", ResidueMax, v)
		}
		sum += v
		if v > ResidueMax/2 {
			top++
		}
		res.Add(spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelOracleParity, Shape: spec.Shape{Rows: v}})
	}
	if f, m := res.MinCoverage("rows"); f < 1 {
		t.Errorf("%d draws reach %.1f%% of the classes mod %d, want all", n, 100*f, m)
	}
	if top == 0 || sum/n > 150 {
		t.Errorf("%d draws: %d above %d, mean %d; want some, and a mean <= 150", n, top, ResidueMax/2, sum/n)
	}
	for _, max := range []int{1, 2, 100} {
		for range 100 {
			if v := residueValue(r, max); v < 1 || v > max {
				t.Fatalf("residueValue(%d) = %d", max, v)
			}
		}
	}
}
