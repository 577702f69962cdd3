package native

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var update = flag.Bool("update", false, "rewrite the seed corpus under testdata/fuzz")

// EnvMaxWork caps the work (gen.Work) of the cases a native target runs;
// larger decoded cases are skipped so that the fuzzer keeps a high rate.
// Default DefaultMaxWork.
const (
	EnvMaxWork     = "BITPARITY_NATIVE_MAX_WORK"
	DefaultMaxWork = 1 << 20
)

func maxWork(tb testing.TB) int {
	if s := os.Getenv(EnvMaxWork); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			tb.Fatalf("%s=%q: want a positive integer", EnvMaxWork, s)
		}
		return v
	}
	return DefaultMaxWork
}

// fuzzing reports whether this test binary runs with -fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// runnable reports why a decoded case is skipped, or "".
func runnable(tb testing.TB, c spec.Case) string {
	if !slices.Contains(gen.Dists(), c.Dist) {
		return fmt.Sprintf("distribution %s is not derived by this build", c.Dist)
	}
	if w := gen.Work(c); w > maxWork(tb) {
		return fmt.Sprintf("work %d, above %s=%d", w, EnvMaxWork, maxWork(tb))
	}
	return ""
}

// reportedControls holds the identities of the expected findings (drift
// models of EnvTargets) this process has printed.
var reportedControls sync.Map

// fuzzTarget is the body of every FuzzXxx: decode, run the target sets,
// and on a finding shrink and report (writing the minimal case's seed file
// next to Go's own failing input when fuzzing the built-in targets).
func fuzzTarget(f *testing.F, op spec.Op, rel string) {
	sets, err := TargetSets(op, rel)
	if err != nil {
		f.Fatal(err)
	}
	name := f.Name()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(op, rel, data)
		if err != nil {
			t.Skip(err)
		}
		if why := runnable(t, c); why != "" {
			t.Skip(why)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		fd, err := Find(ctx, c, sets)
		if err != nil {
			js, _ := json.Marshal(c)
			t.Fatalf("case %s: %v", js, err)
		}
		if fd == nil {
			return
		}
		if fd.Expected {
			// a drift model added by EnvTargets doing its job: printed once
			// per process, not a failure, so go test writes no failing
			// input into the source tree
			if _, seen := reportedControls.LoadOrStore(spec.Identity(*fd), true); !seen {
				m, st, err := Minimize(ctx, fd, shrink.Options{MaxTries: 400})
				if err != nil {
					m = fd
				}
				fmt.Fprintf(os.Stderr, "expected (negative control) found by %s:\n%s\n", name, Report(m, st, name))
			}
			t.Skip("expected: a negative control found (printed once)")
		}
		m, st, err := Minimize(ctx, fd, shrink.Options{MaxTries: 400})
		if err != nil {
			t.Logf("shrinking stopped: %v", err)
		}
		// Only a finding on the targets that must hold becomes a seed in the
		// source tree; one on targets added by EnvTargets (drift models,
		// found by design) is printed only (Report has the seed file).
		if fuzzing() && os.Getenv(EnvTargets) == "" {
			if path, err := WriteSeed(filepath.Join("testdata", "fuzz", name), "min-"+m.Signature, m.Case); err != nil {
				t.Logf("%v", err)
			} else {
				t.Logf("minimal case written to %s", path)
			}
		}
		t.Fatal(Report(m, st, name))
	})
}

func FuzzRMSNormBatchInvariance(f *testing.F) { fuzzTarget(f, spec.OpRMSNorm, spec.RelBatchInvariance) }
func FuzzRMSNormPadding(f *testing.F)         { fuzzTarget(f, spec.OpRMSNorm, spec.RelPadding) }
func FuzzRMSNormOracleParity(f *testing.F)    { fuzzTarget(f, spec.OpRMSNorm, spec.RelOracleParity) }
func FuzzRMSNormDeterminism(f *testing.F)     { fuzzTarget(f, spec.OpRMSNorm, spec.RelDeterminism) }

func FuzzGEMMBatchInvariance(f *testing.F) { fuzzTarget(f, spec.OpGEMM, spec.RelBatchInvariance) }
func FuzzGEMMPadding(f *testing.F)         { fuzzTarget(f, spec.OpGEMM, spec.RelPadding) }
func FuzzGEMMOracleParity(f *testing.F)    { fuzzTarget(f, spec.OpGEMM, spec.RelOracleParity) }
func FuzzGEMMDeterminism(f *testing.F)     { fuzzTarget(f, spec.OpGEMM, spec.RelDeterminism) }

