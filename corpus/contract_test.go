package corpus

import (
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
)

// TestGeneratedCasesDecode: every case fuzz/gen draws is valid
// (spec.Case.Validate), and once it names its targets the corpus writes
// and reads it back unchanged.
func TestGeneratedCasesDecode(t *testing.T) {
	r := rand.New(rand.NewSource(30))
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			for i := 0; i < 20; i++ {
				c := gen.Case(r, op, rel)
				if err := c.Validate(); err != nil {
					t.Fatalf("%s/%s draw %d: gen drew an invalid case: %v", op, rel, i, err)
				}
				c.Targets = []string{"oracle-" + string(op)}
				b, err := Encode(NewFile(c, nil, spec.Env{}, ""))
				if err != nil {
					t.Fatalf("%s/%s draw %d: encode: %v", op, rel, i, err)
				}
				f, err := Decode("gen.json", b)
				if err != nil {
					t.Fatalf("%s/%s draw %d: the corpus refuses a generated case: %v", op, rel, i, err)
				}
				if !reflect.DeepEqual(f.Case, c) {
					t.Fatalf("%s/%s draw %d: decoded %+v, wrote %+v", op, rel, i, f.Case, c)
				}
			}
		}
	}
}

// TestOneContract: a case file the corpus accepts is a case the shrinker
// accepts (spec.Case.Validate, which fuzz/shrink calls), edge cases included, and a case the corpus refuses
// the shrinker refuses with the same message, the corpus naming the field
// under "case.".
func TestOneContract(t *testing.T) {
	base := func() spec.Case {
		return spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
			Targets: []string{"oracle-rmsnorm"}, Shape: spec.Shape{Rows: 1, Hidden: 64}, In: spec.BF16, Out: spec.BF16,
			Eps: 1e-6, Dist: spec.DistNormal, Seed: 7, GenVersion: spec.GeneratorVersion,
			Rel: spec.RelParams{Batch: 3}}
	}
	// (1 + extra)·64 + 64 = spec.MaxElements at the limit
	const atLimit = spec.MaxElements/64 - 2
	for _, tc := range []struct {
		name  string
		edit  func(c *spec.Case)
		field string // "" when valid
		msg   string // part of the message when refused
	}{
		{name: "base", edit: func(*spec.Case) {}},
		{name: "batch at the limit", edit: func(c *spec.Case) { c.Rel.Batch = atLimit }},
		{name: "pad at the limit", edit: func(c *spec.Case) {
			c.Relation, c.Rel = spec.RelPadding, spec.RelParams{Pad: atLimit, Filler: string(spec.FillerNaN)}
		}},
		{name: "decode with kv_lens and no kv", edit: func(c *spec.Case) {
			c.Op, c.Eps, c.Shape = spec.OpAttnDecode, 0, spec.Shape{Rows: 2, KVLens: []int{48, 49}, Heads: 4, KVHeads: 2, HeadDim: 64}
		}},
		{name: "explicit data without dist", edit: func(c *spec.Case) {
			c.Dist, c.Seed, c.Shape.Hidden = "", 0, 2
			c.Data = &spec.Data{Tensors: map[string][]string{"x": {"3f80", "8000"}, "w": {"3f80", "3f80"}}}
		}},
		{name: "model case", edit: func(c *spec.Case) {
			*c = spec.Case{Version: spec.CaseVersion, Op: spec.OpModel, Relation: spec.RelPathParity, Targets: []string{"exec:m.transformer"},
				Shape: spec.Shape{Rows: 1, Hidden: 64, N: 9, Vocab: 21, Seqs: 4, SeqLen: 37, Heads: 8, KVHeads: 2, HeadDim: 16},
				In:    spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 3, GenVersion: 1}
		}},

		{name: "batch past the limit", edit: func(c *spec.Case) { c.Rel.Batch = atLimit + 1 }, field: "rel.batch", msg: "more than the limit of 268435456"},
		{name: "pad past the limit", edit: func(c *spec.Case) {
			c.Relation, c.Rel = spec.RelPadding, spec.RelParams{Pad: atLimit + 1, Filler: "zeros"}
		}, field: "rel.pad", msg: "more than the limit"},
		{name: "unused dimension", edit: func(c *spec.Case) { c.Shape.N = 3 }, field: "shape.n", msg: "3, want 0: op rmsnorm does not read it"},
		{name: "unused kv_lens", edit: func(c *spec.Case) { c.Shape.KVLens = []int{4} }, field: "shape.kv_lens", msg: "op rmsnorm does not read it"},
		{name: "missing dimension", edit: func(c *spec.Case) { c.Shape.Hidden = 0 }, field: "shape.hidden", msg: "0, op rmsnorm needs >= 1"},
		{name: "row outside", edit: func(c *spec.Case) { c.Rel.Row = 1 }, field: "rel.row", msg: "1 outside the batch of 1"},
		{name: "position outside", edit: func(c *spec.Case) { c.Rel.Position = 3 }, field: "rel.position", msg: "3 outside the other batch of 3"},
		{name: "pad of another relation", edit: func(c *spec.Case) { c.Rel.Pad = 9 }, field: "rel.pad", msg: "belongs to padding only"},
		{name: "pad not above the rows", edit: func(c *spec.Case) {
			c.Relation, c.Rel = spec.RelPadding, spec.RelParams{Pad: 1, Filler: "zeros"}
		}, field: "rel.pad", msg: "1, want more than the 1 rows"},
		{name: "unknown filler", edit: func(c *spec.Case) {
			c.Relation, c.Rel = spec.RelPadding, spec.RelParams{Pad: 2, Filler: "ones"}
		}, field: "rel.filler", msg: `unknown filler "ones"`},
		{name: "mask of another relation", edit: func(c *spec.Case) { c.Rel.Mask = []int{0} }, field: "rel.mask", msg: "belongs to logprob_parity only"},
		{name: "mask not ascending", edit: func(c *spec.Case) {
			c.Op, c.Relation, c.Eps, c.Shape, c.Rel = spec.OpLogProb, spec.RelLogProbParity, 0, spec.Shape{Rows: 4, Vocab: 8}, spec.RelParams{Mask: []int{2, 2}}
		}, field: "rel.mask[1]", msg: "want ascending rows"},
		{name: "gqa", edit: func(c *spec.Case) {
			c.Op, c.Eps, c.Shape = spec.OpAttnDecode, 0, spec.Shape{Rows: 1, KV: 4, Heads: 6, KVHeads: 4, HeadDim: 64}
		}, field: "shape.heads", msg: "6 is not a multiple of kv_heads 4"},
		{name: "negative eps", edit: func(c *spec.Case) { c.Eps = -1 }, field: "eps", msg: "want a finite value >= 0"},
		{name: "no dist", edit: func(c *spec.Case) { c.Dist = "" }, field: "dist", msg: `unknown distribution ""`},
		{name: "transformer op", edit: func(c *spec.Case) { c.Op = spec.OpTransformer }, field: "op", msg: "checked by its own route"},
		{name: "model with a filler", edit: func(c *spec.Case) {
			*c = spec.Case{Version: spec.CaseVersion, Op: spec.OpModel, Relation: spec.RelPathParity, Targets: []string{"exec:m.transformer"},
				Shape: spec.Shape{Rows: 1, Hidden: 64, N: 9, Vocab: 21, Seqs: 4, SeqLen: 37, Heads: 8, KVHeads: 2, HeadDim: 16},
				In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Rel: spec.RelParams{Filler: "nan"}}
		}, field: "rel.filler", msg: "not read by op model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			shrinkErr := c.Validate()
			// the file as another build or a hand would write it: Encode
			// refuses an invalid case
			m := encodeRaw(t, NewFile(base(), nil, spec.Env{}, ""))
			m["case"] = c
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, fileErr := Decode("x.json", data)
			if tc.field == "" {
				if fileErr != nil || shrinkErr != nil {
					t.Fatalf("a valid case refused: corpus %v, shrinker %v", fileErr, shrinkErr)
				}
				return
			}
			var fe *spec.FieldError
			if !errors.As(shrinkErr, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("shrinker: %v, want %s: ...%s...", shrinkErr, tc.field, tc.msg)
			}
			want := "x.json: case." + tc.field + ": "
			if fileErr == nil || !strings.Contains(fileErr.Error(), want) || !strings.Contains(fileErr.Error(), tc.msg) {
				t.Errorf("corpus: %v, want %q and %q", fileErr, want, tc.msg)
			}
			if fe != nil && fileErr != nil && !strings.Contains(fileErr.Error(), fe.Msg) {
				t.Errorf("corpus says %q, the shrinker %q", fileErr, fe.Msg)
			}
		})
	}
}
