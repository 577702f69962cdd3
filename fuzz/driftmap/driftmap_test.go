package driftmap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// digest turns a class function into a classifier of digests.
func digest(f func(v int) int) func(v int) (string, error) {
	return func(v int) (string, error) { return fmt.Sprintf("bits-%d", f(v)), nil }
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSweepRules(t *testing.T) {
	tests := []struct {
		name   string
		dim    string
		values []int
		class  func(v int) int
		kind   string
		rule   string
	}{
		{"invariant", "rows", Values("rows", 100), func(int) int { return 0 },
			Uniform, "every rows -> A"},
		{"flash tile 48", "kv", Values("kv", 49), func(v int) int { return b2i(v >= 49) },
			Threshold, "kv <= 48 -> A, kv >= 49 -> B"},
		{"vllm 256", "rows", Values("rows", 256), func(v int) int { return b2i(v >= 256) },
			Threshold, "rows <= 255 -> A, rows >= 256 -> B"},
		{"decode splits by batch (heads 4)", "batch", Values("batch", 33), func(v int) int { return b2i(4*v >= 132) },
			Threshold, "batch <= 32 -> A, batch >= 33 -> B"},
		{"decode splits by batch (heads 1)", "batch", Values("batch", 132), func(v int) int { return b2i(v >= 132) },
			Threshold, "batch <= 131 -> A, batch >= 132 -> B"},
		{"TE rows % 32", "rows", Values("rows", 32), func(v int) int { return b2i(v%32 == 0) },
			Periodic, "rows % 32 == 0 -> B, otherwise -> A"},
		{"rows % 32 from a large onset", "rows", Values("rows", 2272), func(v int) int { return b2i(v%32 == 0) },
			Periodic, "rows % 32 == 0 -> B, otherwise -> A"},
		{"rows % 64 in {0, 32} is rows % 32", "rows", Values("rows", 64), func(v int) int { return b2i(v%64 == 0 || v%64 == 32) },
			Periodic, "rows % 32 == 0 -> B, otherwise -> A"},
		{"odd rows", "m", Values("m", 8), func(v int) int { return v % 2 },
			Periodic, "m % 2 == 0 -> B, otherwise -> A"},
		{"three residue classes", "rows", Values("rows", 64), func(v int) int {
			switch v % 64 {
			case 0:
				return 2
			case 32:
				return 1
			}
			return 0
		}, Periodic, "rows % 64 == 32 -> B, rows % 64 == 0 -> C, otherwise -> A"},
		{"vector width residues", "rows", Values("rows", 16), func(v int) int { return b2i(v%8 < 4) },
			Periodic, "rows % 8 in [4, 7] -> B, otherwise -> A"},
		{"rows % 32 == 0 and rows >= 256", "rows", Values("rows", 256), func(v int) int { return b2i(v%32 == 0 && v >= 256) },
			Periodic, "rows % 32 == 0 and rows >= 256 -> B, otherwise -> A"},
		{"a tail tile from 900 rows", "rows", Values("rows", 1500), func(v int) int { return b2i(v >= 900 && v%64 != 0) },
			Periodic, "rows % 64 != 0 and rows >= 900 -> B, otherwise -> A"},
		{"rows % 32 == 0 and rows <= 128", "rows", Values("rows", 128), func(v int) int { return b2i(v%32 == 0 && v <= 128) },
			Periodic, "rows % 32 == 0 and rows <= 128 -> B, otherwise -> A"},
		{"ranges", "batch", Values("batch", 17), func(v int) int {
			switch {
			case v <= 4:
				return 0
			case v <= 16:
				return 1
			}
			return 2
		}, Threshold, "batch <= 4 -> A, 5 <= batch <= 16 -> B, batch >= 17 -> C"},
		{"a single value apart", "kv", Values("kv", 64), func(v int) int { return b2i(v == 64) },
			Threshold, "kv <= 63 -> A, kv == 64 -> B, kv >= 65 -> A"},
		{"irregular", "rows", Values("rows", 100), func(v int) int { return int((uint32(v) * 2654435761) >> 29 % 3) },
			Irregular, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Sweep(context.Background(), tt.dim, tt.values, digest(tt.class))
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != tt.kind || m.Rule != tt.rule {
				t.Errorf("got %s %q, want %s %q", m.Kind, m.Rule, tt.kind, tt.rule)
			}
			if m.Dim != tt.dim || !slices.IsSorted(m.Values) {
				t.Errorf("dim %q values sorted %v", m.Dim, slices.IsSorted(m.Values))
			}
			// every swept value is in exactly one class, labels in order
			n := 0
			for i, c := range m.Classes {
				if c.Label != label(i) {
					t.Errorf("class %d labelled %s", i, c.Label)
				}
				if i > 0 && c.Values[0] < m.Classes[i-1].Values[0] {
					t.Errorf("class %s starts before class %s", c.Label, m.Classes[i-1].Label)
				}
				for _, v := range c.Values {
					if d, _ := digest(tt.class)(v); d != c.Digest {
						t.Errorf("value %d in class %s (%s) has digest %s", v, c.Label, c.Digest, d)
					}
				}
				n += len(c.Values)
			}
			if n != len(m.Values) {
				t.Errorf("classes hold %d values, %d swept", n, len(m.Values))
			}
		})
	}
}

