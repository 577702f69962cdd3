package scan

import (
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestNormalizeModel: a model-route scan fills the small decoder's sizes
// and the defaults, and refuses, as bad input naming the problem, another
// dimension, a bad range, a watched request outside the plan and a
// largest plan past the model route's limits.
func TestNormalizeModel(t *testing.T) {
	ok := spec.ScanSpec{Target: "exec:m.transformer", Op: spec.OpModel, To: 6}
	n, err := NormalizeModel(ok)
	if err != nil {
		t.Fatal(err)
	}
	if n.Dim != spec.ScanRequests || n.From != 1 || n.Shape.Rows != modelDefaults.Rows || n.Shape.Hidden != modelDefaults.Hidden ||
		n.Shape.SeqLen != modelDefaults.SeqLen || n.Shape.Seqs != 0 || len(n.Dists) != len(DefaultDists) || n.In != spec.BF16 || n.Eps == 0 {
		t.Errorf("defaults: %+v", n)
	}
	p := ok
	p.Dim = spec.ScanPrompt
	if n, err := NormalizeModel(p); err != nil || n.Shape.Seqs != modelDefaults.Seqs {
		t.Errorf("prompt defaults: %+v %v", n, err)
	}
	for _, c := range []struct {
		edit func(*spec.ScanSpec)
		want string
	}{
		{func(s *spec.ScanSpec) { s.Op = spec.OpRMSNorm }, "op model"},
		{func(s *spec.ScanSpec) { s.Dim = spec.ScanKV }, `not "kv"`},
		{func(s *spec.ScanSpec) { s.From = 7 }, "range 7..6"},
		{func(s *spec.ScanSpec) { s.Shape.SeqLen = 1 }, "seq_len 1"},
		{func(s *spec.ScanSpec) { s.Watch = 1 }, "for a prompt scan"},
		{func(s *spec.ScanSpec) { s.Dim, s.Watch = spec.ScanPrompt, 4 }, "watched request 4 of 4"},
		{func(s *spec.ScanSpec) { s.To = spec.MaxModelRequests + 1 }, "shape.seqs"},
		{func(s *spec.ScanSpec) { s.Shape.Heads, s.Shape.KVHeads = 3, 2 }, "heads"},
		{func(s *spec.ScanSpec) { s.Dists = []spec.Dist{"normal", "normal"} }, `draw "normal"`},
	} {
		s := ok
		c.edit(&s)
		if _, err := NormalizeModel(s); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrBadSpec saying %q", s, err, c.want)
		}
	}
}
