//go:build !linux

package external

import (
	"os"
	"os/exec"
)

// setProcAttr leaves the defaults: outside Linux the harness kills the
// shell only, and the adapter sees end of input on stdin.
func setProcAttr(cmd *exec.Cmd) {}

// killGroup kills the adapter's shell.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// growPipe leaves the pipe's default size.
func growPipe(f *os.File) {}
