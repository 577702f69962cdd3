//go:build cuda

package gpu

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/spec"
)

// Device is one lane of a GPU (lanes.go): the GPU's CUDA context and
// loaded kernel modules, shared by its lanes, and the lane's own stream,
// call queue and pool of device buffers. Work on a lane runs through do
// (submit.go): one call at a time, in the order submitted, on the OS
// thread of a caller that drains the queue with the context current, so a
// Device is safe for concurrent use. All of a lane's launches and copies
// go to its stream, so a buffer returned to its pool may be reused by the
// next call at once. Waiting for queued work (wait) runs outside the
// queue: other callers queue theirs meanwhile.
//
// Open returns lane 0, whose stream is the context's default (legacy)
// stream; Lane gives the others.
type Device struct {
	queue  callQueue
	ctx    cu.CUContext
	stream cu.Stream // the lane's stream: the legacy default stream on lane 0
	root   *Device   // lane 0 (itself on lane 0)
	name   string
	ord    int
	sms    int
	cc     string // compute capability, "9.0"
	fns    map[string]cu.Function
	images []ModuleImage // which image of each module was loaded (lane 0)

	// lanes[i] is lane i >= 1, once made (lane 0 only; lanes.go); laneMu
	// serializes their making
	laneMu sync.Mutex
	lanes  [MaxStreams]atomic.Pointer[Device]

	// compares in flight (inflight.go): free slots
	slotMu sync.Mutex
	slots  []*slot

	// owned by the call running (do, locked)
	pool      pool
	pairCache pairCache
	ident     *buffer // int64 0, 1, ..., identN-1 (pairs.go)
	identN    int
	gens      genCache
	shared    sharedCache // shared tensors (weights) lately uploaded
	ring      uploadRing  // page-locked memory small uploads are queued from
	staging   []byte      // host staging for large uploads and for downloads
	pinned    bool        // staging is page-locked (cuMemAllocHost)
	args      []uint64    // kernel parameter values
	argp      []unsafe.Pointer
	fan       *fan // side streams of fanOut, once made
	// timeSites makes the queue time its calls by the function that
	// submitted them (benchmarks; set before any call, never changed).
	timeSites bool
	// around, when set (benchmarks measuring the kernels' device time),
	// wraps every kernel launch: it must call launch once.
	around func(kernel string, launch func() error) error
}

var (
	defOnce sync.Once
	def     *Device
	defErr  error
)

// CUDABuild says whether this build has the cuda build tag (GPU targets,
// user kernels). It does.
const CUDABuild = true

// Default opens device 0 once per process.
func Default() (*Device, error) {
	defOnce.Do(func() { def, defErr = Open(0) })
	return def, defErr
}

// Available reports whether a GPU can be opened and its kernels loaded.
func Available() error {
	_, err := Default()
	return err
}

// kernels lists each module's entry points.
var kernels = map[string][]string{
	"attention": {"prefill", "decode_split", "decode_combine"},
	"compare":   {"compare_rows", "digest_rows", "check_steps"},
	"gemm":      {"gemm"},
	"gen":       {"gen_values"},
	"logprob":   {"logprob"},
	"moe_route": {"moe_route"},
	"nudge":     {"nudge_rmsnorm", "nudge_gemm"},
	"probe":     {"probe_max", "probe_explog", "probe_convert"},
	"quant_fp8": {"fp8_amax_rows", "fp8_amax_all", "fp8_quantize"},
	"rmsnorm":   {"rmsnorm"},
}

