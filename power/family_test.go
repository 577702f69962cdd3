package power

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// normals returns a function that draws n normal values from rng, each
// rounded to dt.
func normals(rng *rand.Rand, dt oracle.DType) func(n int) []float32 {
	return func(n int) []float32 {
		v := make([]float32, n)
		for j := range v {
			v[j] = oracle.Round(dt, float32(rng.NormFloat64()))
		}
		return v
	}
}

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
	fr, err := NewFamily(spec.OpRMSNorm, cols, oracle.BF16, declR)
	if err != nil {
		t.Fatal(err)
	}
	declL := oracle.LogProbSchedule{Reduce: declR.Reduce}
	fl, err := NewFamily(spec.OpLogProb, cols, oracle.BF16, declL)
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
		f, err := NewFamily(tc.op, 768, oracle.BF16, tc.decl)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Alts) != tc.want {
			t.Errorf("%s: %d alternatives, want %d", tc.op, len(f.Alts), tc.want)
		}
	}
	// The declared schedule's kind is the family's: one of no family's
	// kind (none declared) and a row length below 1 are refused.
	if _, err := NewFamily(spec.OpGEMM, 768, oracle.BF16, nil); err == nil {
		t.Error("a family around no schedule: no error")
	}
	if _, err := NewFamily(spec.OpRMSNorm, 0, oracle.BF16, oracle.RMSNormSchedule{Reduce: r}); err == nil {
		t.Error("a family at row length 0: no error")
	}
}

// TestGEMMFamilyAgainstOracle: one output of a gemm row shows alternative
// a exactly when oracle.GEMM gives that output other bits under a than
// under the declared schedule (split-K with both combines, K tiles, the
// tensor core of the input dtype), and a knob step through GEMMCheck.Set
// gives the set of the changed row made afresh.
func TestGEMMFamilyAgainstOracle(t *testing.T) {
	const K, N, col = 200, 3, 1
	rng := rand.New(rand.NewSource(2))
	decl := oracle.GEMMSchedule{SplitK: 1, Combine: oracle.CrossSequential}
	for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		f, err := NewFamily(spec.OpGEMM, K, dt, decl)
		if err != nil {
			t.Fatal(err)
		}
		vals := normals(rng, dt)
		shown, mma := 0, 0
		for r := 0; r < 4; r++ {
			x, w := vals(K), vals(K*N)
			wc := make([]float32, K)
			for k := range wc {
				wc[k] = w[k*N+col]
			}
			if r == 3 && dt != oracle.FP32 {
				// move x[0] (an fp32 value now) so that the output sits
				// at its rounding midpoint, then walk it until the output
				// shows some alternative (in bf16 and fp16 an untuned
				// output shows none)
				y, err := oracle.GEMM(oracle.GEMMInput{X: x, W: wc, M: 1, K: K, N: 1, Out: oracle.FP32}, decl, nil)
				if err != nil {
					t.Fatal(err)
				}
				lo := oracle.Round(dt, y[0])
				mid := math.Nextafter32(lo, float32(math.Inf(1))) // the first value above lo that rounds up: the midpoint's side
				for oracle.Round(dt, mid) == lo {
					mid = math.Nextafter32(mid, float32(math.Inf(1)))
				}
				c, err := f.NewGEMMCheck(x, wc, dt)
				if err != nil {
					t.Fatal(err)
				}
				base := math.Float32bits(float32(float64(x[0]) + (float64(mid)-float64(y[0]))/float64(wc[0])))
				for i := 0; i < 1<<12 && (i == 0 || c.Shows().Len() == 0); i++ {
					d := uint32(i/2 + 1)
					if i%2 == 1 {
						d = -d
					}
					c.Set(0, math.Float32frombits(base+d))
				}
				if c.Shows().Len() == 0 {
					t.Fatalf("gemm %s: no x[0] near %g shows an alternative", dt, x[0])
				}
			}
			in := oracle.GEMMInput{X: x, W: w, M: 1, K: K, N: N, Out: dt}
			out := func(s oracle.Schedule) uint32 {
				y, err := oracle.GEMM(in, s.(oracle.GEMMSchedule), nil)
				if err != nil {
					t.Fatal(err)
				}
				return math.Float32bits(y[col])
			}
			ref := out(decl)
			got, err := f.GEMM(x, wc, dt)
			if err != nil {
				t.Fatal(err)
			}
			for a, alt := range f.Alts {
				if diff := out(alt) != ref; diff != got.Has(a) {
					t.Fatalf("gemm %s row %d, %s: shows %v, the oracle differs %v", dt, r, alt, got.Has(a), diff)
				}
				if alt.(oracle.GEMMSchedule).MMA != oracle.MMANone && got.Has(a) {
					mma++
				}
			}
			shown += got.Len()
			c, err := f.NewGEMMCheck(x, wc, dt)
			if err != nil {
				t.Fatal(err)
			}
			c.Set(K/3, oracle.Round(dt, x[K/3]*1.5))
			fresh, err := f.GEMM(x, wc, dt)
			if err != nil {
				t.Fatal(err)
			}
			if s := c.Shows(); !sameSet(s, fresh) {
				t.Fatalf("gemm %s row %d: after Set %v, afresh %v", dt, r, s, fresh)
			}
		}
		if dt == oracle.FP32 && mma == 0 { // an fp32 output shows nearly every alternative
			t.Errorf("gemm %s: no tensor-core alternative shown in 4 rows", dt)
		}
		t.Logf("gemm %s: %d alternatives at K %d, 4 rows' column (the last walked onto a boundary) shows %.1f%% of them", dt, len(f.Alts), K, 100*float64(shown)/float64(4*len(f.Alts)))
	}
	f, err := NewFamily(spec.OpGEMM, 8, oracle.BF16, decl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewGEMMCheck(make([]float32, 7), make([]float32, 7), oracle.BF16); err == nil {
		t.Error("a gemm check of a row of 7 values at K 8: no error")
	}
}