func FuzzLogProbBatchInvariance(f *testing.F) { fuzzTarget(f, spec.OpLogProb, spec.RelBatchInvariance) }
func FuzzLogProbPadding(f *testing.F)         { fuzzTarget(f, spec.OpLogProb, spec.RelPadding) }
func FuzzLogProbOracleParity(f *testing.F)    { fuzzTarget(f, spec.OpLogProb, spec.RelOracleParity) }
func FuzzLogProbDeterminism(f *testing.F)     { fuzzTarget(f, spec.OpLogProb, spec.RelDeterminism) }
func FuzzLogProbParity(f *testing.F)          { fuzzTarget(f, spec.OpLogProb, spec.RelLogProbParity) }

func FuzzAttnPrefillBatchInvariance(f *testing.F) {
	fuzzTarget(f, spec.OpAttnPrefill, spec.RelBatchInvariance)
}
func FuzzAttnPrefillPadding(f *testing.F) { fuzzTarget(f, spec.OpAttnPrefill, spec.RelPadding) }
func FuzzAttnPrefillOracleParity(f *testing.F) {
	fuzzTarget(f, spec.OpAttnPrefill, spec.RelOracleParity)
}
func FuzzAttnPrefillDeterminism(f *testing.F) { fuzzTarget(f, spec.OpAttnPrefill, spec.RelDeterminism) }
func FuzzAttnPrefillPathParity(f *testing.F)  { fuzzTarget(f, spec.OpAttnPrefill, spec.RelPathParity) }

func FuzzDecodeBatchInvariance(f *testing.F) {
	fuzzTarget(f, spec.OpAttnDecode, spec.RelBatchInvariance)
}
func FuzzDecodePadding(f *testing.F)      { fuzzTarget(f, spec.OpAttnDecode, spec.RelPadding) }
func FuzzDecodeOracleParity(f *testing.F) { fuzzTarget(f, spec.OpAttnDecode, spec.RelOracleParity) }
func FuzzDecodeDeterminism(f *testing.F)  { fuzzTarget(f, spec.OpAttnDecode, spec.RelDeterminism) }

// natives lists every native target with its op and relation.
var natives = []struct {
	name string
	op   spec.Op
	rel  string
}{
	{"FuzzRMSNormBatchInvariance", spec.OpRMSNorm, spec.RelBatchInvariance},
	{"FuzzRMSNormPadding", spec.OpRMSNorm, spec.RelPadding},
	{"FuzzRMSNormOracleParity", spec.OpRMSNorm, spec.RelOracleParity},
	{"FuzzRMSNormDeterminism", spec.OpRMSNorm, spec.RelDeterminism},
	{"FuzzGEMMBatchInvariance", spec.OpGEMM, spec.RelBatchInvariance},
	{"FuzzGEMMPadding", spec.OpGEMM, spec.RelPadding},
	{"FuzzGEMMOracleParity", spec.OpGEMM, spec.RelOracleParity},
	{"FuzzGEMMDeterminism", spec.OpGEMM, spec.RelDeterminism},
	{"FuzzLogProbBatchInvariance", spec.OpLogProb, spec.RelBatchInvariance},
	{"FuzzLogProbPadding", spec.OpLogProb, spec.RelPadding},
	{"FuzzLogProbOracleParity", spec.OpLogProb, spec.RelOracleParity},
	{"FuzzLogProbDeterminism", spec.OpLogProb, spec.RelDeterminism},
	{"FuzzLogProbParity", spec.OpLogProb, spec.RelLogProbParity},
	{"FuzzAttnPrefillBatchInvariance", spec.OpAttnPrefill, spec.RelBatchInvariance},
	{"FuzzAttnPrefillPadding", spec.OpAttnPrefill, spec.RelPadding},
	{"FuzzAttnPrefillOracleParity", spec.OpAttnPrefill, spec.RelOracleParity},
	{"FuzzAttnPrefillDeterminism", spec.OpAttnPrefill, spec.RelDeterminism},
	{"FuzzAttnPrefillPathParity", spec.OpAttnPrefill, spec.RelPathParity},
	{"FuzzDecodeBatchInvariance", spec.OpAttnDecode, spec.RelBatchInvariance},
	{"FuzzDecodePadding", spec.OpAttnDecode, spec.RelPadding},
	{"FuzzDecodeOracleParity", spec.OpAttnDecode, spec.RelOracleParity},
	{"FuzzDecodeDeterminism", spec.OpAttnDecode, spec.RelDeterminism},
}

