package external

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// ModelCase turns a generated transformer case (transformer.Gen) into a
// case of the model route named target: same shape, dtypes, eps, seed and
// pad; the engine's reported positions compared (rel.mask empty).
func ModelCase(c spec.Case, target string) spec.Case {
	c.Op = ModelOp
	c.Targets = []string{target}
	c.Shape.KV = 0
	c.Rel = spec.RelParams{Pad: c.Rel.Pad}
	return c
}

// RouteGrace is a model route campaign's grace after its duration: a
// route's map re-runs the model for ten batch sizes, 10 s beyond a drift
// map's 30 s (fuzz.MinimizeOptions.MapBudget).
const RouteGrace = 40 * time.Second

// RouteCampaign is the one campaign of the model routes names for d: each
// route's source (ModelSource) over relations, in an equal time share
// (fuzz.Source.Share), so the routes interleave; one worker; RouteGrace to
// shrink and map what it found last.
func RouteCampaign(names []string, relations []string, d time.Duration, seed uint64) (*fuzz.Campaign, error) {
	if len(names) == 0 {
		return nil, errors.New("no model route to run")
	}
	c := &fuzz.Campaign{Duration: d, Seed: seed, Workers: 1, Grace: RouteGrace, Targets: names}
	for _, name := range names {
		src, err := ModelSource(name, relations)
		if err != nil {
			return nil, err
		}
		src.Share = 1 / float64(len(names))
		c.Sources = append(c.Sources, src)
	}
	return c, nil
}

// ModelSource is model route name as a composite source of fuzz.Campaign,
// fuzz.Check and fuzz.Minimize: one job per relation (logprob_parity,
// path_parity, or those of relations; none: both), named after the route,
// whose cases are batch compositions and lengths from transformer.Gen
// (small models; long requests, KV past 48; 256 packed tokens and hidden
// 256) in turn. A job keeps drawing after a finding and keeps one per
// kind and first divergent tap site (fuzz.Job.Repeat). Its Check is
// CheckModel (any started route the case names); a finding is shrunk by
// modelShrinkSteps (fewer requests, shorter requests, fewer layers,
// narrower model) while it keeps its kind and site, then mapped over the
// number of requests decoded together (modelDriftMap). It fails when no
// route named name was started or a relation is not one a route runs.
func ModelSource(name string, relations []string) (*fuzz.Source, error) {
	m, ok := LookupModel(name)
	if !ok {
		return nil, fmt.Errorf("model route %s: no such model route was started (pass its adapter with --exec)", name)
	}
	if len(relations) == 0 {
		relations = []string{spec.RelLogProbParity, spec.RelPathParity}
	}
	gens := []transformer.Gen{{}, {MinSeqLen: 56}, {MinTokens: 256, MinHidden: 256}}
	src := ModelChecker()
	src.Name = name
	for _, r := range relations {
		if r != spec.RelLogProbParity && r != spec.RelPathParity {
			return nil, fmt.Errorf("model route %s: relation %q: a model route runs %s and %s", name, r, spec.RelLogProbParity, spec.RelPathParity)
		}
		src.Jobs = append(src.Jobs, fuzz.Job{Name: name, Relation: r, Invariant: m.t.info.Invariant, Repeat: true,
			Draw: func(seed uint64) (spec.Case, bool) {
				c := ModelCase(gens[seed%uint64(len(gens))].Case(seed), name)
				c.Relation = r
				return c, true
			}})
	}
	return src, nil
}

// Composites are the composite ops' sources a case may need (fuzz.Check
// takes them among its targets): the end-to-end transformer (any backends
// the case names) and the model routes started (ModelChecker).
func Composites() []target.Target {
	return []target.Target{transformer.Source("", ""), ModelChecker()}
}

// ModelChecker is the model routes' source without jobs: what fuzz.Check
// and fuzz.Minimize take to check, shrink and map a case of any started
// route (a replay, a repro).
func ModelChecker() *fuzz.Source {
	return &fuzz.Source{Name: string(ModelOp), Op: ModelOp, Check: CheckModel, Shrink: modelShrinkSteps, Map: mapModel}
}

// mapModel maps the drift of model finding f: it checks f's case again
// with the drift map over the number of requests decoded together
// (modelDriftMap), takes that map and says in Message which classes agree
// with the training path.
func mapModel(ctx context.Context, f *spec.Finding) error {
	if f.Kind != spec.KindMismatch {
		return nil
	}
	g, err := checkModel(ctx, f.Case, true)
	switch {
	case err != nil:
		return err
	case g == nil:
		return errors.New("the case no longer shows the finding")
	case g.DriftMap == nil:
		return errors.New("the sweep over the requests decoded together made none")
	}
	f.DriftMap = g.DriftMap
	f.Message += "; drift map over the requests decoded together: " + trainClasses(g.DriftMap)
	return nil
}

// modelShrinkSteps are the smaller neighbours of model case c, most
// reducing first, in one group: fuzz.Minimize takes the first that still
// fails and starts over (greedy descent).
func modelShrinkSteps(c spec.Case) [][]spec.Case {
	var out []spec.Case
	add := func(mod func(s *spec.Shape) bool) {
		d := c
		if mod(&d.Shape) {
			out = append(out, d)
		}
	}
	add(func(s *spec.Shape) bool { s.Seqs /= 2; return s.Seqs >= 1 })
	add(func(s *spec.Shape) bool { s.Seqs--; return s.Seqs >= 1 })
	add(func(s *spec.Shape) bool { s.SeqLen /= 2; return s.SeqLen >= 2 })
	add(func(s *spec.Shape) bool { s.Rows--; return s.Rows >= 1 })
	add(func(s *spec.Shape) bool { s.Hidden /= 2; return s.Hidden >= 8 })
	add(func(s *spec.Shape) bool { s.N /= 2; return s.N >= 8 })
	add(func(s *spec.Shape) bool { s.Vocab /= 2; return s.Vocab >= 16 })
	return [][]spec.Case{out}
}
