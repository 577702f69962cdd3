package external

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

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

// ModelCampaign fuzzes one model route: batch compositions and lengths from
// transformer.Gen (small models; long requests, KV past 48; 256 packed
// tokens and hidden 256), taking its relations in turn. A
// finding is shrunk (fewer requests, shorter requests, fewer layers,
// narrower model) while it keeps its kind and first divergent site, then
// gets its drift map. One finding is kept per kind, relation and site.
// The zero value of each field but Target is valid.
type ModelCampaign struct {
	Target   string
	Duration time.Duration // 0: 10 s
	Seed     uint64
	MaxCases int64 // 0: no limit
	// Relations: logprob_parity, path_parity or both, taken in turn
	// (empty: both).
	Relations []string
	NoShrink  bool
	// OnFound is called with each finding kept as first found, before it
	// is shrunk (a caller stores it then, so a kill loses nothing found);
	// OnFinding with its final form, shrunk and mapped (its Original, when
	// shrinking changed the case, is the case OnFound saw).
	OnFound, OnFinding func(spec.Finding)
}

// Run runs the campaign and returns its result (one target).
func (mc ModelCampaign) Run(ctx context.Context) (*spec.Result, error) {
	m, ok := LookupModel(mc.Target)
	if !ok {
		return nil, fmt.Errorf("model campaign: %s is not a started model route", mc.Target)
	}
	d := mc.Duration
	if d <= 0 {
		d = 10 * time.Second
	}
	start := time.Now()
	deadline := start.Add(d)
	res := &spec.Result{Version: spec.ResultVersion, Started: start.UTC(), Seed: mc.Seed, Env: spec.HostEnv()}
	rels := mc.Relations
	if len(rels) == 0 {
		rels = []string{spec.RelLogProbParity, spec.RelPathParity}
	}
	for _, r := range rels {
		if r != spec.RelLogProbParity && r != spec.RelPathParity {
			return nil, fmt.Errorf("model campaign: relation %q: a model route runs %s and %s", r, spec.RelLogProbParity, spec.RelPathParity)
		}
	}
	stats := spec.TargetStats{Target: mc.Target, Invariant: m.t.info.Invariant, Op: ModelOp, Relations: rels}
	gens := []transformer.Gen{{}, {MinSeqLen: 56}, {MinTokens: 256, MinHidden: 256}}
	rng := rand.New(rand.NewPCG(mc.Seed, 0x6d6f64656c))
	kept := map[string]bool{}
	for i := int64(0); ctx.Err() == nil && time.Now().Before(deadline) && (mc.MaxCases == 0 || i < mc.MaxCases); i++ {
		c := ModelCase(gens[i%int64(len(gens))].Case(rng.Uint64()), mc.Target)
		c.Relation = rels[i%int64(len(rels))]
		f, site, err := checkModel(ctx, c, false)
		if ctx.Err() != nil {
			break
		}
		res.Cases++
		stats.Cases++
		switch {
		case errors.Is(err, ErrUnsupported):
			continue
		case errors.Is(err, target.ErrTargetCrashed):
			f = &spec.Finding{Case: c, Kind: "crash", Relation: c.Relation, TargetA: mc.Target, Error: err.Error(),
				Repro: modelRepro(c), Env: spec.HostEnv(), FoundAt: time.Now().UTC()}
			f.Signature = spec.Signature(*f)
		case err != nil:
			return res, err
		}
		if f == nil {
			continue
		}
		key := string(f.Kind) + "|" + f.Relation + "|" + site
		if kept[key] {
			continue
		}
		kept[key] = true
		f.Elapsed = spec.Duration(time.Since(start))
		f.CasesBefore = res.Cases
		if mc.OnFound != nil {
			mc.OnFound(*f)
		}
		if f.Kind == "mismatch" {
			f = mc.minimize(ctx, f, site, deadline.Add(10*time.Second))
		}
		res.Findings = append(res.Findings, *f)
		stats.Findings++
		if mc.OnFinding != nil {
			mc.OnFinding(*f)
		}
	}
	res.Duration = spec.Duration(time.Since(start))
	res.Targets = []spec.TargetStats{stats}
	return res, nil
}

// minimize shrinks f's case greedily (each step must keep a finding of the
// same kind at the same first divergent site) until no step helps, 24
// model runs or the deadline (the campaign's end plus 10 s), then checks the minimal case once more with
// its drift map.
func (mc ModelCampaign) minimize(ctx context.Context, f *spec.Finding, site string, deadline time.Time) *spec.Finding {
	cur := f.Case
	tries, steps := 0, 0
	if !mc.NoShrink {
		for improved := true; improved && tries < 24; {
			improved = false
			for _, cand := range shrinkSteps(cur) {
				if tries >= 24 || ctx.Err() != nil || time.Now().After(deadline) {
					break
				}
				tries++
				g, s, err := checkModel(ctx, cand, false)
				if err == nil && g != nil && g.Kind == f.Kind && s == site {
					cur, improved = cand, true
					steps++
					break
				}
			}
		}
	}
	g, _, err := checkModel(ctx, cur, true)
	if err != nil || g == nil {
		g, _, err = checkModel(ctx, f.Case, true) // flaky at the minimal case: keep the original
		if err != nil || g == nil {
			return f
		}
		steps = 0
	}
	if steps > 0 {
		orig := f.Case
		g.Original = &orig
	}
	g.ShrinkSteps = steps
	g.Elapsed, g.CasesBefore = f.Elapsed, f.CasesBefore
	return g
}

// shrinkSteps are the smaller neighbours of c, most reducing first.
func shrinkSteps(c spec.Case) []spec.Case {
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
	return out
}
