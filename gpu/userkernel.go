//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// userKernel is the target kernel:NAME of a manifest: the user's PTX or
// cubin loaded into the device's context, launched once per batch on the
// whole batch with the manifest's parameter order and geometry.
type userKernel struct {
	m    *Manifest
	d    *Device
	fn   cu.Function
	info target.Info
	// owned by the device's goroutine
	args []uint64
	argp []unsafe.Pointer
}

// NewUserKernel loads the manifest's image on the default device and
// returns its target. Run it in a worker subprocess (`bitparity run
// --kernel`): a user kernel that faults leaves the CUDA context unusable.
func NewUserKernel(m *Manifest) (target.Target, error) {
	d, err := Default()
	if err != nil {
		return nil, err
	}
	k := &userKernel{m: m, d: d, info: m.Info(deviceName(d))}
	err = d.do(func() error {
		mod, loaded, err := loadUserImage(m, d.name)
		if err != nil {
			return err
		}
		k.info.Models += "; loaded " + loaded
		if k.fn, err = mod.Function(m.Entry); err != nil {
			return fmt.Errorf("gpu: %s has no kernel %s: %w", m.ImagePath, m.Entry, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// loadUserImage loads the manifest's fat image when it has one, else (or
// when the driver refuses it) its PTX or cubin, and says which it loaded.
func loadUserImage(m *Manifest, device string) (cu.Module, string, error) {
	var refused error
	if m.Fatbin != nil {
		mod, err := cu.LoadData(string(m.Fatbin))
		if err == nil {
			return mod, "fat image " + filepath.Base(m.FatbinPath), nil
		}
		refused = err
	}
	mod, err := cu.LoadData(string(m.Image))
	if err != nil {
		return cu.Module{}, "", fmt.Errorf("gpu: load %s on %s: %w", m.ImagePath, device, err)
	}
	loaded := filepath.Base(m.ImagePath)
	switch {
	case refused != nil:
		loaded += fmt.Sprintf(" (the driver refused %s: %v)", filepath.Base(m.FatbinPath), refused)
	case m.FatbinPath != "":
		loaded += fmt.Sprintf(" (no %s here)", filepath.Base(m.FatbinPath))
	}
	return mod, loaded, nil
}

func (k *userKernel) Info() target.Info { return k.info }

// Run launches the kernel on the whole batch b and returns the selected
// rows on the host, with the attention kernel's lse (when its manifest
// names it) as their taps, one a row. The output buffers are filled with
// 0xff bytes (NaN in every dtype) before the launch, so values the kernel
// never writes show.
// A launch or synchronisation error (an illegal address, a sticky error)
// wraps target.ErrTargetCrashed.
func (k *userKernel) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	m := k.m
	if b.Op != m.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", k.info.Name, m.Op, b.Op)
	}
	if !slices.Contains(m.In, b.In) || !slices.Contains(m.Out, b.OutDType()) {
		return nil, fmt.Errorf("target %s: %s -> %s: %w (manifest in %v out %v)", k.info.Name, b.In, b.OutDType(), ErrUnsupported, m.In, m.Out)
	}
	sel, err := oracle.SelectRows(rows, b.Rows())
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	in, err := KernelInputs(b, k.d.sms)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	n, cols, outDT := b.Rows(), b.Cols(), b.OutDType()
	out := &target.Output{Rows: sel, Cols: cols, DType: outDT, Values: make([]float32, len(sel)*cols)}
	if n == 0 {
		return out, nil
	}
	err = k.d.do(func() error {
		d := k.d
		var bufs []*buffer
		defer func() { d.pool.put(bufs...) }()
		ptrs := map[string]*buffer{}
		for name, v := range in.Tensors {
			var buf *buffer
			var err error
			if v.Ints != nil {
				buf, err = d.uploadInts(v.Ints, true)
			} else {
				buf, err = d.upload(b.In, v.Vals)
			}
			if err != nil {
				return err
			}
			bufs = append(bufs, buf)
			ptrs[name] = buf
		}
		ybytes := n * cols * dsize(outDT)
		y, err := d.pool.get(ybytes)
		if err != nil {
			return err
		}
		bufs = append(bufs, y)
		ptrs["y"] = y
		if err := cu.MemsetD8(y.ptr, 0xff, int64(ybytes)); err != nil {
			return fmt.Errorf("%w: gpu: clear the output: %w", target.ErrTargetCrashed, err)
		}
		var lse *buffer // attention's optional fp32 log-sum-exp, one a row
		if slices.Contains(m.Params, "lse") {
			if lse, err = d.pool.get(4 * n); err != nil {
				return err
			}
			bufs = append(bufs, lse)
			ptrs["lse"] = lse
			if err := cu.MemsetD8(lse.ptr, 0xff, int64(4*n)); err != nil {
				return fmt.Errorf("%w: gpu: clear lse: %w", target.ErrTargetCrashed, err)
			}
		}
		if err := k.launch(d.stream, ptrs, in.Sizes, &in, b.In, outDT); err != nil {
			return err
		}
		if err := cu.Synchronize(); err != nil {
			return fmt.Errorf("%w: %s on %d rows: %w", target.ErrTargetCrashed, m.Entry, n, err)
		}
		host := d.stage(ybytes)
		if err := d.fromDevice(host, y, 0); err != nil {
			return fmt.Errorf("%w: %w", target.ErrTargetCrashed, err)
		}
		row := cols * dsize(outDT)
		for i, r := range sel {
			decode(out.Values[i*cols:(i+1)*cols], outDT, host[r*row:(r+1)*row])
		}
		if lse == nil {
			return nil
		}
		host = d.stage(4 * n)
		if err := d.fromDevice(host, lse, 0); err != nil {
			return fmt.Errorf("%w: %w", target.ErrTargetCrashed, err)
		}
		out.TapCols, out.Taps = 1, make([]float32, len(sel))
		for i, r := range sel {
			decode(out.Taps[i:i+1], oracle.FP32, host[4*r:4*r+4])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	return out, nil
}

// launch queues the kernel on stream st (the device's own or a side
// stream of its lane) with the manifest's parameter order and the geometry
// of shape (under do; not waited for). A launch error wraps
// target.ErrTargetCrashed.
func (k *userKernel) launch(st cu.Stream, ptrs map[string]*buffer, shape map[string]int64, a *KernelArgs, in, out oracle.DType) error {
	m := k.m
	grid, block, shared, err := m.Geometry(shape)
	if err != nil {
		return err
	}
	k.args = k.args[:0]
	for _, p := range m.Params {
		var v uint64
		switch p {
		case "eps":
			v = uint64(math.Float32bits(a.Eps))
		case "scale":
			v = uint64(math.Float32bits(a.Scale))
		case "causal":
			v = uint64(a.Causal)
		case "in_dtype":
			v = uint64(in)
		case "out_dtype":
			v = uint64(out)
		default:
			if bf, ok := ptrs[p]; ok {
				v = uint64(bf.ptr)
			} else {
				v = uint64(shape[p])
			}
		}
		k.args = append(k.args, v)
	}
	k.argp = k.argp[:0]
	for i := range k.args {
		k.argp = append(k.argp, unsafe.Pointer(&k.args[i]))
	}
	if err := k.fn.Launch(grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, st, k.argp); err != nil {
		return fmt.Errorf("%w: launch %s grid %v block %v shared %d: %w", target.ErrTargetCrashed, m.Entry, grid, block, shared, err)
	}
	return nil
}
