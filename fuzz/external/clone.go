package external

import (
	"context"
	"fmt"
	"runtime"
)

// AutoProcs is Target.Procs when Options.Procs is 0: one process for every
// two CPU cores, at most 8. What a process spends on a KV cut is mostly
// host work (an attention library plans a kernel for every new shape:
// torch's cuDNN SDPA takes about 75 ms of one core a shape, then 0.1 ms),
// so the processes divide it; on 2 cores a scan keeps one.
func AutoProcs() int { return min(8, max(1, runtime.NumCPU()/2)) }

// Procs is how many processes of the adapter a path scan spreads its
// frames of KV cuts over: Options.Procs, or AutoProcs when that is 0.
func (t *Target) Procs() int {
	if t.opts.Procs > 0 {
		return t.opts.Procs
	}
	return AutoProcs()
}

// Clone starts another process of t's command line with t's options and
// returns it as a target of its own, after checking that it is the same
// adapter: its hello names the same op, name, schedule, device and
// description, and takes the same frames. The clone is closed by Close
// (and by CloseAll); it is not registered under a name.
func (t *Target) Clone(ctx context.Context) (*Target, error) {
	c, err := NewContext(ctx, t.cmdline, t.op, t.opts)
	if err != nil {
		return nil, fmt.Errorf("a second process of %s: %w", t.info.Name, err)
	}
	track(c)
	for _, k := range []string{"op", "name", "schedule", "device", "about", "scan", "scan_cuts"} {
		if c.hello[k] != t.hello[k] {
			c.Close()
			return nil, fmt.Errorf("a second process of %s says %s %q in its hello, the first %q: not the same adapter", t.info.Name, k, c.hello[k], t.hello[k])
		}
	}
	c.info = t.info
	return c, nil
}
