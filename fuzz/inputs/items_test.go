package inputs

import (
	"math"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

func TestPaddedFillers(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpAttnDecode, Relation: spec.RelPadding,
		Shape: spec.Shape{Rows: 2, KV: 5, Heads: 2, KVHeads: 1, HeadDim: 4}, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 7}
	b, err := Of(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range spec.Fillers {
		f := string(sf)
		p, err := PadCase(c, b, 5, f)
		if err != nil {
			t.Fatal(err)
		}
		pd, bd := p.Input.(*oracle.DecodeInput), b.Input.(*oracle.DecodeInput)
		if p.Items() != 5 || len(pd.K[4]) != len(bd.K[0]) {
			t.Fatalf("%s: %d items, filler cache %d", f, p.Items(), len(pd.K[4]))
		}
		for i := 0; i < 2; i++ {
			if pd.K[i][3] != bd.K[i][3] || pd.Q[i*8+1] != bd.Q[i*8+1] {
				t.Fatalf("%s: real request %d differs from the case's", f, i)
			}
		}
		q := pd.Q[2*8]
		switch f {
		case "nan":
			if q == q {
				t.Errorf("nan filler: q = %v", q)
			}
		case "zeros":
			if q != 0 {
				t.Errorf("zero filler: q = %v", q)
			}
		case "huge":
			if math.Abs(float64(q)) != float64(oracle.MaxFinite(oracle.BF16)) {
				t.Errorf("huge filler: q = %v", q)
			}
		}
	}
}
