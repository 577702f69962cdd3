package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json")

// golden pins the portable derivation: the same case gives the same
// weights, requests, engine schedule and log-prob bits on every machine
// (and a GPU run of the same case must give these bits).
type golden struct {
	Case       spec.Case `json:"case"`
	Weights    string    `json:"weights_digest"`
	Tokens     string    `json:"tokens_digest"`
	Prompts    []int     `json:"prompts"`
	Arrivals   []int     `json:"arrivals"`
	Reported   []int     `json:"reported"`
	Steps      int       `json:"steps"`
	Decodes    int       `json:"decodes"`
	MaxBatch   int       `json:"max_batch"`
	TrainBF16  string    `json:"train_logprobs_bf16"`
	EngineFP32 string    `json:"engine_logprobs_fp32"`
	EngineMask string    `json:"engine_reported"` // 1 reported, 0 never
}

// runCase sets case c up and runs it on both paths (Setup.Run, no taps),
// failing the test on an error.
func runCase(t *testing.T, c spec.Case) (*Setup, []float32, *Inference) {
	t.Helper()
	st, err := FromCase(c)
	if err != nil {
		t.Fatal(err)
	}
	train, inf, err := st.Run(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st, train, inf
}

func makeGolden(t *testing.T) golden {
	c := (Gen{}).Case(42)
	st, train, inf := runCase(t, c)
	m := st.Model
	all := append(append([]float32(nil), m.Embed...), m.FinalNorm...)
	all = append(all, m.LMHead...)
	for _, b := range m.Blocks {
		for _, w := range [][]float32{b.AttnNorm, b.QKV, b.Out, b.MLPNorm, b.Up, b.Down} {
			all = append(all, w...)
		}
	}
	g := golden{Case: c, Weights: fingerprint(all), Steps: inf.Steps, Decodes: inf.Decodes, MaxBatch: inf.MaxBatch}
	var toks []float32
	for _, q := range st.Requests {
		for _, t := range q.Tokens {
			toks = append(toks, float32(t))
		}
		g.Prompts = append(g.Prompts, q.Prompt)
		g.Arrivals = append(g.Arrivals, q.Arrive)
		g.Reported = append(g.Reported, q.Reported)
	}
	g.Tokens = fingerprint(toks)
	var tr, en, mask []string
	for i := range train {
		tr = append(tr, oracle.Hex(oracle.BF16, train[i]))
		en = append(en, oracle.Hex(oracle.FP32, inf.LogProbs[i]))
		mask = append(mask, map[bool]string{true: "1", false: "0"}[inf.Reported[i]])
	}
	g.TrainBF16, g.EngineFP32, g.EngineMask = strings.Join(tr, " "), strings.Join(en, " "), strings.Join(mask, "")
	return g
}

func TestGolden(t *testing.T) {
	got := makeGolden(t)
	path := filepath.Join("testdata", "golden.json")
	if *update {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./fuzz/transformer -run TestGolden -update)", err)
	}
	var want golden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("derivation changed (-golden +now):\n%s", d)
	}
}

// TestEngine checks the inference engine's batching: decode batches are
// padded to the pad size, requests join over several steps and leave, and
// exactly the reported positions are reported.
func TestEngine(t *testing.T) {
	for _, pad := range []int{0, 128, 3} {
		c := (Gen{}).Case(5)
		c.Shape.Seqs, c.Shape.SeqLen = 6, 30
		c.Rel.Pad = pad
		st, _, inf := runCase(t, c)
		want := pad
		if pad == 0 {
			want = 64
		}
		if inf.MaxBatch == 0 || inf.MaxBatch%want != 0 {
			t.Errorf("pad %d: largest decode batch %d, want a multiple of %d", pad, inf.MaxBatch, want)
		}
		mask := ReportedMask(st.Requests)
		n := 0
		for _, r := range inf.Reported {
			if r {
				n++
			}
		}
		if n != len(mask) {
			t.Errorf("pad %d: %d positions reported, the plan reports %d", pad, n, len(mask))
		}
		for _, p := range mask {
			if !inf.Reported[p] {
				t.Errorf("pad %d: position %d not reported", pad, p)
			}
		}
		arrivals := map[int]bool{}
		for _, q := range st.Requests {
			arrivals[q.Arrive] = true
		}
		if inf.Prefills != len(arrivals) || len(arrivals) < 2 {
			t.Errorf("pad %d: %d prefills for %d distinct arrival steps (want >= 2: requests join between steps)", pad, inf.Prefills, len(arrivals))
		}
	}
}

// fingerprint is the golden file's hash of the fp32 bits of y: the first
// 8 bytes of their sha256 (little-endian), in hex. It is a derivation's
// fingerprint, not a class label, so it keeps its width.
func fingerprint(y []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range y {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