func TestSweepStops(t *testing.T) {
	boom := errors.New("device lost")
	_, err := Sweep(context.Background(), "rows", []int{1, 2, 3}, func(v int) (string, error) {
		if v == 2 {
			return "", boom
		}
		return "x", nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("classify error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err = Sweep(ctx, "rows", []int{1, 2, 3}, func(v int) (string, error) {
		calls++
		cancel()
		return "x", nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled: %d calls, %v", calls, err)
	}
	if _, err := Sweep(context.Background(), "rows", nil, digest(func(int) int { return 0 })); err == nil {
		t.Error("no values: want an error")
	}
}

func TestValues(t *testing.T) {
	tests := []struct {
		dim     string
		onset   int
		must    []int
		maxSize int
	}{
		{"kv", 49, []int{1, 48, 49, 50, 97, 100}, 120},
		{"batch", 132, []int{1, 2, 131, 132, 133, 200, 256}, 300},
		{"rows", 32, []int{1, 31, 32, 33, 64, 96, 255, 256, 257}, 300},
		{"rows", 928, []int{1, 896, 927, 928, 929, 960, 1024, 1856}, 400},
		{"rows", 4548, []int{4547, 4548, 4549, 4480, 4544, 4608, 8192, 9088}, 700},
		{"seq_len", 1, []int{1, 2, 3, 4}, 10},
	}
	for _, tt := range tests {
		vs := Values(tt.dim, tt.onset)
		if !slices.IsSorted(vs) || len(slices.Compact(slices.Clone(vs))) != len(vs) || vs[0] < 1 {
			t.Errorf("Values(%s, %d) not ascending, unique and positive: %v", tt.dim, tt.onset, vs)
		}
		for _, v := range tt.must {
			if !slices.Contains(vs, v) {
				t.Errorf("Values(%s, %d) lacks %d", tt.dim, tt.onset, v)
			}
		}
		if len(vs) > tt.maxSize {
			t.Errorf("Values(%s, %d) has %d values, want at most %d", tt.dim, tt.onset, len(vs), tt.maxSize)
		}
		if tt.dim == "rows" {
			// two full periods of 64 around the onset
			for v := max(1, tt.onset-64); v <= tt.onset+64; v++ {
				if !slices.Contains(vs, v) {
					t.Errorf("Values(rows, %d) lacks %d near the onset", tt.onset, v)
					break
				}
			}
		}
	}
}

func TestLabel(t *testing.T) {
	for k, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA"} {
		if got := label(k); got != want {
			t.Errorf("label(%d) = %s, want %s", k, got, want)
		}
	}
}

// A boundary one draw shows splits the class: the map over draws is the
// common refinement of the draws' partitions.
func TestSweepDrawsRefines(t *testing.T) {
	ctx := context.Background()
	vs := make([]int, 128)
	for i := range vs {
		vs[i] = i + 1
	}
	flat := digest(func(int) int { return 0 })
	mod32 := digest(func(v int) int { return b2i(v%32 == 0) })
	one, err := SweepDraws(ctx, "rows", vs, []func(int) (string, error){flat})
	if err != nil {
		t.Fatal(err)
	}
	if one.Kind != Uniform || one.Draws != 1 {
		t.Errorf("one flat draw: %s %q draws %d", one.Kind, one.Rule, one.Draws)
	}
	m, err := SweepDraws(ctx, "rows", vs, []func(int) (string, error){flat, mod32, flat})
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows % 32 == 0 -> B, otherwise -> A"; m.Rule != want || m.Draws != 3 {
		t.Errorf("got %q over %d draws, want %q over 3", m.Rule, m.Draws, want)
	}
	fail := func(v int) (string, error) { return "", errors.New("boom") }
	if _, err := SweepDraws(ctx, "rows", vs, []func(int) (string, error){flat, fail}); err == nil {
		t.Error("a failing draw gave no error")
	}
	if _, err := SweepDraws(ctx, "rows", vs, nil); err == nil {
		t.Error("no draws gave no error")
	}
}

