package inputs

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// rowRNG is the value stream of one tensor row: splitmix64 seeded by
// mix(seed, tensor, row). A row's values depend only on (seed, tensor, row),
// never on how many rows the batch has, so batches of 928 and 2274 rows
// share their first 928 rows bit for bit.
type rowRNG struct{ s uint64 }

// Splitmix is values.Mix, splitmix64's step: the mixer of every seeded
// stream (rows, item choices, a campaign's case seeds).
func Splitmix(x uint64) uint64 { return values.Mix(x) }

// tensor ids, part of the generator's contract (both versions).
const (
	tensorX       = values.TensorX
	tensorW       = values.TensorW
	tensorLogits  = values.TensorLogits
	tensorTargets = values.TensorTargets
	tensorQ       = values.TensorQ
	tensorK       = values.TensorK
	tensorV       = values.TensorV
)

func newRowRNG(seed, tensor, row uint64) *rowRNG {
	return &rowRNG{s: Splitmix(Splitmix(seed^tensor*0x9e3779b97f4a7c15) ^ row)}
}

func (r *rowRNG) next() uint64 { r.s += 0x9e3779b97f4a7c15; return Splitmix(r.s) }

// uniform returns a float64 in [0, 1) with 53 random bits.
func (r *rowRNG) uniform() float64 { return float64(r.next()>>11) / (1 << 53) }

