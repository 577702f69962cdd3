package shrink

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
)

func rmsnorm(rows, hidden int, rel string) spec.Case {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: rel, Targets: []string{"t"}, Shape: spec.Shape{Rows: rows, Hidden: hidden},
		In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistHeavy, Seed: 77}
	return c
}

// guard wraps a predicate so that the test fails on any invalid candidate.
func guard(t *testing.T, f func(spec.Case) bool) func(spec.Case) (bool, error) {
	return func(c spec.Case) (bool, error) {
		if err := c.Validate(); err != nil {
			t.Fatalf("shrink tried an invalid case %+v: %v", c, err)
		}
		return f(c), nil
	}
}

func TestShrinkOnsets(t *testing.T) {
	bi := func(rows, hidden, batch, pos int) spec.Case {
		c := rmsnorm(rows, hidden, spec.RelBatchInvariance)
		c.Rel = spec.RelParams{Batch: batch, Position: pos, PermSeed: 99}
		return c
	}
	decode := func(rows, kv int) spec.Case {
		return spec.Case{Version: 1, GenVersion: 1, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: rows, KV: kv, Heads: 8, KVHeads: 2, HeadDim: 128},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 5}
	}
	pad := rmsnorm(100, 2048, spec.RelPadding)
	pad.Rel = spec.RelParams{Pad: 4548, Filler: "nan"}
	tests := []struct {
		name  string
		in    spec.Case
		fails func(spec.Case) bool
		want  func(spec.Case) bool
		desc  string
	}{
		{"batch%32==0", bi(1, 4096, 928, 500),
			func(c spec.Case) bool { return c.Rel.Batch%32 == 0 },
			func(c spec.Case) bool {
				return c.Rel.Batch == 32 && c.Shape.Rows == 1 && c.Shape.Hidden == 1 && c.Rel.Position == 0 &&
					c.Dist == spec.DistNormal && c.Rel.PermSeed == 0 && c.Seed == 0
			}, "batch 32, rows 1, hidden 1, position 0, normal, no perm, seed 0"},
		{"rows%32==1 (the other class)", bi(2273, 64, 1, 0),
			func(c spec.Case) bool { return c.Shape.Rows%32 == 1 && c.Shape.Rows > 1 },
			func(c spec.Case) bool { return c.Shape.Rows == 33 }, "rows 33"},
		{"rows%32==3", bi(2275, 64, 1, 0),
			func(c spec.Case) bool { return c.Shape.Rows%32 == 3 && c.Shape.Rows > 3 },
			func(c spec.Case) bool { return c.Shape.Rows == 35 }, "rows 35"},
		{"rows>=300 threshold (bisection)", bi(4548, 512, 1, 0),
			func(c spec.Case) bool { return c.Shape.Rows >= 300 },
			func(c spec.Case) bool { return c.Shape.Rows == 300 && c.Shape.Hidden == 1 }, "rows 300"},
		{"rows>=256 and hidden>=96", bi(2274, 4096, 7, 3),
			func(c spec.Case) bool { return c.Shape.Rows >= 256 && c.Shape.Hidden >= 96 },
			func(c spec.Case) bool { return c.Shape.Rows == 256 && c.Shape.Hidden == 96 && c.Rel.Batch == 1 },
			"rows 256, hidden 96, batch 1"},
		{"kv>=49", decode(4, 4000),
			func(c spec.Case) bool { return c.Shape.KV >= 49 },
			func(c spec.Case) bool {
				return c.Shape.KV == 49 && c.Shape.Rows == 1 && c.Shape.Heads == 1 && c.Shape.KVHeads == 1 && c.Shape.HeadDim == 64
			}, "kv 49, rows 1, heads 1, kv_heads 1, head_dim 64"},
		{"requests*heads<132 keeps GQA", decode(40, 100),
			func(c spec.Case) bool { return c.Shape.Heads > c.Shape.KVHeads && c.Shape.KV > 64 },
			func(c spec.Case) bool {
				return c.Shape.Heads == 2 && c.Shape.KVHeads == 1 && c.Shape.KV == 65 && c.Shape.Rows == 1
			}, "heads 2, kv_heads 1, kv 65, rows 1"},
		{"nan filler leaks", pad,
			func(c spec.Case) bool { return c.Rel.Filler == "nan" && c.Rel.Pad%64 == 4 },
			func(c spec.Case) bool { return c.Rel.Pad == 4 && c.Shape.Rows == 1 && c.Rel.Filler == "nan" },
			"pad 4, rows 1, nan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st, err := Shrink(context.Background(), tt.in, guard(t, tt.fails))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.fails(got) {
				t.Fatalf("result %+v does not fail", got)
			}
			if !tt.want(got) {
				t.Fatalf("shrunk to %+v, want %s (stats %+v)", got, tt.desc, st)
			}
			if st.Steps == 0 || st.Tried <= st.Steps {
				t.Errorf("stats %+v: want steps > 0 and more tries than steps", st)
			}
			t.Logf("%s: %d steps, %d tries, %v", tt.name, st.Steps, st.Tried, st.Elapsed)
		})
	}
}

