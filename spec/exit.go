package spec

// Exit codes of the bitparity command (README.md, exit codes).
const (
	ExitOK            = 0 // nothing found
	ExitFinding       = 1 // a finding, or a mismatch reproduced
	ExitUsage         = 2 // usage or bad input
	ExitInternal      = 3 // internal or device failure
	ExitNotReproduced = 4 // repro: the recorded finding did not reproduce here
	ExitStalled       = 5 // run: a target ran fewer cases than --min-cases, or stopped answering
	// ExitInterrupted: run: a signal stopped the campaign before its
	// duration ended and nothing unexpected was found in what it ran; the
	// verdict covers only those cases, so it is never a pass.
	ExitInterrupted = 6
)

// A second signal ends `bitparity run` at once with 128 + the signal's
// number: 130 after SIGINT, 143 after SIGTERM. Every finding printed
// before it is in the corpus and the journal.
