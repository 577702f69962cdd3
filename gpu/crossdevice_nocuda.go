//go:build !cuda

package gpu

// DeviceCount is the number of GPUs this process sees; without the cuda
// build tag it is always 0 with ErrNoCUDA.
func DeviceCount() (int, error) { return 0, ErrNoCUDA }
