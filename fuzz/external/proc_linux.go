package external

import (
	"os"
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

// fSetPipeSize is F_SETPIPE_SZ (linux/fcntl.h), absent from package syscall.
const fSetPipeSize = 1031

// growPipe asks for a 1 MiB pipe buffer (the default maximum of
// /proc/sys/fs/pipe-max-size) instead of 64 KiB: fewer wake-ups per
// megabyte of tensor data. Failure leaves the default.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, 1<<20)
	})
}
