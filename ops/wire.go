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