// normal returns an N(0,1) sample (Box-Muller, first value only, so each
// call consumes exactly two draws).
func (r *rowRNG) normal() float64 {
	u1 := r.uniform()
	u2 := r.uniform()
	if u1 < 1e-300 {
		u1 = 1e-300
	}
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// fillRow writes n values of distribution dist (rounded to dt) for one row.
func fillRow(dst []float32, dist spec.Dist, dt oracle.DType, scale float64, r *rowRNG) error {
	round := func(v float64) float32 { return oracle.Round(dt, float32(v)) }
	switch dist {
	case spec.DistNormal, "", spec.DistBoundary: // boundary: nudged after (nudgeBoundary)
		for i := range dst {
			dst[i] = round(r.normal() * scale)
		}
	case spec.DistHeavy:
		for i := range dst {
			n := r.normal()
			a, b, c := r.normal(), r.normal(), r.normal()
			dst[i] = round(n / math.Sqrt((a*a+b*b+c*c)/3+1e-12) * scale)
		}
	case spec.DistOutlier:
		for i := range dst {
			dst[i] = round(r.normal() * scale)
		}
		at := int(r.next() % uint64(len(dst)))
		dst[at] = round(float64(dst[at]) * 1000)
	case spec.DistConstant:
		v := round(r.normal() * scale)
		for i := range dst {
			dst[i] = v
		}
	case spec.DistSignedZero:
		for i := range dst {
			switch r.next() % 3 {
			case 0:
				dst[i] = 0
			case 1:
				dst[i] = float32(math.Copysign(0, -1))
			default:
				dst[i] = round(r.normal() * scale)
			}
		}
	case spec.DistSubnormal:
		tiny := float64(oracle.SmallestNormal(dt))
		for i := range dst {
			dst[i] = round((r.uniform()*2 - 1) * tiny)
		}
	case spec.DistNearOverflow:
		big := float64(oracle.MaxFinite(dt))
		for i := range dst {
			dst[i] = round((0.25 + 0.75*r.uniform()) * big * math.Copysign(1, r.normal()))
		}
	case spec.DistTies:
		// small multiples of 1/8 and their powers of two: many exact sums
		// and products land on rounding ties.
		for i := range dst {
			m := float64(int(r.next()%33) - 16)
			e := int(r.next()%5) - 2
			dst[i] = round(math.Ldexp(m/8, e) * scale)
		}
	default:
		return fmt.Errorf("unknown value distribution %q", dist)
	}
	return nil
}

// fill generates rows x cols values of tensor id for rows [0, rows): row i
// is the row with key rowKey(i) (i when rowKey is nil) of generator version
// 2 (package values) or, for cases of version 1, fillRow's from
// newRowRNG(seed, tensor, key). Rows are independent, so large tensors
// fill on GOMAXPROCS goroutines with the same bits.
func fill(c spec.Case, tensor uint64, dist spec.Dist, dt oracle.DType, scale float64, rows, cols int, rowKey func(i int) uint64) ([]float32, error) {
	out := make([]float32, rows*cols)
	v2 := values.Tensor{Seed: c.Seed, ID: tensor, Dist: dist, DType: dt, Scale: scale}
	row := func(i int) error {
		key := uint64(i)
		if rowKey != nil {
			key = rowKey(i)
		}
		if c.GenVersion == 2 {
			return v2.Row(out[i*cols:(i+1)*cols], key)
		}
		return fillRow(out[i*cols:(i+1)*cols], dist, dt, scale, newRowRNG(c.Seed, tensor, key))
	}
	if rows == 0 {
		return out, nil
	}
	// the first row reports a bad distribution; the others cannot fail then.
	if err := row(0); err != nil {
		return nil, err
	}
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || rows*cols < parallelFill {
		for i := 1; i < rows; i++ {
			row(i)
		}
		return out, nil
	}
	var wg sync.WaitGroup
	per := (rows - 1 + workers - 1) / workers
	for lo := 1; lo < rows; lo += per {
		hi := min(lo+per, rows)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				row(i)
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// parallelFill is the tensor size from which fill uses several goroutines.
const parallelFill = 1 << 15

func positive(name string, v int) error {
	if v < 1 {
		return fmt.Errorf("shape: %s = %d, want >= 1", name, v)
	}
	return nil
}

// Budget refuses counts of input values (spec.SatMul products) whose sum
// exceeds spec.MaxElements, the limit Case.Validate holds a case to (GEMM's
// output is not an input and not counted).
func Budget(c spec.Case, counts ...int) error {
	if spec.SatAdd(counts...) > spec.MaxElements {
		return fmt.Errorf("case too large: %s %+v needs more than %d input values (the memory budget)", c.Op, c.Shape, spec.MaxElements)
	}
	return nil
}

// caseDTypes returns the input and output dtypes case c names.
func caseDTypes(c spec.Case) (in, out oracle.DType, err error) {
	if in, err = oracle.ParseDType(string(c.In)); err != nil {
		return in, out, fmt.Errorf("case input dtype: %w", err)
	}
	if out, err = oracle.ParseDType(string(c.Out)); err != nil {
		return in, out, fmt.Errorf("case output dtype: %w", err)
	}
	return in, out, nil
}

// Of derives the batch of case c from its seed (or its explicit Data)
// by the case's generator version (GenVersion 2: package values; 1,
// or 0 for a case that does not say, fillRow): the same case gives the
// same bits on every machine. Shape errors and cases over the memory
// budget are errors, never panics.
func Of(c spec.Case) (*target.Batch, error) {
	in, out, err := caseDTypes(c)
	if err != nil {
		return nil, err
	}
	if c.Data != nil {
		return explicitInputs(c, in, out)
	}
	if c.GenVersion < 0 || c.GenVersion > spec.GeneratorVersion {
		return nil, fmt.Errorf("case made by generator version %d, this build has versions 1 to %d: only cases with explicit data replay across generator versions", c.GenVersion, spec.GeneratorVersion)
	}
	b := &target.Batch{Op: c.Op, In: in, Out: out}
	if c.Dist == spec.DistSensitive {
		return sensitiveInputs(c)
	}
	k, ok := all.Case(c.Op)
	if !ok {
		return nil, fmt.Errorf("unknown op %q", c.Op)
	}
	if k.Token() {
		err = tokenInputs(c, b, nil, false, nil)
	} else {
		err = attnInputs(c, b, nil, false)
	}
	if err != nil {
		return nil, err
	}
	if c.Dist == spec.DistBoundary {
		if err := nudgeBoundary(c, b, nil); err != nil {
			return nil, err
		}
	}
	return b, nil
}
