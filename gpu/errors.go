package gpu

import "errors"

// ErrNoCUDA is returned by Available (and wrapped by every GPU target
// factory) when this binary was built without the cuda build tag.
var ErrNoCUDA = errors.New("gpu: this bitparity was built without CUDA; rebuild with -tags cuda on a machine with the CUDA headers (make build does this where a GPU is found; see docs/gpu.md)")