// Sampled values with a gap between two classes are bisected to the exact
// onset, and the map states the range it swept.
func TestSweepBisectsGaps(t *testing.T) {
	calls := 0
	classify := func(v int) (string, error) {
		calls++
		return digest(func(v int) int { return b2i(v >= 132) })(v)
	}
	m, err := Sweep(context.Background(), "rows", []int{1, 2, 64, 129, 160, 200}, classify)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows <= 131 -> A, rows >= 132 -> B"; m.Rule != want {
		t.Errorf("rule %q, want %q", m.Rule, want)
	}
	if m.From != 1 || m.To != 200 || m.Runs != DefaultRuns {
		t.Errorf("range %d..%d runs %d, want 1..200 runs %d", m.From, m.To, m.Runs, DefaultRuns)
	}
	if n := len(m.Values); calls != DefaultRuns*n || n > 6+6 {
		t.Errorf("%d calls for %d values (bisection of a gap of 31 takes at most 5 more)", calls, n)
	}
}

// Values whose runs differ form the nondeterministic class; with
// Determinism the other class is deterministic.
func TestSweepNondeterministic(t *testing.T) {
	calls := 0
	noisy := func(v int) (string, error) { // below 16 every run differs
		calls++
		if v < 16 {
			return fmt.Sprint("run-", calls), nil
		}
		return "bits", nil
	}
	vs := make([]int, 64)
	for i := range vs {
		vs[i] = i + 1
	}
	m, err := Sweep(context.Background(), "rows", vs, noisy)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows <= 15 -> nondeterministic, rows >= 16 -> A"; m.Rule != want || m.Kind != Threshold {
		t.Errorf("got %s %q, want threshold %q", m.Kind, m.Rule, want)
	}
	d, err := Options{Determinism: true}.Sweep(context.Background(), "rows", vs, noisy)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows <= 15 -> nondeterministic, rows >= 16 -> deterministic"; d.Rule != want {
		t.Errorf("determinism map %q, want %q", d.Rule, want)
	}
	if d.Classes[0].Label != Nondeterministic || len(d.Classes[0].Values) != 15 {
		t.Errorf("classes %+v", d.Classes)
	}
	one, err := Options{Runs: 1}.Sweep(context.Background(), "rows", vs, noisy)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(one.Classes, func(c spec.DriftClass) bool { return c.Label == Nondeterministic }) {
		t.Errorf("one run per value cannot see nondeterminism: %q", one.Rule)
	}
}

// A periodic rule seen on the sampled values is checked at the far end of
// the range the campaign reached; a rule that changes past a size is
// stated in two parts with the exact size, over the range reached.
func TestSweepFarEnd(t *testing.T) {
	class := func(v int) int { // rows % 16 in {0, 9..15} below 384, another schedule from 384
		switch {
		case v >= 384:
			return 2
		case v%16 == 0 || v%16 >= 9:
			return 1
		}
		return 0
	}
	values := Values("rows", 16)
	near, err := Sweep(context.Background(), "rows", values, digest(class))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows % 16 in {0, 9, 10, 11, 12, 13, 14, 15} -> B, otherwise -> A"; near.Rule != want || near.To != 320 {
		t.Errorf("without Far: %q over ..%d, want %q over ..320", near.Rule, near.To, want)
	}
	far, err := Options{Far: 512}.Sweep(context.Background(), "rows", values, digest(class))
	if err != nil {
		t.Fatal(err)
	}
	want := "rows <= 383: rows % 16 in {0, 9, 10, 11, 12, 13, 14, 15} -> B, otherwise -> A; rows >= 384 -> C"
	if far.Rule != want || far.Kind != Periodic || far.From != 1 || far.To != 512 {
		t.Errorf("with Far 512: %s %q over %d..%d, want periodic %q over 1..512", far.Kind, far.Rule, far.From, far.To, want)
	}
	// a rule that holds at the far end stays, over the range reached
	mod32, err := Options{Far: 1000}.Sweep(context.Background(), "rows", Values("rows", 32), digest(func(v int) int { return b2i(v%32 == 0) }))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows % 32 == 0 -> B, otherwise -> A"; mod32.Rule != want || mod32.To != 1000 {
		t.Errorf("rows %% 32 to 1000: %q over ..%d", mod32.Rule, mod32.To)
	}
}

