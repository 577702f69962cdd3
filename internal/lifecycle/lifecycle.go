// Package lifecycle is a command's process: the context that the first
// SIGINT or SIGTERM cancels (a second ends the process), the CPU and
// mutex profiles of a run, and the garbage collector's target of a
// campaign (internal/gogc).
package lifecycle

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/bitparity/bitparity/internal/gogc"
)

// TuneGC sets the garbage collector's target of a campaign (gogc.Campaign)
// unless GOGC is set.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gogc.Campaign)
	}
}

// StopOnSignal returns a context cancelled by the first SIGINT or SIGTERM:
// the run stops generating cases, shrinks what was found for a bounded
// grace period and writes it. It says so on stderr, so a worker's log
// shows why it stopped. A second signal ends the process at once (exit
// 128 + the signal's number): every finding printed is already stored. A
// --procs or --gpus worker (worker true) takes every SIGTERM as the first:
// its SIGTERM is its parent's death, and Linux sends the parent-death
// signal again each time it hands the orphan to another thread of the
// dying parent (seen on a 16-core host: two SIGTERMs, and a worker that
// died without its result). stop releases the signals.
func StopOnSignal(stderr io.Writer, worker bool) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "run: %v: stopping; what was found is shrunk for a bounded time and written (a second signal ends the run at once)\n", s)
			cancel()
		case <-done:
			return
		}
		for {
			select {
			case s := <-sigs:
				if worker && s == syscall.SIGTERM {
					fmt.Fprintf(stderr, "run: %v again: the parent's death, signalled once for each of its threads; still stopping\n", s)
					continue
				}
				fmt.Fprintf(stderr, "run: %v again: exiting at once\n", s)
				n := 2
				if sig, ok := s.(syscall.Signal); ok {
					n = int(sig)
				}
				os.Exit(128 + n)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// Profiles starts a CPU profile into cpuPath and records lock contention
// (runtime/pprof "mutex", every event) for mutexPath, each when its path
// is not empty; stop writes them, saying on stderr what could not be
// written. An error names the file that cannot be created.
func Profiles(cpuPath, mutexPath string, stderr io.Writer) (stop func(), err error) {
	stopCPU, err := CPUProfile(cpuPath)
	if err != nil || mutexPath == "" {
		return stopCPU, err
	}
	f, err := os.Create(mutexPath)
	if err != nil {
		stopCPU()
		return nil, fmt.Errorf("--mutexprofile: %w", err)
	}
	runtime.SetMutexProfileFraction(1)
	return func() {
		if err := pprof.Lookup("mutex").WriteTo(f, 0); err != nil {
			fmt.Fprintf(stderr, "--mutexprofile: %v\n", err)
		}
		f.Close()
		stopCPU()
	}, nil
}

// CPUProfile starts a CPU profile into path (none when path is empty) and
// returns what stops it.
func CPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
