package external

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// HelloModel is the op a model-route adapter declares in its hello: it
// runs a whole decoder through a training path and an inference path
// (docs/protocol.md, "The model route").
const HelloModel = "transformer"

// HelloOp is the op an adapter declares in its hello for a case or scan
// of op: a model route's (ModelOp) HelloModel, any other op's own name.
func HelloOp(op spec.Op) string {
	if op == ModelOp {
		return HelloModel
	}
	return string(op)
}

// Model is a model route: an adapter process that runs its decoder on a
// plan of requests twice, as a trainer (packed, teacher forcing) and as an
// inference engine (prefill, then KV-cached decode in padded batches), and
// returns both paths' log-probs and per-site taps.
type Model struct{ t *Target }

// Name is the route's target name (exec:NAME unless the harness named it).
func (m *Model) Name() string { return m.t.info.Name }

// Close ends the adapter.
func (m *Model) Close() error { return m.t.Close() }

// Hello returns the route's hello metadata (Target.Hello).
func (m *Model) Hello() map[string]string { return m.t.Hello() }

// Adapter is the route's identity as case files and certificates record
// it (Target.Adapter).
func (m *Model) Adapter() spec.Adapter { return m.t.Adapter() }

// ModelRequest is one request of a plan: its tokens (prompt then
// response), prompt length, arrival step and reported positions
// (transformer.Request).
type ModelRequest = transformer.Request

// ModelPlan is one model request: the decoder's configuration, the seed
// its adapter derives the weights from, the dtypes and the requests.
type ModelPlan struct {
	Layers, Hidden, FFN, Vocab, Heads, KVHeads, HeadDim int
	// Pad: the engine pads decode batches to a multiple of it (0: the
	// adapter's choice).
	Pad  int
	Seed uint64
	// In is the weights' and activations' dtype, Out the declared training
	// dtype of the trainer's log-probs.
	In, Out  oracle.DType
	Eps      float32
	Requests []ModelRequest
}

// Positions is the number of response positions of the plan.
func (p ModelPlan) Positions() int {
	n := 0
	for _, q := range p.Requests {
		n += q.Response()
	}
	return n
}

// ModelRun is a model route's answer to a plan. Train and Infer hold one
// log-prob per response position (request by request); Train's values are
// of the plan's Out dtype, Infer's fp32, +0 where the engine did not
// report. Sites lists the tap sites in execution order; TapsTrain[i] and
// TapsInfer[i] hold site i's values at the reported positions
// (transformer.ReportedMask order), Widths[i] per position, in
// TapDTypes[i] (widened to fp32 exactly).
type ModelRun struct {
	Train, Infer         []float32
	Sites                []string
	Widths               []int
	TapDTypes            []oracle.DType
	TapsTrain, TapsInfer [][]float32
}

// Run sends the plan to the adapter and returns its answer; errors are
// those of Target.Run (a crash, a hang or a broken frame wraps
// target.ErrTargetCrashed).
func (m *Model) Run(ctx context.Context, p ModelPlan) (*ModelRun, error) {
	if len(p.Requests) == 0 {
		return nil, fmt.Errorf("model %s: a plan without requests", m.Name())
	}
	var out *ModelRun
	err := m.t.roundTrip(ctx, modelReplyLimit(p), func(seq int) (*frame, error) { return modelFrame(p, seq) },
		func(rep *frame, seq int, name string) (err error) {
			out, err = decodeModelReply(rep, p, seq, name)
			return err
		})
	return out, err
}

// modelReplyLimit bounds the reply to plan p: the train and infer
// log-probs of every token, and for each tap site (at most 16 per layer and
// 4 more) a train and an infer tensor of every token, as wide as the
// model's widest activation, in fp32; plus replySlack for the header.
func modelReplyLimit(p ModelPlan) uint64 {
	var tokens uint64
	for _, q := range p.Requests {
		tokens += uint64(len(q.Tokens))
	}
	width := uint64(max(p.Hidden, p.FFN, p.Vocab, p.Heads*p.HeadDim, 1))
	sites := uint64(16*max(p.Layers, 0) + 4)
	return replySlack + 2*tokens*4 + 2*sites*tokens*width*4
}

