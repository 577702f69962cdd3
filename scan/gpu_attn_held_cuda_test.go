//go:build cuda

package scan

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestScanAttentionHeld: a scan of the items dimension of a GPU attention
// target holds each draw's batch on the device (gpu.Target.HoldAttention)
// and gives the unheld scan's result (every step's batch made on the host
// and Run): the same map, certificate and differing rows. The exact
// targets certify; the split drift model maps requests x 8 heads against
// 132 (batch <= 16 -> A, batch >= 17 -> B); tile 48 is batch invariant.
func TestScanAttentionHeld(t *testing.T) {
	needGPU(t)
	for _, tt := range []struct {
		target string
		to     int
		shape  spec.Shape
		rule   string // empty: certified
	}{
		{"cuda-attn_decode", 64, spec.Shape{KV: 130, Heads: 8, KVHeads: 2, HeadDim: 64}, ""},
		{"cuda-drift-decode-splits-by-batch", 64, spec.Shape{KV: 130, Heads: 8, KVHeads: 2, HeadDim: 64}, "batch <= 16 -> A, batch >= 17 -> B"},
		{"cuda-attn_prefill", 16, spec.Shape{SeqLen: 70, Heads: 4, KVHeads: 2, HeadDim: 64}, ""},
		{"cuda-drift-attn-tile48", 16, spec.Shape{SeqLen: 70, Heads: 4, KVHeads: 2, HeadDim: 64}, ""},
	} {
		s := spec.ScanSpec{Target: tt.target, From: 1, To: tt.to, Shape: tt.shape, Dists: []spec.Dist{spec.DistNormal}}
		start := time.Now()
		held := run(t, s)
		heldTime := time.Since(start)
		start = time.Now()
		unheld := scanUnheld(t, s)
		what := fmt.Sprintf("%s 1..%d", tt.target, tt.to)
		t.Logf("%s: %s; held %v, unheld %v", what, MapWords(held.Map), heldTime, time.Since(start))
		if !held.Resident {
			t.Errorf("%s: the batch was not held", what)
		}
		if !reflect.DeepEqual(held.Map, unheld.Map) || (held.Certificate == nil) != (unheld.Certificate == nil) || held.Differing != unheld.Differing {
			t.Errorf("%s: held map %q, %d differing; unheld %q, %d", what, held.Map.Rule, held.Differing, unheld.Map.Rule, unheld.Differing)
		}
		if (tt.rule == "") != (held.Certificate != nil) || tt.rule != "" && held.Map.Rule != tt.rule {
			t.Errorf("%s: map %q, want %q", what, held.Map.Rule, tt.rule)
		}
	}
}
