package ops

// Explicit reads the tensors of a case that carries them (spec.Data) for
// an op's FromData: fuzz's reader of hex bits in the case's input dtype.
type Explicit interface {
	// Tensor returns the want values of tensor name, each read in the
	// case's input dtype; an error names a missing tensor, a count other
	// than want or a value that does not parse.
	Tensor(name string, want int) ([]float32, error)
	// Budget refuses counts of input values (spec.SatMul products) whose
	// sum exceeds spec.MaxElements.
	Budget(counts ...int) error
}
