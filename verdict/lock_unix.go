//go:build unix

package verdict

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive flock(2) on f without waiting; held is false
// when another open file holds it.
func flock(f *os.File) (held bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