func TestShrinkLimits(t *testing.T) {
	c := rmsnorm(2274, 4096, spec.RelOracleParity)
	only := func(x spec.Case) (bool, error) {
		return reflect.DeepEqual(x.Shape, c.Shape) && x.Seed == c.Seed && x.Dist == c.Dist, nil
	}

	got, st, err := Options{MaxTries: 10}.Shrink(context.Background(), c, only)
	if err != nil || st.Tried != 10 || !reflect.DeepEqual(got.Shape, c.Shape) {
		t.Errorf("MaxTries 10: got %+v, %+v, %v; want the input back after exactly 10 tries", got.Shape, st, err)
	}

	got, st, err = Shrink(context.Background(), c, only)
	if err != nil || !reflect.DeepEqual(got.Shape, c.Shape) || st.Steps != 0 {
		t.Errorf("nothing smaller fails: got %+v, %+v, %v; want the input, 0 steps", got.Shape, st, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, _, err = Shrink(ctx, c, func(spec.Case) (bool, error) {
		if n++; n == 5 {
			cancel()
		}
		return false, nil
	})
	if n != 1 || !errors.Is(err, ErrNotFailing) {
		t.Errorf("a passing case: %d calls, err %v; want 1 call and ErrNotFailing", n, err)
	}
	n = 0
	_, _, err = Shrink(ctx, c, func(spec.Case) (bool, error) {
		if n++; n == 3 {
			cancel()
		}
		return true, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v, want context.Canceled", err)
	}

	// errors count as passing and are counted
	boom := fmt.Errorf("target fell over")
	got, st, err = Shrink(context.Background(), c, func(x spec.Case) (bool, error) {
		if x.Shape.Rows < 100 {
			return false, boom
		}
		return x.Shape.Rows >= 100, nil
	})
	if err != nil || got.Shape.Rows != 100 || st.Errors == 0 {
		t.Errorf("with errors below 100 rows: got rows %d, %+v, %v; want rows 100 and Errors > 0", got.Shape.Rows, st, err)
	}

	data := c
	data.Data = &spec.Data{Tensors: map[string][]string{"x": {"3f80"}}}
	got, _, err = Shrink(context.Background(), data, func(spec.Case) (bool, error) { return true, nil })
	if err != nil || !reflect.DeepEqual(got.Shape, c.Shape) {
		t.Errorf("explicit data: got %+v, %v; want the case unchanged", got.Shape, err)
	}
}

// TestShrinkRandomCases shrinks generated cases of every op and relation
// under a predicate that depends on several fields, checking validity of
// every candidate and that the result fails and is no larger.
func TestShrinkRandomCases(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			for i := 0; i < 5; i++ {
				c := gen.Case(r, op, rel)
				e0 := c.Elements()
				rows0 := c.BatchRows()
				fails := func(x spec.Case) bool {
					return x.Elements() >= e0/3 && x.BatchRows() >= (rows0+1)/2
				}
				got, _, err := Options{MaxTries: 3000}.Shrink(context.Background(), c, guard(t, fails))
				if err != nil {
					t.Fatalf("%s/%s: %v", op, rel, err)
				}
				if !fails(got) || got.Elements() > e0 || got.BatchRows() > rows0 {
					t.Fatalf("%s/%s: %+v from %+v", op, rel, got, c)
				}
			}
		}
	}
}

// TestHoldInner shrinks cases at a model's shape with and without
// HoldInner: held, only the batch and sequence dimensions move (to the
// onset) and the inner sizes and dtypes stay; not held, the inner sizes
// shrink too.
func TestHoldInner(t *testing.T) {
	bi := rmsnorm(900, 4096, spec.RelBatchInvariance)
	bi.Rel = spec.RelParams{Batch: 2274, Position: 7}
	decode := spec.Case{Version: 1, GenVersion: 1, Op: spec.OpAttnDecode, Relation: spec.RelPathParity,
		Shape: spec.Shape{Rows: 40, KV: 700, Heads: 32, KVHeads: 8, HeadDim: 128},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 5}
	tests := []struct {
		name  string
		c     spec.Case
		fails func(spec.Case) bool
		held  spec.Shape // the minimal shape with HoldInner
		small func(spec.Shape) bool
	}{
		{"rmsnorm rows >= 300", bi, func(c spec.Case) bool { return max(c.Shape.Rows, c.Rel.Batch) >= 300 },
			spec.Shape{Rows: 1, Hidden: 4096}, func(s spec.Shape) bool { return s.Hidden < 4096 }},
		{"decode kv >= 321", decode, func(c spec.Case) bool { return c.Shape.KV >= 321 },
			spec.Shape{Rows: 1, KV: 321, Heads: 32, KVHeads: 8, HeadDim: 128},
			func(s spec.Shape) bool { return s.Heads < 32 || s.HeadDim < 128 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Options{HoldInner: true}.Shrink(context.Background(), tt.c, guard(t, tt.fails))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Shape, tt.held) || got.In != tt.c.In || got.Out != tt.c.Out || got.Eps != tt.c.Eps {
				t.Errorf("held: shape %+v %s -> %s eps %g, want %+v at the case's dtypes", got.Shape, got.In, got.Out, got.Eps, tt.held)
			}
			past, _, err := Options{}.Shrink(context.Background(), tt.c, guard(t, tt.fails))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.small(past.Shape) {
				t.Errorf("not held: shape %+v, want the inner sizes shrunk", past.Shape)
			}
		})
	}
}
