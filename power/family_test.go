package power

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// TestFamilyAgainstOracle: a row shows alternative a exactly when
// oracle.RMSNorm (oracle.LogProb) gives the row other bits under a than
// under the declared schedule, and a knob step through RMSNormCheck.Set
// gives the set of the changed row made afresh.
func TestFamilyAgainstOracle(t *testing.T) {
	const cols = 96
	rng := rand.New(rand.NewSource(1))
	row := func(scale float64) []float32 {
		x := make([]float32, cols)
		for j := range x {
			x[j] = oracle.Round(oracle.BF16, float32(rng.NormFloat64()*scale))
		}
		return x
	}
	declR := oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4, Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}}
	fr, err := NewFamily(spec.OpRMSNorm, cols, declR)
	if err != nil {
		t.Fatal(err)
	}
	declL := oracle.LogProbSchedule{Reduce: declR.Reduce}
	fl, err := NewFamily(spec.OpLogProb, cols, declL)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		shown := 0
		for r := 0; r < 6; r++ {
			x, w := row(1), row(1)
			in := oracle.RMSNormInput{X: x, W: w, Rows: 1, Hidden: cols, Eps: 1e-6, Out: out}
			want := func(s oracle.Schedule) []float32 {
				y, err := oracle.RMSNorm(in, s.(oracle.RMSNormSchedule), nil)
				if err != nil {
					t.Fatal(err)
				}
				return y
			}
			ref := want(declR)
			got, err := fr.RMSNorm(x, w, 1e-6, out)
			if err != nil {
				t.Fatal(err)
			}
			for a, alt := range fr.Alts {
				if diff := !sameBits(want(alt), ref); diff != got.Has(a) {
					t.Fatalf("rmsnorm %s row %d, %s: shows %v, the oracle differs %v", out, r, alt, got.Has(a), diff)
				}
			}
			shown += got.Len()
			c, err := fr.NewRMSNormCheck(x, w, 1e-6, out)
			if err != nil {
				t.Fatal(err)
			}
			c.Set(cols-3, x[cols-3]*1.5)
			fresh, err := fr.RMSNorm(x, w, 1e-6, out)
			if err != nil {
				t.Fatal(err)
			}
			if s := c.Shows(); !sameSet(s, fresh) {
				t.Fatalf("rmsnorm %s row %d: after Set %v, afresh %v", out, r, s, fresh)
			}

			logits := row(3)
			tgt := rng.Intn(cols)
			lin := oracle.LogProbInput{Logits: logits, Targets: []int32{int32(tgt)}, Rows: 1, Vocab: cols}
			lwant := func(s oracle.Schedule) float32 {
				y, err := oracle.LogProb(lin, s.(oracle.LogProbSchedule), nil)
				if err != nil {
					t.Fatal(err)
				}
				return oracle.Round(out, y[0])
			}
			lref := lwant(declL)
			lgot, err := fl.LogProb(logits, tgt, out)
			if err != nil {
				t.Fatal(err)
			}
			for a, alt := range fl.Alts {
				if diff := math.Float32bits(lwant(alt)) != math.Float32bits(lref); diff != lgot.Has(a) {
					t.Fatalf("logprob %s row %d, %s: shows %v, the oracle differs %v", out, r, alt, lgot.Has(a), diff)
				}
			}
		}
		t.Logf("rmsnorm %s: normal rows show %.1f%% of the family", out, 100*float64(shown)/float64(6*len(fr.Alts)))
	}
}

func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func sameSet(a, b Set) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFamilySize: explain's space has 176 reductions (352 rmsnorm
// schedules with the output orders); the families around the oracle's
// schedule keep one of each group that runs the same operations, without
// the declared one's: 217 for rmsnorm, 108 for logprob.
func TestFamilySize(t *testing.T) {
	if n := len(Reductions()); n != 176 {
		t.Errorf("%d reductions, want 176", n)
	}
	r := oracle.Reduction{Threads: 32, Vec: 4, Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}
	for _, tc := range []struct {
		op   spec.Op
		decl oracle.Schedule
		want int
	}{
		{spec.OpRMSNorm, oracle.RMSNormSchedule{Reduce: r}, 217},
		{spec.OpLogProb, oracle.LogProbSchedule{Reduce: r}, 108},
	} {
		f, err := NewFamily(tc.op, 768, tc.decl)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Alts) != tc.want {
			t.Errorf("%s: %d alternatives, want %d", tc.op, len(f.Alts), tc.want)
		}
	}
	if _, err := NewFamily(spec.OpGEMM, 768, oracle.GEMMSchedule{SplitK: 1}); err == nil {
		t.Error("a gemm family: no error")
	}
}
