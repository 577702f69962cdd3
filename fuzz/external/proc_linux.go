package external

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the adapter in its own process group (so a kill reaches
// the interpreter behind /bin/sh and its children) and kills it when the
// harness dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the adapter's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
