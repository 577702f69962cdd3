//go:build cuda

package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestDigestRowsOnGPU: digest_rows gives every row the digest
// external.RowDigest gives its stored bits, for bf16, fp16 and fp32 rows
// of odd and even lengths, whole 16-byte vectors and not, shorter than a
// vector and longer than a block's round of loads.
func TestDigestRowsOnGPU(t *testing.T) {
	d := device(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const rows = 37
	for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		for _, cols := range []int{1, 2, 7, 8, 9, 64, 130, 4096, 4097} {
			o := &target.Output{Rows: spec.Iota(rows), Cols: cols, DType: dt, Values: make([]float32, rows*cols)}
			for i := range o.Values {
				o.Values[i] = oracle.Round(dt, float32(rng.NormFloat64()*4))
			}
			up, err := d.Upload(o)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 8*rows)
			err = d.do(func() error {
				ref, err := d.digestRows(up.(*devOut).buf, rows, cols, dt)
				if err != nil {
					return err
				}
				defer d.pool.put(ref)
				return d.fromDevice(got, ref, 0)
			})
			up.Release()
			if err != nil {
				t.Fatal(err)
			}
			bits, ws := encoded(dt, o.Values), dsize(dt)
			for r := range rows {
				words := make([]uint32, cols)
				for j := range words {
					at := bits[(r*cols+j)*ws:]
					if ws == 2 {
						words[j] = uint32(binary.LittleEndian.Uint16(at))
					} else {
						words[j] = binary.LittleEndian.Uint32(at)
					}
				}
				if g, w := binary.LittleEndian.Uint64(got[8*r:]), external.RowDigest(words); g != w {
					t.Errorf("%v, %d cols, row %d: digest_rows %016x, RowDigest %016x", dt, cols, r, g, w)
					break
				}
			}
		}
	}
}

// TestCheckPrefixesMatchesCompare: the bulk check flags exactly the
// prefixes of which the exact compare (Run, then compare_rows of the
// values and of the taps against the rows alone) finds differing rows,
// and names the same rows; its rows differing from the reference batch
// are compare_rows' against it, its panel digests digest_rows' of the
// same rows, and a second check gives the same records, over a range that
// spans several chunks; for the exact target none, for the drift models
// the steps of the other schedule. Without taps only the values count.
func TestCheckPrefixesMatchesCompare(t *testing.T) {
	device(t)
	const n, hidden, panel = 600, 512, 64
	b, err := inputs.Of(userCase(n, hidden, spec.BF16, spec.BF16, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"cuda-rmsnorm", "cuda-drift-rmsnorm-te-mod32", "cuda-drift-rmsnorm-vllm-256"} {
		tg, err := target.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := tg.(*Target).Hold(b)
		if err != nil {
			t.Fatal(err)
		}
		alone, err := h.Alone(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := h.Run(ctx, spec.Iota(n))
		if err != nil {
			t.Fatal(err)
		}
		for _, taps := range []bool{true, false} {
			var want []PrefixStep
			for v := 1; v <= n; v++ {
				o, err := h.Run(ctx, spec.Iota(v))
				if err != nil {
					t.Fatal(err)
				}
				st := PrefixStep{Items: v, Alone: differingRows(t, o, alone, v, taps), Ref: differingRows(t, o, ref, v, taps)}
				if len(st.Alone) > 0 {
					pos := spec.Iota(min(v, panel))
					if st.Panel, err = o.Device.(target.RowDigester).RowDigests(pos); err == nil {
						st.PanelTaps, err = o.DeviceTaps.(target.RowDigester).RowDigests(pos)
					}
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, st)
				}
				o.Release()
			}
			c := PrefixCheck{Items: spec.Iota(n + 1)[1:], Alone: alone, Ref: ref, Taps: taps, Panel: panel}
			got, err := h.CheckPrefixes(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if name != "cuda-rmsnorm" && len(want) == 0 {
				t.Errorf("%s, taps %v: no prefix differs from its rows alone: the test shows nothing", name, taps)
			}
			samePrefixSteps(t, fmt.Sprintf("%s, taps %v", name, taps), got, want)
			// the flagged prefixes again: the same records, sums included
			c.Items = nil
			for _, st := range got {
				c.Items = append(c.Items, st.Items)
			}
			if len(c.Items) > 0 {
				again, err := h.CheckPrefixes(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(again, got, func(a, b PrefixStep) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
					t.Errorf("%s, taps %v: the flagged prefixes checked again gave other records", name, taps)
				}
			}
			// a range inside the held rows, from a value past the first chunk
			c.Items = spec.Iota(451)[300:]
			sub, err := h.CheckPrefixes(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			in := slices.DeleteFunc(slices.Clone(want), func(p PrefixStep) bool { return p.Items < 300 || p.Items > 450 })
			samePrefixSteps(t, fmt.Sprintf("%s, taps %v, 300..450", name, taps), sub, in)
		}
		full := PrefixCheck{Items: spec.Iota(n + 1)[1:], Alone: alone, Ref: ref, Taps: true, Panel: panel}
		for _, bad := range []PrefixCheck{
			{Items: []int{1, n + 1}, Alone: alone, Taps: true},
			{Items: []int{5, 3}, Alone: alone, Taps: true},
			{Items: []int{0, 3}, Alone: alone, Taps: true},
		} {
			if _, err := h.CheckPrefixes(ctx, bad); err == nil {
				t.Errorf("%s: a check of prefixes %v of %d held rows succeeded", name, bad.Items, n)
			}
		}
		ref.Release()
		if _, err := h.CheckPrefixes(ctx, full); err == nil {
			t.Errorf("%s: a check against a released reference batch succeeded", name)
		}
		alone.Release()
		h.Release()
		if _, err := h.CheckPrefixes(ctx, full); err == nil {
			t.Errorf("%s: a check of a released batch succeeded", name)
		}
	}
}

// differingRows returns the rows 0..v-1 of o that differ from the same
// row of x (compare_rows), in their values or, when taps, their taps.
func differingRows(t *testing.T, o, x *target.Output, v int, taps bool) []int {
	t.Helper()
	ids := spec.Iota(v)
	ds, err := o.Device.CompareRows(x.Device, ids, ids, oracle.BF16)
	if err != nil {
		t.Fatal(err)
	}
	if taps {
		dt, err := o.DeviceTaps.CompareRows(x.DeviceTaps, ids, ids, oracle.FP32)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, dt...)
	}
	var rows []int
	for _, d := range ds {
		if !slices.Contains(rows, d.PosA) {
			rows = append(rows, d.PosA)
		}
	}
	slices.Sort(rows)
	return rows
}

// samePrefixSteps fails unless the bulk check's records got are want's,
// the sums aside (want has none).
func samePrefixSteps(t *testing.T, what string, got, want []PrefixStep) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: the bulk check flags %s, the exact compare %s", what, short(got), short(want))
		return
	}
	for i, g := range got {
		w := want[i]
		w.Sum = g.Sum
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: the bulk check's record\n%+v\nthe exact compare's\n%+v", what, g, w)
			return
		}
	}
}

