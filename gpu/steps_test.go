package gpu

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/cctest"
)

// TestStepsCMatchesGo compiles testdata/steps_driver.c, which runs one
// step of the bulk check through gpu/kernels/steps.cuh (what check_steps
// does with each row and with the step's record) as a device's blocks
// would, one after another, with the system C compiler, and reads its
// records with readStepRecord, the code that reads the device's: the rows
// differing from their row alone and in the reference batch, the panel
// digests and the sum must be what the formulas of steps.cuh give, the
// second run of a step on the same bitmaps must write the same record,
// and the bitmaps must be zero after it. Over rows that fill bitmap words
// and not, panels shorter and longer than the step, taps compared or
// not, with and without a reference batch, one block and several. It
// proves the record's layout and the kernel's logic before they reach a
// GPU (TestCheckPrefixesMatchesCompare checks the device). Skipped when cc
// is missing.
func TestStepsCMatchesGo(t *testing.T) {
	bin := cctest.Build(t, "kernels", filepath.Join("testdata", "steps_driver.c"), "the C version of the bulk check's step")
	rng := rand.New(rand.NewPCG(3, 4))
	type tc struct {
		n, panel, words, grid, threads int
		cmp, ref, taps                 bool
		differ                         float64 // the share of rows made to differ from each side
	}
	var cases []tc
	for _, n := range []int{1, 31, 32, 33, 100, 700} {
		for _, c := range []struct{ cmp, ref, taps bool }{{true, true, true}, {false, true, true}, {false, false, false}, {true, false, true}} {
			for _, differ := range []float64{0, 0.05, 1} {
				cases = append(cases, tc{n: n, panel: 64, words: (n+31)/32 + 1, grid: 1 + n%7, threads: 128, cmp: c.cmp, ref: c.ref, taps: c.taps, differ: differ})
			}
		}
	}
	var req bytes.Buffer
	var want []string
	var what []string
	var steps []*PrefixStep
	for _, c := range cases {
		d, tp := make([]uint64, c.n), make([]uint64, c.n)
		alone, aloneT, ref, refT := make([]uint64, c.n), make([]uint64, c.n), make([]uint64, c.n), make([]uint64, c.n)
		st := &PrefixStep{Items: c.n}
		for r := range c.n {
			d[r] = rng.Uint64()
			if c.taps {
				tp[r] = rng.Uint64()
			}
			alone[r], aloneT[r], ref[r], refT[r] = d[r], tp[r], d[r], tp[r]
			// a side differs in the values, or in the taps only (seen only when compared)
			if rng.Float64() < c.differ {
				if rng.IntN(2) == 0 || !c.taps {
					alone[r]++
				} else {
					aloneT[r]++
				}
			}
			if rng.Float64() < c.differ {
				if rng.IntN(2) == 0 || !c.taps {
					ref[r] ^= 1 << 40
				} else {
					refT[r] ^= 1 << 40
				}
			}
			if alone[r] != d[r] || c.cmp && aloneT[r] != tp[r] {
				st.Alone = append(st.Alone, r)
			}
			if c.ref && (ref[r] != d[r] || c.cmp && refT[r] != tp[r]) {
				st.Ref = append(st.Ref, r)
			}
			st.Sum += splitmixFinal(d[r] ^ uint64(r)*0x9e3779b97f4a7c15)
			if c.cmp {
				st.Sum += splitmixFinal(tp[r] ^ ^(uint64(r) * 0x9e3779b97f4a7c15))
			}
		}
		p := min(c.n, c.panel)
		st.Panel = d[:p]
		if c.taps {
			st.PanelTaps = tp[:p]
		}
		if len(st.Alone) == 0 {
			st = nil
		}
		fmt.Fprintf(&req, "%d %d %d %d %d %d %d\n", c.n, c.panel, c.words, b2i(c.cmp), b2i(c.ref), c.grid, c.threads)
		for r := range c.n {
			fmt.Fprintf(&req, "%x %x %x %x %x %x\n", d[r], tp[r], alone[r], aloneT[r], ref[r], refT[r])
		}
		w := fmt.Sprintf("%+v", c)
		want = append(want, "", "", "zero")
		what = append(what, w+", first run", w+", second run", w+", the bitmaps after")
		steps = append(steps, st, st, nil)
	}
	got := cctest.Run(t, bin, &req)
	if len(got) != len(want) {
		t.Fatalf("driver wrote %d lines, want %d", len(got), len(want))
	}
	for i, line := range got {
		c := cases[i/3]
		if i%3 == 2 {
			if line != "zero" {
				t.Errorf("%s: %s", what[i], line)
			}
			continue
		}
		rec, err := hex.DecodeString(line)
		if err != nil || len(rec) != stepRecordSize(c.panel, c.words) {
			t.Fatalf("%s: record of %d bytes (%v), want %d", what[i], len(rec), err, stepRecordSize(c.panel, c.words))
		}
		st, err := readStepRecord(rec, c.n, c.n, c.panel, c.words, c.taps)
		if err != nil {
			t.Errorf("%s: %v", what[i], err)
			continue
		}
		if w := steps[i]; !reflect.DeepEqual(st, w) {
			t.Errorf("%s:\nread %+v\nwant %+v", what[i], st, w)
		}
		if st == nil && !strings.HasPrefix(line, "00000000") {
			t.Errorf("%s: no row differs, count %s", what[i], line[:8])
		}
	}
}

// splitmixFinal is splitmix64's finalizer (st_mix of steps.cuh).
func splitmixFinal(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