// A classifier that answers with verdicts gets classes named by them; over
// draws the most severe verdict wins.
func TestSweepVerdicts(t *testing.T) {
	ctx := context.Background()
	vs := make([]int, 96)
	for i := range vs {
		vs[i] = i + 1
	}
	tile := func(v int) (string, error) {
		if v > 48 {
			return Differ, nil
		}
		return Agree, nil
	}
	agree := func(int) (string, error) { return Agree, nil }
	m, err := SweepDraws(ctx, "kv", vs, []func(int) (string, error){agree, tile})
	if err != nil {
		t.Fatal(err)
	}
	if want := "kv <= 48 -> agree, kv >= 49 -> differ"; m.Rule != want {
		t.Errorf("rule %q, want %q", m.Rule, want)
	}
	crash := func(v int) (string, error) {
		if v%89 == 0 {
			return Crash, nil
		}
		return Runs, nil
	}
	c, err := Sweep(ctx, "rows", Values("rows", 89), crash)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows % 89 == 0 -> crash, otherwise -> runs"; c.Rule != want {
		t.Errorf("crash map %q, want %q", c.Rule, want)
	}
}

// A class's positions note says the first position, the only one, the
// last of each batch, or the residue class every position seen shares
// (once one batch shows 8 distinct positions spanning 8 steps).
func TestPositionsNote(t *testing.T) {
	odd := func(from, to int) []int {
		var ps []int
		for p := from; p <= to; p += 2 {
			ps = append(ps, p)
		}
		return ps
	}
	type batch struct {
		ps   []int
		size int
	}
	tests := []struct {
		name    string
		batches []batch
		note    string
	}{
		{"none", nil, ""},
		{"one position", []batch{{[]int{299}, 300}, {[]int{299}, 301}}, "B: only position 299 differs"},
		{"the last position", []batch{{[]int{88}, 89}, {[]int{177}, 178}, {[]int{88}, 89}, {[]int{177}, 178},
			{[]int{266}, 267}, {[]int{355}, 356}, {[]int{266}, 267}, {[]int{355}, 356}}, "B: only the last position differs"},
		{"the last position of few batches", []batch{{[]int{264}, 265}, {[]int{265}, 266}}, "B: positions >= 264 differ"},
		{"from a position", []batch{{[]int{264, 265, 270}, 280}, {[]int{266, 280}, 290}}, "B: positions >= 264 differ"},
		{"odd positions", []batch{{odd(1, 99), 100}, {odd(1, 101), 102}}, "B: positions >= 1 with position % 2 == 1 differ"},
		{"two positions a step apart", []batch{{[]int{264, 268}, 270}, {[]int{264, 268}, 271}}, "B: positions >= 264 differ"},
		{"few odd positions", []batch{{[]int{1, 3, 5}, 7}}, "B: positions >= 1 differ"},
		{"every 4th, in two batches", []batch{{[]int{2, 6, 10, 14, 18}, 20}, {[]int{22, 26, 30, 34}, 36}}, "B: positions >= 2 differ"},
		{"every 4th, one batch", []batch{{[]int{2, 6, 10, 14, 18, 22, 26, 30, 34}, 36}}, "B: positions >= 2 with position % 4 == 2 differ"},
	}
	for _, tt := range tests {
		var all Positions
		for _, b := range tt.batches {
			var s Positions
			s.AddBatch(b.ps, b.size)
			all.Merge(s)
		}
		if got := all.Note("B"); got != tt.note {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.note)
		}
	}
}