// TestNativesCoverPairs checks that every op and relation relate.Pairs runs
// against an invariant target has a native target.
func TestNativesCoverPairs(t *testing.T) {
	for _, p := range relate.Pairs() {
		if p.Expect {
			continue
		}
		if !slices.ContainsFunc(natives, func(n struct {
			name string
			op   spec.Op
			rel  string
		}) bool {
			return n.op == p.Op && n.rel == p.Relation
		}) {
			t.Errorf("no native target for %s %s (%v)", p.Op, p.Relation, p.Targets)
		}
	}
}

const drawnSeeds = 6

// edgeShapes are, per op, an inner shape and the batch sizes where the
// kernels bitparity models switch paths: RMSNorm at rows % 32 == 0 and at
// 256 rows (hidden 512 so that 256- and 1024-thread blocks differ), GEMM
// split-K at M 65, prefill at 49 KV tokens (tile 48), decode at
// requests·heads >= 132 (17 requests of 8 heads, 65 KV tokens: past one
// tile), log-probs at 8 rows.
var edgeShapes = map[spec.Op]struct {
	shape spec.Shape
	rows  []int
}{
	spec.OpRMSNorm:     {spec.Shape{Hidden: 512}, []int{32, 256}},
	spec.OpGEMM:        {spec.Shape{Hidden: 64, N: 8}, []int{65}},
	spec.OpLogProb:     {spec.Shape{Vocab: 1024}, []int{8}},
	spec.OpAttnPrefill: {spec.Shape{SeqLen: 49, Heads: 1, KVHeads: 1, HeadDim: 64}, []int{1}},
	spec.OpAttnDecode:  {spec.Shape{KV: 65, Heads: 8, KVHeads: 1, HeadDim: 64}, []int{17}},
}

// edgeCases are the hand-written seeds of a native target: each edge batch
// size of its op as the case's batch (batch invariance against a batch of
// 1; oracle parity; determinism; path parity), or as the padded size of a
// one-row batch (padding); logprob parity also with the mask of the
// generated half.
func edgeCases(t *testing.T, op spec.Op, rel string) []spec.Case {
	e := edgeShapes[op]
	var cs []spec.Case
	for _, n := range e.rows {
		c, err := Decode(op, rel, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := e.shape
		s.Rows, s.Seqs = c.Shape.Rows, c.Shape.Seqs
		c.Shape = s
		switch rel {
		case spec.RelPadding:
			c.Rel.Pad = max(n, c.BatchRows()+1)
		default:
			if op == spec.OpAttnPrefill {
				c.Shape.Seqs = n
			} else {
				c.Shape.Rows = n
			}
		}
		cs = append(cs, c)
		if rel == spec.RelLogProbParity {
			m := c
			for i := n / 2; i < n; i++ {
				m.Rel.Mask = append(m.Rel.Mask, i)
			}
			cs = append(cs, m)
		}
	}
	for _, c := range cs {
		if err := c.Validate(); err != nil {
			t.Fatalf("edge seed %+v: %v", c, err)
		}
	}
	return cs
}

// seedCases are the seed corpus of a native target: the all-defaults case
// (empty data), edgeCases, and drawnSeeds generator draws small enough for
// plain go test (work at most 2^14), from a seed fixed by the name.
func seedCases(t *testing.T, name string, op spec.Op, rel string) []spec.Case {
	c0, err := Decode(op, rel, nil)
	if err != nil {
		t.Fatalf("%s: the empty input: %v", name, err)
	}
	cs := append([]spec.Case{c0}, edgeCases(t, op, rel)...)
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	for n := 0; n < drawnSeeds; {
		if c := gen.Case(r, op, rel); gen.Work(c) <= 1<<14 {
			cs = append(cs, c)
			n++
		}
	}
	return cs
}

// TestSeedCorpus checks testdata/fuzz/FuzzXxx/seed-N against seedCases;
// go test ./fuzz/native -run TestSeedCorpus -update rewrites them.
func TestSeedCorpus(t *testing.T) {
	for _, n := range natives {
		dir := filepath.Join("testdata", "fuzz", n.name)
		for i, c := range seedCases(t, n.name, n.op, n.rel) {
			file := fmt.Sprintf("seed-%02d", i)
			want := SeedFile(c)
			if *update {
				if _, err := WriteSeed(dir, file, c); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s/%s is stale or missing (go test ./fuzz/native -run TestSeedCorpus -update): %v", dir, file, err)
			}
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	eachGenCase(11, 200, func(op spec.Op, rel string, i int, c spec.Case) {
		if i%2 == 1 {
			c.GenVersion = 1 // an older generator's case keeps its version
		}
		got, err := Decode(op, rel, Encode(c))
		if err != nil {
			t.Fatalf("%s/%s: decode of %+v: %v", op, rel, c, err)
		}
		if c.Dist == spec.DistSensitive {
			c.Dist = spec.DistBoundary // the draw it refines (distIndex)
		}
		if !equalCase(got, c) {
			t.Fatalf("%s/%s: round trip\n got %+v\nwant %+v", op, rel, got, c)
		}
	})
}

// eachGenCase calls fn with n cases gen draws of every op and relation
// (i counting them, 0..n-1), in the order of spec.Ops and spec.Relations,
// from one generator of seed.
func eachGenCase(seed int64, n int, fn func(op spec.Op, rel string, i int, c spec.Case)) {
	r := rand.New(rand.NewSource(seed))
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			for i := 0; i < n; i++ {
				fn(op, rel, i, gen.Case(r, op, rel))
			}
		}
	}
}

// equalCase compares two cases by their JSON (nil and empty slices alike).
func equalCase(a, b spec.Case) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestDecodeAnyBytes: every byte string decodes to a valid case or an
// error, never a panic, and the empty input is the smallest case.
func TestDecodeAnyBytes(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			for i := 0; i < 300; i++ {
				b := make([]byte, r.Intn(40))
				r.Read(b)
				if c, err := Decode(op, rel, b); err == nil {
					if err := c.Validate(); err != nil {
						t.Fatalf("%s/%s %x: decoded an invalid case: %v", op, rel, b, err)
					}
				}
			}
			c, err := Decode(op, rel, nil)
			if err != nil {
				t.Fatalf("%s/%s: empty input: %v", op, rel, err)
			}
			if c.BatchRows() != 1 || c.Dist != spec.DistNormal || c.Seed != 0 || c.In != spec.BF16 {
				t.Errorf("%s/%s: empty input gives %+v, want 1 row, normal, seed 0, bf16", op, rel, c)
			}
		}
	}
	if _, err := Decode("conv", spec.RelPadding, nil); err == nil {
		t.Error("unknown op: want an error")
	}
}

