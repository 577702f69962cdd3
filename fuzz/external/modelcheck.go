package external

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var (
	modelsMu sync.Mutex
	models   = map[string]*Model{}
)

// LookupModel returns the started model route named name.
func LookupModel(name string) (*Model, bool) {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	m, ok := models[name]
	return m, ok
}

// IsModel reports whether name is a started model route.
func IsModel(name string) bool { _, ok := LookupModel(name); return ok }

// SplitModels separates the model routes among names (IsModel: adapters
// whose hello op is "transformer") from the other targets, each in order.
func SplitModels(names []string) (models, others []string) {
	for _, n := range names {
		if IsModel(n) {
			models = append(models, n)
		} else {
			others = append(others, n)
		}
	}
	return models, others
}

// CheckModel runs model-route case c on its route and returns nil when the
// relation holds:
//
//   - logprob_parity (also when Relation is empty): at every compared
//     position (rel.mask, else the positions the engine reported), the
//     trainer's log-prob (Out) and the engine's (fp32) have the same bits
//     in Compare (default Out).
//   - path_parity: that, and every tap site's values have the same bits in
//     both paths at every reported position.
//
// Comparing in another dtype than Out, or positions the engine never
// reported, is a "misuse" finding, as in fuzz/transformer. A mismatch
// names in Message the first tap site (in the adapter's execution order)
// where a position differs.
//
// A finding's Site is that tap site (Layer -1: the adapter names it).
//
// It runs the plan once, as fuzz.Check runs a single-op case: the drift map
// over the number of requests decoded together (ten more runs) is the
// model source's Map, made for the minimal case a campaign keeps and
// recorded with it, so that repro and corpus recheck cost one model run
// per case. ModelSource passes it to fuzz.Check.
//
// A route that crashes on the case (target.ErrTargetCrashed) gives a
// finding of kind crash whose repro line carries the route's --exec.
func CheckModel(ctx context.Context, c spec.Case) (*spec.Finding, error) {
	f, err := checkModel(ctx, c, false)
	if err != nil && errors.Is(err, target.ErrTargetCrashed) && ctx.Err() == nil {
		f = &spec.Finding{Case: c, Kind: spec.KindCrash, Relation: c.Relation, TargetA: c.Targets[0], Error: err.Error(),
			Repro: modelRepro(c), Env: spec.HostEnv(), FoundAt: time.Now().UTC()}
		f.Signature = spec.Signature(*f)
		return f, nil
	}
	return f, err
}

// checkModel is CheckModel; it computes the drift map only when mapDrift
// is set.
func checkModel(ctx context.Context, c spec.Case, mapDrift bool) (*spec.Finding, error) {
	start := time.Now()
	if err := ValidateModelCase(c); err != nil {
		return nil, err
	}
	rel := c.Relation
	if rel == "" {
		rel = spec.RelLogProbParity
	}
	m, ok := LookupModel(c.Targets[0])
	if !ok {
		return nil, fmt.Errorf("model case: target %s: no such model route was started (pass its adapter with --exec)", c.Targets[0])
	}
	p, err := PlanOf(c)
	if err != nil {
		return nil, err
	}
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return nil, fmt.Errorf("model case: compare: %w", err)
	}
	r, err := m.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	reported := transformer.ReportedMask(p.Requests)
	mask := c.Rel.Mask
	if len(mask) == 0 {
		mask = reported
	}
	for _, q := range mask {
		if q < 0 || q >= len(r.Train) {
			return nil, fmt.Errorf("model case: rel.mask position %d outside the plan's %d positions", q, len(r.Train))
		}
	}
	f := modelMisuse(p, r, cmp, mask, reported)
	if f == nil {
		f = compareModelLogProbs(p, r, cmp, mask)
	}
	div := firstTapDivergence(p, r)
	if f == nil && div != nil && rel == spec.RelPathParity {
		f = &spec.Finding{Kind: "mismatch", Row: div.pos, Col: div.col,
			A: value(div.dtype, div.a), B: value(div.dtype, div.b), ULPs: oracle.ULPDistance(div.dtype, div.a, div.b).ULPs,
			RowsDiffering: div.positions,
			Message:       fmt.Sprintf("log-probs agree in %s, but a tap differs: the drift is hidden by the rounding so far", cmp)}
	}
	if f == nil {
		return nil, nil
	}
	if div != nil {
		f.Site = &spec.Site{Layer: -1, Op: div.site}
	}
	if f.Kind == "mismatch" {
		if div != nil {
			f.Message += "; " + div.String(p)
			if mapDrift { // not while shrinking: the minimal case gets its map
				dm, err := modelDriftMap(ctx, m, p, div)
				switch {
				case err == nil:
					f.DriftMap = dm
					f.Message += "; drift map over the requests decoded together: " + trainClasses(dm)
				case ctx.Err() == nil:
					f.Message += fmt.Sprintf("; no drift map: %v", err)
				}
			}
		} else {
			f.Message += "; every tap agrees: the difference enters after the last tap site (the log-prob itself)"
		}
	}
	f.Case = c
	f.Relation = rel
	f.TargetA, f.TargetB = c.Targets[0], c.Targets[0]
	f.Repro = modelRepro(c)
	f.Env = spec.HostEnv()
	f.FoundAt = time.Now().UTC()
	f.ToMinimal = spec.Duration(time.Since(start))
	f.Signature = spec.Signature(*f)
	return f, nil
}

