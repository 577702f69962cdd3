package spec

// Exit codes of the bitparity command (README.md, exit codes).
const (
	ExitOK            = 0 // nothing found
	ExitFinding       = 1 // a finding, or a mismatch reproduced
	ExitUsage         = 2 // usage or bad input
	ExitInternal      = 3 // internal or device failure
	ExitNotReproduced = 4 // repro: the recorded finding did not reproduce here
	ExitStalled       = 5 // run: a target ran fewer cases than --min-cases, or stopped answering
)
