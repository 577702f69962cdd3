package s3test

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the test process dies
// without running its cleanups (a test timeout's panic, a kill).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
