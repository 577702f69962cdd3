package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// drawsDigest is the sha256 of the JSON of the first 2000 cases Case draws
// for each single op under batch invariance and padding (seed 1), and of
// their Work: a change of Work or of the budgets it is held to changes it.
// Each case is hashed as drawn before Sensitive (asBoundary): the rule
// rewrites a case's distribution only, never the stream's other draws.
const drawsDigest = "1c4b515eab5a624b4c2301166efe356d0647f599c858b337e464547674e6e2b7"

// TestWorkKeepsTheDraws: Work derives from the op's work count
// (spec.OpInfo.FMAs) and draws exactly the cases it drew when each op
// had its own formula.
func TestWorkKeepsTheDraws(t *testing.T) {
	h := sha256.New()
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM, spec.OpLogProb, spec.OpAttnPrefill, spec.OpAttnDecode} {
		for _, rel := range []string{spec.RelBatchInvariance, spec.RelPadding} {
			r := rand.New(rand.NewSource(1))
			for range 2000 {
				c := asBoundary(Case(r, op, rel))
				b, err := json.Marshal(struct {
					C    spec.Case
					Work int
				}{c, Work(c)})
				if err != nil {
					t.Fatal(err)
				}
				h.Write(b)
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != drawsDigest {
		t.Errorf("draws digest %s, want %s: Work or the budgets moved", got, drawsDigest)
	}
}

// asBoundary returns c with a sensitive distribution as the boundary draw
// it was before Sensitive rewrote it.
func asBoundary(c spec.Case) spec.Case {
	if c.Dist == spec.DistSensitive {
		c.Dist = spec.DistBoundary
	}
	return c
}
