package verdict

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel send SIGTERM to the worker cmd when the
// process that started it dies, even by kill -9 (Linux's
// PR_SET_PDEATHSIG), so no worker outlives its parent; the worker then
// stops like on any SIGTERM and leaves its findings in its shard folder.
// The kernel may send the signal more than once (once for each thread of
// the dying parent the worker is handed to); a worker takes the repeats
// as the first (the command's signal handling).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