// TestByteMinimizationShrinks: cutting the tail (the first thing Go's
// minimizer tries) at a field boundary keeps every field before the cut
// and resets every field after it to its zero code, the simplest value:
// Encode(Decode(b[:n])) is b[:n] without its trailing zero fields, and the
// seed, perm seed and distribution of a cut case are 0, 0 and normal.
// Zeroing the first byte makes the batch dimension 1.
func TestByteMinimizationShrinks(t *testing.T) {
	eachGenCase(8, 50, func(op spec.Op, rel string, _ int, c spec.Case) {
		b := Encode(c)
		for n := 0; n < len(b); n++ {
			if n > 0 && b[n-1] >= 0x80 {
				continue // inside a varint
			}
			d, err := Decode(op, rel, b[:n])
			if err != nil {
				continue // e.g. a cut that leaves too large a case
			}
			want := bytes.TrimRight(b[:n], "\x00")
			if got := Encode(d); !bytes.Equal(got, want) {
				t.Fatalf("%s/%s: cut %x to %x: re-encoded as %x", op, rel, b, b[:n], got)
			}
			if d.Seed != 0 || d.Rel.PermSeed != 0 && d.Rel.PermSeed != c.Rel.PermSeed {
				t.Fatalf("%s/%s: cut %x to %x kept a seed: %+v", op, rel, b, b[:n], d)
			}
		}
		z := slices.Clone(b)
		if len(z) > 0 {
			z[0] = 0
			if d, err := Decode(op, rel, z); err == nil && d.BatchRows() != 1 {
				t.Fatalf("%s/%s: zeroing the first byte of %x: batch rows %d, want 1", op, rel, b, d.BatchRows())
			}
		}
	})
	// a hand-made case: rows 32 (table index 4), hidden 4096 (index 8)
	c, err := Decode(spec.OpRMSNorm, spec.RelOracleParity, []byte{4, 8})
	if err != nil || c.Shape.Rows != 32 || c.Shape.Hidden != 4096 {
		t.Fatalf("decode {4, 8}: %+v, %v; want rows 32, hidden 4096", c.Shape, err)
	}
	if b := Encode(c); !bytes.Equal(b, []byte{4, 8}) {
		t.Errorf("encode rows 32 hidden 4096: %x, want 0408", b)
	}
	c.Shape.Rows = 1000                                             // not in the table: literal 1 + (v - 18)
	if b := Encode(c); !bytes.HasPrefix(b, []byte{0xf9, 0x07, 8}) { // uvarint 18+999
		t.Errorf("encode rows 1000: %x, want f90708", b)
	}
	if d, _ := Decode(c.Op, c.Relation, Encode(c)); d.Shape.Rows != 1000 {
		t.Errorf("rows 1000 round trip: %d", d.Shape.Rows)
	}
}