// modelRepro is the repro line of model case c: bitparity run with the
// --exec of its route and --case.
func modelRepro(c spec.Case) string {
	return spec.ReproLine(c, Commands(c.Targets...)...)
}

func value(dt oracle.DType, v float32) spec.Value {
	return spec.Value{Hex: oracle.Hex(dt, v), Dec: oracle.Decimal(oracle.Round(dt, v))}
}

// compareModelLogProbs returns a mismatch finding (A the trainer, B the
// engine) when a compared position differs in cmp, or nil.
func compareModelLogProbs(p ModelPlan, r *ModelRun, cmp oracle.DType, mask []int) *spec.Finding {
	var f *spec.Finding
	n := 0
	for _, q := range mask {
		a, b := r.Train[q], r.Infer[q]
		if oracle.ToBits(cmp, a) == oracle.ToBits(cmp, b) {
			continue
		}
		n++
		if f == nil {
			d := oracle.ULPDistance(cmp, a, b)
			f = &spec.Finding{Kind: "mismatch", Row: q, A: value(cmp, a), B: value(cmp, b), ULPs: d.ULPs, SignedZero: d.SignedZero}
		}
	}
	if f == nil {
		return nil
	}
	f.RowsDiffering = n
	f.Message = fmt.Sprintf("train (A, packed, teacher forcing) and inference (B, prefill + KV-cached decode) log-probs differ in %s at %d of %d compared positions; first: %s",
		cmp, n, len(mask), where(p.Requests, f.Row))
	return f
}

// modelMisuse flags a comparison in another dtype than the training dtype
// and compared positions the engine never reported.
func modelMisuse(p ModelPlan, r *ModelRun, cmp oracle.DType, mask, reported []int) *spec.Finding {
	var msgs []string
	f := &spec.Finding{Kind: "misuse"}
	if cmp != p.Out {
		msgs = append(msgs, fmt.Sprintf("misuse: log-probs compared in %s, but the declared training dtype is %s: the trainer's log-probs carry only %s's precision, so a comparison in %s reports the rounding to %s as drift. Compare in the training dtype: set compare to %s or leave it empty",
			cmp, p.Out, p.Out, cmp, p.Out, p.Out))
	}
	rep := map[int]bool{}
	for _, q := range reported {
		rep[q] = true
	}
	var never []int
	for _, q := range mask {
		if !rep[q] {
			never = append(never, q)
		}
	}
	if len(never) > 0 {
		f.Row = never[0]
		f.A, f.B = value(cmp, r.Train[f.Row]), value(cmp, r.Infer[f.Row])
		msgs = append(msgs, fmt.Sprintf("misuse: %d compared positions were never reported by the engine (first: %s); its buffer holds +0 there, a zero-fill, not a log-prob. Compare only the reported positions (leave rel.mask empty)",
			len(never), where(p.Requests, never[0])))
	}
	if len(msgs) == 0 {
		return nil
	}
	f.Message = strings.Join(msgs, "; ")
	return f
}

// where names a response position.
func where(reqs []transformer.Request, pos int) string {
	base := 0
	for r, q := range reqs {
		if pos < base+q.Response() {
			j := pos - base
			return fmt.Sprintf("request %d response token %d (token %d)", r, j, q.Prompt+j)
		}
		base += q.Response()
	}
	return fmt.Sprintf("position %d", pos)
}

// tapDivergence is the first tap site where a reported position differs.
type tapDivergence struct {
	site      string
	index     int // into the sites
	pos       int // response position (positionBase order)
	col       int
	a, b      float32
	dtype     oracle.DType
	positions int // reported positions that differ at the site
	reported  int
}