// Open creates a context on GPU ordinal and loads the embedded kernel
// modules: each module's fat image, whose machine code for the GPU at hand
// loads without a compile, or its PTX, which the driver JIT-compiles
// (moduleImage decides; Images says which).
func Open(ordinal int) (*Device, error) {
	d := &Device{ord: ordinal, fns: map[string]cu.Function{}}
	d.root = d
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.init(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Device) init() error {
	n, err := cu.NumDevices()
	if err != nil {
		return fmt.Errorf("gpu: count devices: %w", err)
	}
	if d.ord < 0 || d.ord >= n {
		return fmt.Errorf("gpu: device %d requested, %d present", d.ord, n)
	}
	dev, err := cu.GetDevice(d.ord)
	if err != nil {
		return fmt.Errorf("gpu: device %d: %w", d.ord, err)
	}
	if d.name, err = dev.Name(); err != nil {
		return fmt.Errorf("gpu: device %d name: %w", d.ord, err)
	}
	if d.sms, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return fmt.Errorf("gpu: device %d attributes: %w", d.ord, err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return fmt.Errorf("gpu: device %d compute capability: %w", d.ord, err)
	}
	d.cc = fmt.Sprintf("%d.%d", major, minor)
	if d.ctx, err = dev.MakeContext(cu.SchedAuto); err != nil {
		return fmt.Errorf("gpu: create context on %s: %w", d.name, err)
	}
	for _, mod := range Modules {
		m, im, err := d.loadModule(mod, major, minor)
		if err != nil {
			return err
		}
		d.images = append(d.images, im)
		for _, fn := range kernels[mod] {
			f, err := m.Function(fn)
			if err != nil {
				return fmt.Errorf("gpu: module %s has no kernel %s: %w", mod, fn, err)
			}
			d.fns[fn] = f
		}
	}
	return nil
}

// loadModule loads module mod's image (moduleImage) into the current
// context. A fat image the driver refuses falls back to the PTX, and the
// returned ModuleImage notes the refusal.
func (d *Device) loadModule(mod string, major, minor int) (cu.Module, ModuleImage, error) {
	img, im, err := moduleImage(mod, major, minor)
	if err != nil {
		return cu.Module{}, im, err
	}
	start := time.Now()
	m, err := cu.LoadData(string(img))
	im.Load = time.Since(start)
	if err == nil {
		return m, im, nil
	}
	if !im.Fatbin {
		return cu.Module{}, im, fmt.Errorf("gpu: load module %s (PTX %s) on %s: %w", mod, im.Code, d.name, err)
	}
	refused := err
	ptx, fb, err := ptxImage(kernelFS, "kernels", mod, fmt.Sprintf("the driver refused the fat image: %v", refused))
	if err != nil {
		return cu.Module{}, fb, err
	}
	start = time.Now()
	m, err = cu.LoadData(string(ptx))
	fb.Load = time.Since(start)
	if err != nil {
		return cu.Module{}, fb, fmt.Errorf("gpu: load module %s on %s: fat image: %v; PTX %s: %w", mod, d.name, refused, fb.Code, err)
	}
	return m, fb, nil
}

// Images lists, in Modules order, which image of each kernel module the
// device loaded (a fat image's machine code or PTX the driver compiled).
func (d *Device) Images() []ModuleImage { return d.root.images }

// LoadedImages opens the default device and returns its name with its
// compute capability, e.g. "NVIDIA H200 (sm_90)", and its Images.
func LoadedImages() (string, []ModuleImage, error) {
	d, err := Default()
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("%s (sm_%s)", d.name, strings.ReplaceAll(d.cc, ".", "")), d.Images(), nil
}

// Name is the GPU's name, e.g. "NVIDIA H200".
func (d *Device) Name() string { return d.name }

// SMs is the GPU's multiprocessor count.
func (d *Device) SMs() int { return d.sms }

// arg is one kernel parameter: every kernel parameter is 64 bits wide.
type arg = uint64

func ptrArg(b *buffer) arg {
	if b == nil {
		return 0
	}
	return uint64(b.ptr)
}

// launch runs kernel name on grid x block threads with the given
// parameters (under do) and reports launch errors.
func (d *Device) launch(name string, gx, gy, block int, params ...arg) error {
	return d.launchOn(d.stream, name, gx, gy, block, params...)
}

// launchOn is launch on stream s, one of the lane's (its own, or a side
// stream of fanOut) (under do).
func (d *Device) launchOn(s cu.Stream, name string, gx, gy, block int, params ...arg) error {
	f, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("gpu: no kernel %s", name)
	}
	if gx == 0 || gy == 0 {
		return nil
	}
	d.args = append(d.args[:0], params...)
	d.argp = d.argp[:0]
	for i := range d.args {
		d.argp = append(d.argp, unsafe.Pointer(&d.args[i]))
	}
	launch := func() error { return f.Launch(gx, gy, 1, block, 1, 1, 0, s, d.argp) }
	var err error
	if d.around != nil {
		err = d.around(name, launch)
	} else {
		err = launch()
	}
	if err != nil {
		return fmt.Errorf("gpu: launch %s grid %dx%d block %d: %w", name, gx, gy, block, err)
	}
	return nil
}