// mutate changes data the way Go's mutator roughly does: replace, insert
// or delete a byte, once to three times.
func mutate(r *rand.Rand, data []byte) []byte {
	b := slices.Clone(data)
	for k := 1 + r.Intn(3); k > 0; k-- {
		switch op := r.Intn(3); {
		case op == 0 && len(b) > 0:
			b[r.Intn(len(b))] = byte(r.Intn(256))
		case op == 1 || len(b) == 0:
			i := r.Intn(len(b) + 1)
			b = slices.Insert(b, i, byte(r.Intn(64)))
		default:
			i := r.Intn(len(b))
			b = slices.Delete(b, i, i+1)
		}
	}
	return b
}

// TestNativeFindsDriftModels is the negative control of the native path:
// for every drift model relate.Pairs expects to be found, inputs built the
// way the fuzzer builds them (the seed corpus, then mutations of it),
// decoded and run through Find as FuzzXxx does, find it within maxInputs
// inputs; the minimal case then still fails and is no larger.
func TestNativeFindsDriftModels(t *testing.T) {
	const maxInputs = 400
	for _, p := range relate.Pairs() {
		if !p.Expect {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			name := ""
			for _, n := range natives {
				if n.op == p.Op && n.rel == p.Relation {
					name = n.name
				}
			}
			var seeds [][]byte
			if name != "" {
				for _, c := range seedCases(t, name, p.Op, p.Relation) {
					seeds = append(seeds, Encode(c))
				}
			} else {
				seeds = [][]byte{nil}
			}
			r := rand.New(rand.NewSource(1))
			ctx := context.Background()
			start := time.Now()
			for i := 0; i < maxInputs; i++ {
				data := seeds[i%len(seeds)]
				if i >= len(seeds) {
					data = mutate(r, data)
				}
				c, err := Decode(p.Op, p.Relation, data)
				if err != nil || runnable(t, c) != "" {
					continue
				}
				f, err := Find(ctx, c, [][]string{p.Targets})
				if err != nil {
					t.Fatalf("input %d %x: %v", i, data, err)
				}
				if f == nil {
					continue
				}
				found := time.Since(start)
				m, st, err := Minimize(ctx, f, shrink.Options{MaxTries: 150})
				if err != nil {
					t.Fatalf("minimize: %v", err)
				}
				if m.Case.Elements() > f.Case.Elements() || m.Kind != f.Kind {
					t.Errorf("minimal case %+v larger or of another kind than %+v", m.Case, f.Case)
				}
				t.Logf("found after %d inputs (%v), minimal in %v: %s",
					i+1, found.Round(time.Millisecond), st.Elapsed.Round(time.Millisecond),
					strings.SplitN(Report(m, st, name), "\n", 2)[0])
				t.Logf("minimal: %s", mustJSON(m.Case))
				if dm := m.DriftMap; dm != nil {
					t.Logf("drift map: %s", words.Drift(dm))
					rules := dm.Rule // every dimension's (padding maps the padded size first)
					for _, a := range dm.Also {
						rules += " | " + a.Rule
					}
					for _, tg := range p.Targets {
						if w, ok := wantRules[tg]; ok && dm.Splits() && !strings.Contains(rules, w) {
							t.Errorf("drift map rules %q, want one with %q", rules, w)
						}
					}
				}
				return
			}
			t.Fatalf("%s not found within %d native inputs", p, maxInputs)
		})
	}
}