// modelFrame is the request frame of plan p (docs/protocol.md, "The model
// route").
func modelFrame(p ModelPlan, seq int) (*frame, error) {
	meta := map[string]string{
		"frame": "request", "seq": strconv.Itoa(seq), "op": HelloModel,
		"in": p.In.String(), "out": p.Out.String(), "seed": strconv.FormatUint(p.Seed, 10), "taps": "true",
		"eps":      strconv.FormatFloat(float64(p.Eps), 'g', -1, 32),
		"eps_bits": fmt.Sprintf("%08x", math.Float32bits(p.Eps)),
	}
	for k, v := range map[string]int{"layers": p.Layers, "hidden": p.Hidden, "ffn": p.FFN, "vocab": p.Vocab,
		"heads": p.Heads, "kv_heads": p.KVHeads, "head_dim": p.HeadDim, "pad": p.Pad} {
		meta[k] = strconv.Itoa(v)
	}
	n := len(p.Requests)
	var toks []int32
	lens, prompt, arrive, reported := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	for i, q := range p.Requests {
		toks = append(toks, q.Tokens...)
		lens[i], prompt[i], arrive[i], reported[i] = int32(len(q.Tokens)), int32(q.Prompt), int32(q.Arrive), int32(q.Reported)
	}
	f := &frame{meta: meta}
	for _, t := range []struct {
		name string
		v    []int32
	}{{"tokens", toks}, {"lens", lens}, {"prompt", prompt}, {"arrive", arrive}, {"reported", reported}} {
		f.tensors = append(f.tensors, tensor{name: t.name, dtype: wireI32, shape: []int{len(t.v)}, data: encodeInt32s(nil, t.v)})
	}
	return f, nil
}

// decodeModelReply checks a model reply against its plan: "train" [P] in
// the Out dtype, "infer" F32 [P], and for each site of the "sites" field
// "train/SITE" and "infer/SITE" of one float dtype and shape [reported
// positions, width].
func decodeModelReply(rep *frame, p ModelPlan, seq int, name string) (*ModelRun, error) {
	bad := frameErrorf(name)
	if err := checkReply(rep, seq, name); err != nil {
		return nil, err
	}
	np := p.Positions()
	vec := func(tn, dtype string) ([]float32, error) {
		t, ok := rep.tensor(tn)
		if !ok {
			return nil, bad(fmt.Sprintf("tensor %q", tn), "missing")
		}
		if t.dtype != dtype || !slices.Equal(t.shape, []int{np}) {
			return nil, bad(fmt.Sprintf("tensor %q", tn), "%s [%d] expected, got %s %v", dtype, np, t.dtype, t.shape)
		}
		v := make([]float32, np)
		return v, decodeFloats(v, t)
	}
	out := &ModelRun{}
	var err error
	if out.Train, err = vec("train", wireDType(p.Out)); err != nil {
		return nil, err
	}
	if out.Infer, err = vec("infer", wireF32); err != nil {
		return nil, err
	}
	nrep := len(transformer.ReportedMask(p.Requests))
	if s := rep.meta["sites"]; s != "" {
		out.Sites = strings.Split(s, ",")
	}
	for _, site := range out.Sites {
		a, okA := rep.tensor("train/" + site)
		b, okB := rep.tensor("infer/" + site)
		field := fmt.Sprintf("tap %q", site)
		if !okA || !okB {
			return nil, bad(field, "train/%s or infer/%s missing", site, site)
		}
		if a.dtype != b.dtype || !slices.Equal(a.shape, b.shape) || len(a.shape) != 2 || a.shape[0] != nrep {
			return nil, bad(field, "train %s %v, infer %s %v: want one float dtype and shape [%d reported positions, width]",
				a.dtype, a.shape, b.dtype, b.shape, nrep)
		}
		dt, ok := map[string]oracle.DType{wireBF16: oracle.BF16, wireF16: oracle.FP16, wireF32: oracle.FP32}[a.dtype]
		if !ok {
			return nil, bad(field, "dtype %s is not a float dtype", a.dtype)
		}
		va, vb := make([]float32, nrep*a.shape[1]), make([]float32, nrep*a.shape[1])
		if err := decodeFloats(va, a); err != nil {
			return nil, bad(field, "%v", err)
		}
		if err := decodeFloats(vb, b); err != nil {
			return nil, bad(field, "%v", err)
		}
		out.Widths = append(out.Widths, a.shape[1])
		out.TapDTypes = append(out.TapDTypes, dt)
		out.TapsTrain, out.TapsInfer = append(out.TapsTrain, va), append(out.TapsInfer, vb)
	}
	return out, nil
}