// short prints the prefixes of the first few of ps.
func short(ps []PrefixStep) string {
	items := make([]string, len(ps))
	for i, p := range ps {
		items[i] = fmt.Sprintf("%d:%d", p.Items, len(p.Alone))
	}
	if len(items) > 8 {
		return fmt.Sprintf("%v ... (%d)", items[:8], len(items))
	}
	return fmt.Sprint(items)
}

// TestHoldLazy: a lazy batch (inputs.Lazy: the rows made on the
// device, nudged there for boundary) held gives the bits of the same case
// made on the host and uploaded, on every draw a scan uses: the rows
// alone, a prefix and the whole batch compare equal, values and taps.
func TestHoldLazy(t *testing.T) {
	device(t)
	tg, err := target.Lookup("cuda-rmsnorm")
	if err != nil {
		t.Fatal(err)
	}
	g := tg.(*Target)
	ctx := context.Background()
	const n, hidden = 300, 1024
	for _, dist := range []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy} {
		c := userCase(n, hidden, spec.BF16, spec.BF16, 7)
		c.GenVersion, c.Dist = spec.GeneratorVersion, dist
		host, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := inputs.Lazy(c, tg)
		if err != nil {
			t.Fatal(err)
		}
		if !lazy.Lazy() {
			t.Fatalf("%s: cuda-rmsnorm does not generate the case", dist)
		}
		hh, err := g.Hold(host)
		if err != nil {
			t.Fatal(err)
		}
		hl, err := g.Hold(lazy)
		if err != nil {
			t.Fatal(err)
		}
		same := func(what string, a, b *target.Output, rows int) {
			t.Helper()
			ids := spec.Iota(rows)
			dv, err := a.Device.CompareRows(b.Device, ids, ids, oracle.BF16)
			if err != nil {
				t.Fatal(err)
			}
			dt, err := a.DeviceTaps.CompareRows(b.DeviceTaps, ids, ids, oracle.FP32)
			if err != nil {
				t.Fatal(err)
			}
			if len(dv)+len(dt) > 0 {
				t.Errorf("%s, %s: %d rows and %d taps rows differ between the lazy and the uploaded batch", dist, what, len(dv), len(dt))
			}
			a.Release()
			b.Release()
		}
		for _, v := range []int{1, 77, n} {
			a, err := hh.Run(ctx, spec.Iota(v))
			if err != nil {
				t.Fatal(err)
			}
			b, err := hl.Run(ctx, spec.Iota(v))
			if err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprintf("rows 0..%d", v-1), a, b, v)
		}
		a, err := hh.Alone(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := hl.Alone(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		same("rows alone", a, b, n)
		hh.Release()
		hl.Release()
	}
}