// wantRules are the words the drift map of each drift model must contain
// (the onsets driftmodels.go documents).
var wantRules = map[string]string{
	"drift-rmsnorm-te-mod32":       "rows % 32 == 0 -> ",
	"drift-rmsnorm-vllm-256":       "rows <= 255 -> A, rows >= 256 -> B",
	"drift-gemm-splitk-by-m":       "rows <= 64 -> A, rows >= 65 -> B",
	"drift-attn-tile48":            "kv <= 48 -> ", // A/B, or agree/differ for path parity
	"drift-decode-splits-by-batch": "batch >= ",
}

func mustJSON(c spec.Case) string {
	b, _ := json.Marshal(c)
	return string(b)
}

func TestTargetSets(t *testing.T) {
	t.Setenv(EnvTargets, "") // the defaults, whatever the caller's environment
	sets, err := TargetSets(spec.OpRMSNorm, spec.RelBatchInvariance)
	if err != nil || len(sets) != 1 || sets[0][0] != target.OracleName(spec.OpRMSNorm) {
		t.Errorf("rmsnorm batch_invariance: %v, %v; want the oracle only", sets, err)
	}
	sets, err = TargetSets(spec.OpLogProb, spec.RelLogProbParity)
	if err != nil || len(sets) != 1 || len(sets[0]) != 2 {
		t.Errorf("logprob parity: %v, %v; want one pair", sets, err)
	}
	t.Setenv(EnvTargets, "drift-rmsnorm-te-mod32, oracle-attn_prefill+drift-attn-tile48")
	sets, err = TargetSets(spec.OpRMSNorm, spec.RelBatchInvariance)
	if err != nil || len(sets) != 2 || sets[1][0] != "drift-rmsnorm-te-mod32" {
		t.Errorf("with %s: %v, %v", EnvTargets, sets, err)
	}
	sets, err = TargetSets(spec.OpAttnPrefill, spec.RelPathParity)
	if err != nil || len(sets) != 2 || sets[1][1] != "drift-attn-tile48" {
		t.Errorf("with %s, path parity: %v, %v", EnvTargets, sets, err)
	}
	t.Setenv(EnvTargets, "no-such-target")
	if _, err := TargetSets(spec.OpRMSNorm, spec.RelBatchInvariance); err == nil {
		t.Error("unknown target: want an error")
	}
}

// TestDistsMatchInputs keeps gen's distributions in step with inputs.Of,
// op by op: every distribution gen draws must be derivable for every op,
// and one that Inputs derives for an op but gen leaves out must be added
// to gen, or be one gen reaches by rewriting a drawn case (gen.Rewrites).
func TestDistsMatchInputs(t *testing.T) {
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpLogProb, spec.OpGEMM} {
		for _, d := range spec.Dists {
			c := spec.Case{Version: 1, GenVersion: 1, Op: op, Relation: spec.RelDeterminism,
				Shape: spec.Shape{Rows: 2, Hidden: 64, N: 8, Vocab: 64}, In: spec.BF16, Out: spec.BF16, Dist: d, Seed: 1}
			switch op {
			case spec.OpRMSNorm:
				c.Eps = 1e-6
			case spec.OpLogProb:
				c.In, c.Out, c.Compare = spec.FP32, spec.FP32, spec.FP32
			}
			_, err := inputs.Of(c)
			drawn := slices.Contains(gen.Dists(), d)
			if drawn && err != nil {
				t.Errorf("%s: gen draws %s but inputs.Of rejects it: %v", op, d, err)
			}
			if !drawn && err == nil && !slices.Contains(gen.Rewrites(), d) {
				t.Errorf("%s: inputs.Of derives %s now: add it to gen's distributions (or to gen.Rewrites)", op, d)
			}
		}
	}
}

// BenchmarkGeneratedCases measures, for every pair a campaign runs, the
// time of one generated case (gen.Case then fuzz.Check): the campaign's
// rate is the inverse, per core.
func BenchmarkGeneratedCases(b *testing.B) {
	for _, p := range relate.Pairs() {
		b.Run(strings.ReplaceAll(p.String(), " ", "/"), func(b *testing.B) {
			r := rand.New(rand.NewSource(1))
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				c := gen.Case(r, p.Op, p.Relation)
				c.Targets = p.Targets
				if _, err := fuzz.Check(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode measures decoding a native input.
func BenchmarkDecode(b *testing.B) {
	data := Encode(gen.Case(rand.New(rand.NewSource(1)), spec.OpAttnDecode, spec.RelBatchInvariance))
	for i := 0; i < b.N; i++ {
		if _, err := Decode(spec.OpAttnDecode, spec.RelBatchInvariance, data); err != nil {
			b.Fatal(err)
		}
	}
}
