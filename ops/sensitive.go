package ops

import (
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

// Sensitive is a token op (CaseOp.Token) with a sensitive draw and row
// power (fuzz/inputs/sensitive.go): rmsnorm, gemm and logprob. attn_decode's
// requests span several tensors; fuzz draws them on its own
// (fuzz/inputs/sensitive_attn.go).
type Sensitive interface {
	// SensitiveRows is the rows of batch in of case c (inputs of dtype
	// dt, outputs out, compared in cmp), slot j of in holding row key
	// keys[j], measured against family f; mix is the generator's
	// splitmix64 (a gemm row is measured on column mix(seed^key) % N,
	// the column its boundary nudge tunes).
	SensitiveRows(c spec.Case, in In, keys []int, dt, out, cmp oracle.DType, f *power.Family, mix func(uint64) uint64) SensitiveRows
}

// SensitiveRows is one batch's rows of a Sensitive op, slot by slot; its
// methods may run concurrently for different slots.
type SensitiveRows interface {
	// Nudge steers x, a candidate of slot j's row, onto a rounding
	// boundary as the op's boundary draw does, aiming one fp32 ulp to
	// the odd side of the midpoint when odd.
	Nudge(x []float32, j int, odd bool)
	// Knob is the index of the finest knob of x, slot j's nudged
	// candidate.
	Knob(x []float32, j int) int
	// Check returns a function that stores v in x[k] (x: a candidate of
	// slot j) and returns the alternatives x shows then.
	Check(x []float32, j int) (func(k int, v float32) power.Set, error)
	// Shows is the alternatives the batch's own row of slot j shows.
	Shows(j int) (power.Set, error)
}

// Incremental measures one candidate row as its elements change (power's
// RMSNormCheck and GEMMCheck).
type Incremental interface {
	Set(k int, v float32)
	Shows() power.Set
}

// CheckOf is SensitiveRows.Check's function for c, made with err: it
// stores v in element k through c and returns what c shows then.
func CheckOf(c Incremental, err error) (func(k int, v float32) power.Set, error) {
	if err != nil {
		return nil, err
	}
	return func(k int, v float32) power.Set {
		c.Set(k, v)
		return c.Shows()
	}, nil
}