func (d *tapDivergence) String(p ModelPlan) string {
	r, j := requestOf(p.Requests, d.pos)
	how := "a decode step"
	if j == 0 {
		how = "the prefill of its prompt"
	}
	return fmt.Sprintf("first divergence at %s (tap %d): %s, column %d: train %s (%s) vs infer %s (%s) in %s; %d of %d reported positions differ there; the trainer ran the token in a packed batch of %d tokens, the engine in %s (request %d arrives at step %d)",
		d.site, d.index, where(p.Requests, d.pos), d.col, oracle.Hex(d.dtype, d.a), oracle.Decimal(d.a), oracle.Hex(d.dtype, d.b), oracle.Decimal(d.b),
		d.dtype, d.positions, d.reported, packedTokens(p.Requests), how, r, p.Requests[r].Arrive)
}

func requestOf(reqs []transformer.Request, pos int) (r, j int) {
	base := 0
	for r, q := range reqs {
		if pos < base+q.Response() {
			return r, pos - base
		}
		base += q.Response()
	}
	return len(reqs) - 1, 0
}

func packedTokens(reqs []transformer.Request) int {
	n := 0
	for _, q := range reqs {
		n += len(q.Tokens)
	}
	return n
}

// firstTapDivergence walks the sites in the adapter's execution order and
// returns the first where a reported position differs (bitwise), or nil.
func firstTapDivergence(p ModelPlan, r *ModelRun) *tapDivergence {
	reported := transformer.ReportedMask(p.Requests)
	for i, site := range r.Sites {
		w := r.Widths[i]
		var d *tapDivergence
		for k, pos := range reported {
			for col := 0; col < w; col++ {
				a, b := r.TapsTrain[i][k*w+col], r.TapsInfer[i][k*w+col]
				if math.Float32bits(a) == math.Float32bits(b) {
					continue
				}
				if d == nil {
					d = &tapDivergence{site: site, index: i, pos: pos, col: col, a: a, b: b, dtype: r.TapDTypes[i], reported: len(reported)}
				}
				d.positions++
				break
			}
		}
		if d != nil {
			return d
		}
	}
	return nil
}

// modelDriftMap sweeps the number of requests the engine decodes together:
// for b in 1..16, b copies of the request of the divergent position, all
// arriving at step 0 (so every prefill and decode batch has b live rows);
// each b's class is the digest of the first copy's engine log-probs and
// its taps at the divergent site, so a batch-size policy shows as classes
// over "batch".
func modelDriftMap(ctx context.Context, m *Model, p ModelPlan, d *tapDivergence) (*spec.DriftMap, error) {
	r, _ := requestOf(p.Requests, d.pos)
	watched := p.Requests[r]
	watched.Arrive = 0
	values := []int{1, 2, 3, 4, 5, 6, 7, 8, 12, 16}
	return driftmap.Sweep(ctx, "batch", values, func(b int) (string, error) {
		q := p
		q.Requests = nil
		for range b {
			q.Requests = append(q.Requests, watched)
		}
		run, err := m.Run(ctx, q)
		if err != nil {
			return "", err
		}
		h := driftmap.NewDigest()
		h.Float32s(run.Infer[:watched.Reported])
		same := true // the first copy's engine values equal the trainer's
		for j := 0; j < watched.Reported; j++ {
			same = same && oracle.ToBits(p.Out, run.Train[j]) == oracle.ToBits(p.Out, run.Infer[j])
		}
		for i, s := range run.Sites {
			if s != d.site {
				continue
			}
			n := watched.Reported * run.Widths[i]
			h.Float32s(run.TapsInfer[i][:n])
			for k, v := range run.TapsInfer[i][:n] {
				same = same && math.Float32bits(v) == math.Float32bits(run.TapsTrain[i][k])
			}
		}
		if same {
			return h.Label() + " " + agreesWithTrain, nil
		}
		return h.Label(), nil
	})
}

// agreesWithTrain marks the digest of a drift map class whose engine
// values equal the training path's.
const agreesWithTrain = "(= train)"

// trainClasses says which classes of a model drift map agree with the
// training path.
func trainClasses(dm *spec.DriftMap) string {
	var same []string
	for _, c := range dm.Classes {
		if strings.HasSuffix(c.Digest, agreesWithTrain) {
			same = append(same, c.Label)
		}
	}
	if len(same) == 0 {
		return "no batch size agrees with the training path"
	}
	return "class " + strings.Join(same, ", ") + " agrees with the training path"
}
