package ops

// WireTensor is one tensor of an op's input in the process protocol
// (docs/protocol.md, "request"): float values, which the request writes
// in the batch's input dtype, in parts written one after another (a
// decode's KV caches, request by request), or I32 integers (Int set).
type WireTensor struct {
	Name   string
	Shape  []int
	Floats [][]float32
	Ints   []int32
	Int    bool
}

// FloatTensor is the float tensor name of shape shape holding parts.
func FloatTensor(name string, shape []int, parts ...[]float32) WireTensor {
	return WireTensor{Name: name, Shape: shape, Floats: parts}
}

// IntTensor is the I32 tensor name of shape shape holding v.
func IntTensor(name string, shape []int, v []int32) WireTensor {
	return WireTensor{Name: name, Shape: shape, Ints: v, Int: true}
}

// Wire reads the tensors of a request frame for an op's FromWire; its
// errors name the frame and the field.
type Wire interface {
	// Floats returns the values and shape of float tensor name; an error
	// names a missing tensor or a shape of other than dims dimensions.
	Floats(name string, dims int) ([]float32, []int, error)
	// Ints returns the values of integer tensor name (I32 or I64).
	Ints(name string) ([]int64, error)
	// Eps is the request's eps (its eps_bits).
	Eps() (float32, error)
	// Bad is an error about field of the frame (`tensor "kv_lens"`).
	Bad(field, format string, a ...any) error
}

// WireReader reads the tensors of a request frame one after another for
// an op's FromWire and keeps the first error (Err): a read after it
// returns nothing, so FromWire checks once, before it uses a shape.
type WireReader struct {
	w   Wire
	err error
}

// ReadWire is a WireReader of w.
func ReadWire(w Wire) *WireReader { return &WireReader{w: w} }

// Floats is Wire.Floats: the values and shape of float tensor name, of
// dims dimensions.
func (r *WireReader) Floats(name string, dims int) ([]float32, []int) {
	if r.err != nil {
		return nil, nil
	}
	v, shape, err := r.w.Floats(name, dims)
	r.err = err
	return v, shape
}

// Ints is Wire.Ints: the values of integer tensor name.
func (r *WireReader) Ints(name string) []int64 {
	if r.err != nil {
		return nil
	}
	v, err := r.w.Ints(name)
	r.err = err
	return v
}

// Eps is Wire.Eps: the request's eps.
func (r *WireReader) Eps() float32 {
	if r.err != nil {
		return 0
	}
	eps, err := r.w.Eps()
	r.err = err
	return eps
}

// Err is the first error of the reads, nil when all succeeded.
func (r *WireReader) Err() error { return r.err }
