//go:build !linux

package verdict

import "os/exec"

// dieWithParent is a no-op where the kernel has no parent-death signal: a
// worker then runs to its own deadline after its parent dies.
func dieWithParent(cmd *exec.Cmd) {}
