//go:build cuda

package gpu

import (
	"fmt"
	"sync"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"gorgonia.org/cu"
)

// DeviceCount is the number of GPUs this process sees (CUDA_VISIBLE_DEVICES
// applies: a worker started with one id sees one GPU, as ordinal 0).
func DeviceCount() (int, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return 0, fmt.Errorf("gpu: count devices: %w", err)
	}
	return n, nil
}

var (
	allOnce sync.Once
	all     []*Device
	allErr  error
)

// Devices opens every GPU this process sees, once per process: ordinal 0 is
// Default(), the others are opened with Open in order.
func Devices() ([]*Device, error) {
	allOnce.Do(func() {
		n, err := DeviceCount()
		if err != nil {
			allErr = err
			return
		}
		if n == 0 {
			allErr = fmt.Errorf("gpu: no device found")
			return
		}
		d0, err := Default()
		if err != nil {
			allErr = err
			return
		}
		all = []*Device{d0}
		for i := 1; i < n; i++ {
			d, err := Open(i)
			if err != nil {
				allErr = fmt.Errorf("gpu: open device %d of %d: %w", i, n, err)
				all = nil
				return
			}
			all = append(all, d)
		}
	})
	return all, allErr
}

// Replicas returns t on every GPU this process sees (target.Replicated, for
// the cross_device relation): t itself for its own device, first, then a
// copy with the same kernel and schedule policy on each other device, in
// ordinal order. Info().Device names each one's device.
func (t *Target) Replicas() ([]target.Target, error) {
	ds, err := Devices()
	if err != nil {
		return nil, err
	}
	out := []target.Target{t}
	for _, d := range ds {
		if d == t.dev {
			continue
		}
		r := *t
		r.dev = d
		r.info.Device = deviceName(d)
		out = append(out, &r)
	}
	return out, nil
}

// The cross_device pairs: each exact kernel (cuda-<op>) on every GPU of the
// host. With one GPU visible the relation checks determinism and says so.
func init() {
	for _, op := range spec.Ops {
		target.RegisterPair(target.Pair{Op: op, Relation: spec.RelCrossDevice, Targets: []string{Name(op)}})
	}
}
