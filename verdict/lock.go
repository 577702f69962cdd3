package verdict

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LockSuffix follows a result file's name in the name of its lock file
// (R + ".lock"), which a run holds from before it touches R's journal
// until R is written.
const LockSuffix = ".lock"

// ErrLocked is wrapped by the error of a Recorder whose result file
// another live run is writing.
var ErrLocked = errors.New("in use by another run")

// resultLock is an exclusive flock(2) on the lock file beside a result
// file. The kernel releases it when the process ends, however it ends, so
// a crashed run leaves no stale lock: only the file, which the next run
// locks again. A run removes the file while it still holds the lock; a run
// that opened the file just before may lock the removed file, and so
// checks, once locked, that its file is still the one at the path, and
// tries again if not.
type resultLock struct {
	path string
	f    *os.File
}

// lockResult takes the lock of the result file result without waiting;
// a live run holding it is an error wrapping ErrLocked that names it.
func lockResult(result string) (*resultLock, error) {
	path := result + LockSuffix
	for range 100 { // each round lost to a releasing run
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", result, err)
		}
		held, err := flock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !held {
			pid := make([]byte, 32) // written by the holder once it held the lock
			n, _ := f.ReadAt(pid, 0)
			f.Close()
			who := "another run"
			if p := strings.TrimSpace(string(pid[:n])); p != "" {
				who = "the run of process " + p
			}
			return nil, fmt.Errorf("%s: %w: %s holds %s; give another --json, or wait for it to end", result, ErrLocked, who, path)
		}
		if mine, err := f.Stat(); err == nil {
			if there, err := os.Stat(path); err == nil && os.SameFile(mine, there) {
				f.Truncate(0)
				f.WriteString(strconv.Itoa(os.Getpid()) + "\n") // for the refusal's words only
				return &resultLock{path: path, f: f}, nil
			}
		}
		f.Close() // a releasing run removed it: lock the file now at path
	}
	return nil, fmt.Errorf("lock %s: the lock file kept changing", path)
}

// release removes the lock file and unlocks it (in that order: no other
// run may lock the file being removed and hold it alone).
func (l *resultLock) release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}
