package target

import (
	"errors"
	"fmt"
)

// Replicated is a target that can run on every device of the host: the GPU
// targets (package gpu) implement it. The cross_device relation compares
// its replicas; any other target runs on one device.
type Replicated interface {
	Target
	// Replicas returns the same target (same kernel, same schedule policy)
	// once per device of the host, the receiver's own device first; each
	// replica's Info().Device names its device.
	Replicas() ([]Target, error)
}

// CrossDevices returns the replicas cross_device compares for target t,
// one per device (Info().Device names it): t alone when t is not
// Replicated. One replica means the relation only checks determinism.
func CrossDevices(t Target) ([]Target, error) {
	rt, ok := t.(Replicated)
	if !ok {
		return []Target{t}, nil
	}
	rs, err := rt.Replicas()
	if err != nil {
		return nil, fmt.Errorf("replicas: %w", err)
	}
	if len(rs) == 0 {
		return nil, errors.New("replicas: none")
	}
	return rs, nil
}