// sync waits for the lane's stream and reports asynchronous kernel errors
// (under do).
func (d *Device) sync(what string) error {
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("gpu: %s: %w", what, err)
	}
	return nil
}

// stage returns the host staging buffer with at least n bytes: page-locked
// memory up to maxPinned bytes (grown as needed, never shrunk), pageable Go
// memory above (under do).
func (d *Device) stage(n int) []byte {
	if cap(d.staging) >= n {
		return d.staging[:n]
	}
	if n <= maxPinned {
		size := min(max(n+n/4, 1<<20), maxPinned)
		if p, err := allocPinned(size); err == nil {
			if d.pinned {
				freePinned(d.staging)
			}
			d.staging, d.pinned = p, true
			return d.staging[:n]
		}
	}
	if d.pinned {
		freePinned(d.staging)
	}
	d.staging, d.pinned = make([]byte, n+n/4), false
	return d.staging[:n]
}

// toDevice copies host bytes to a pooled buffer on the lane's stream
// (under do): host from the upload ring (stageUpload) is copied
// asynchronously, in stream order before every later kernel; any other
// host memory is copied and waited for, so the caller may reuse it.
func (d *Device) toDevice(host []byte) (*buffer, error) {
	b, err := d.pool.get(len(host))
	if err != nil {
		return nil, err
	}
	if len(host) == 0 {
		return b, nil
	}
	if err := cu.MemcpyHtoDAsync(b.ptr, unsafe.Pointer(&host[0]), int64(len(host)), d.stream); err != nil {
		d.pool.put(b)
		return nil, fmt.Errorf("gpu: queue a copy of %d bytes to the device: %w", len(host), err)
	}
	if !d.ring.holds(host) {
		if err := d.stream.Synchronize(); err != nil {
			d.pool.put(b)
			return nil, fmt.Errorf("gpu: copy %d bytes to the device: %w", len(host), err)
		}
	}
	return b, nil
}

// fromDevice copies len(host) bytes at byte offset off of b into host, in
// the lane's stream order, and waits for them (under do).
func (d *Device) fromDevice(host []byte, b *buffer, off int) error {
	if err := d.queueFromDevice(host, b, off); err != nil {
		return err
	}
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("gpu: copy %d bytes to the host: %w", len(host), err)
	}
	return nil
}

// queueFromDevice queues fromDevice's copy and does not wait: host must
// stay untouched until the stream is synchronized (under do). Several
// copies queued so and one wait cost one round trip.
func (d *Device) queueFromDevice(host []byte, b *buffer, off int) error {
	if len(host) == 0 {
		return nil
	}
	if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), b.ptr+cu.DevicePtr(off), int64(len(host)), d.stream); err != nil {
		return fmt.Errorf("gpu: queue a copy of %d bytes to the host: %w", len(host), err)
	}
	return nil
}

// ComputeCapability returns the device's compute capability, e.g. "9.0"
// (empty when the driver did not say).
func (d *Device) ComputeCapability() string { return d.cc }

// deviceFingerprint fills e's device name, compute capability and CUDA
// version from device 0 when it opens (Fingerprint adds the driver and
// the kernel hash), and reports that this build has a device.
func deviceFingerprint(e *spec.Env) bool {
	if d, err := Default(); err == nil {
		e.GPU = d.Name()
		e.CC = d.ComputeCapability()
		e.CUDA = DriverCUDAVersion()
	}
	return true
}

// DriverCUDAVersion returns the CUDA version the driver supports, e.g.
// "13.0" (cuDriverGetVersion).
func DriverCUDAVersion() string {
	v := cu.Version()
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
