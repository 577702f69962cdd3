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
// with their number, over a range that spans several chunks; for the
// exact target none, for the drift models the steps of the other
// schedule. Without taps only the values count.
func TestCheckPrefixesMatchesCompare(t *testing.T) {
	device(t)
	const n, hidden = 600, 512
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
		for _, taps := range []bool{true, false} {
			var want []PrefixDiff
			for v := 1; v <= n; v++ {
				ids := spec.Iota(v)
				o, err := h.Run(ctx, ids)
				if err != nil {
					t.Fatal(err)
				}
				rows := map[int]bool{}
				ds, err := o.Device.CompareRows(alone.Device, ids, ids, oracle.BF16)
				if err != nil {
					t.Fatal(err)
				}
				if taps {
					dt, err := o.DeviceTaps.CompareRows(alone.DeviceTaps, ids, ids, oracle.FP32)
					if err != nil {
						t.Fatal(err)
					}
					ds = append(ds, dt...)
				}
				o.Release()
				for _, d := range ds {
					rows[d.PosA] = true
				}
				if len(rows) > 0 {
					want = append(want, PrefixDiff{Items: v, Rows: len(rows)})
				}
			}
			got, err := h.CheckPrefixes(ctx, 1, n, alone, taps)
			if err != nil {
				t.Fatal(err)
			}
			if name != "cuda-rmsnorm" && len(want) == 0 {
				t.Errorf("%s, taps %v: no prefix differs from its rows alone: the test shows nothing", name, taps)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, taps %v: the bulk check flags %s, the exact compare %s", name, taps, short(got), short(want))
			}
			// a range inside the held rows, from a value past the first chunk
			sub, err := h.CheckPrefixes(ctx, 300, 450, alone, taps)
			if err != nil {
				t.Fatal(err)
			}
			in := slices.DeleteFunc(slices.Clone(want), func(p PrefixDiff) bool { return p.Items < 300 || p.Items > 450 })
			if !slices.Equal(sub, in) {
				t.Errorf("%s, taps %v, 300..450: the bulk check flags %s, the exact compare %s", name, taps, short(sub), short(in))
			}
		}
		alone.Release()
		if _, err := h.CheckPrefixes(ctx, 1, n+1, alone, true); err == nil {
			t.Errorf("%s: a check past the held rows succeeded", name)
		}
		h.Release()
		if _, err := h.CheckPrefixes(ctx, 1, n, alone, true); err == nil {
			t.Errorf("%s: a check of a released batch succeeded", name)
		}
	}
}

// short prints the first few prefixes of ps.
func short(ps []PrefixDiff) string {
	if len(ps) > 8 {
		return fmt.Sprintf("%v ... (%d)", ps[:8], len(ps))
	}
	return fmt.Sprint(ps)
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
