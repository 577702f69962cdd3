// Command bitparity fuzzes GPU and CPU kernels for batch invariance and
// bitwise parity with a CPU oracle, shrinks what it finds to the onset, and
// keeps and replays the cases.
//
// Each subcommand lives in its own file and has a line in the command
// table (commands); main is a thin shell over run.
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/detect"
	"github.com/bitparity/bitparity/spec"
)

// command is one subcommand. Run returns an *exitError to choose the exit
// code; any other error exits 3 (internal).
type command struct {
	Summary string
	Run     func(stdout, stderr io.Writer, args []string) error
}

// commands is the command table: each command's Run lives in the file
// of its name.
var commands = map[string]command{
	"corpus":  {"keep, share and replay case files: ls show merge dedup minimize import export bundle unbundle recheck", corpusCmd},
	"detect":  {"measure detection power: cases and seconds to find each drift model, random vs boundary-seeking inputs", detectCmd},
	"explain": {"infer the schedule behind each class of a finding's drift map", explainCmd},
	"list":    {"list the ops, relations, targets and campaign pairs of this build", listCmd},
	"merge":   {"merge the result files of a campaign's shards (run --shard i/n on several hosts) into one", mergeCmd},
	"report":  {"write text, JSON, JUnit, Markdown or HTML reports from result files", runReport},
	"repro":   {"replay a case file here: the first diverging row and column, or 'could not reproduce'", reproCmd},
	"run":     {"run a seeded campaign over every relation and target (or one case with --case)", runCmd},
	"scan":    {"compare every row of every batch size (or padding, position, KV length) in a range: a certificate or the exact drift map", scanCmd},
	"slurm":   {"run a campaign on a Slurm cluster: an array job of shards and a merge job (slurm merge DIR)", slurmCmd},
	"version": {"print the bitparity version and which GPU kernel images were loaded (machine code or JIT-compiled PTX)", func(stdout, _ io.Writer, _ []string) error { return writeVersion(stdout) }},
	"worker":  {"(internal) serve one target over the process protocol on stdin/stdout (crash isolation; run --kernel and --isolate start it)", workerCmd},
}

// exitError carries an exit code (spec.Exit*) with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a usage or bad-input error (exit 2).
func usageErr(format string, a ...any) error {
	return &exitError{code: spec.ExitUsage, err: fmt.Errorf(format, a...)}
}

// withCode wraps err with an exit code; a nil err stays nil.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bitparity COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nexit codes: 0 nothing found, 1 finding or mismatch reproduced, 2 usage or bad input,")
	fmt.Fprintln(w, "            3 internal or device failure, 4 could not reproduce")
	fmt.Fprintln(w, "run 'bitparity COMMAND -h' for a command's flags")
}

func run(stdout, stderr io.Writer, args []string) error {
	detect.RegisterTargets()
	c, done, err := lookupCommand(stdout, stderr, args, commands, usage, "unknown command")
	if done {
		return err
	}
	return c.Run(stdout, stderr, args[1:])
}

// lookupCommand finds the (sub)command args[0] in cmds. With no args it writes
// usage to stdout and exits 2; with -h, --help or help it writes usage
// to stdout and exits 0; an unknown name writes usage to stderr and is a
// usage error, unknown followed by the name. done says that no command is
// to run: err is then the exit.
func lookupCommand[C any](stdout, stderr io.Writer, args []string, cmds map[string]C, usage func(io.Writer), unknown string) (c C, done bool, err error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return c, true, &exitError{code: spec.ExitUsage}
		}
		return c, true, nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(stderr)
		return c, true, usageErr("%s %q", unknown, args[0])
	}
	return c, false, nil
}

// exitCode maps an error from run to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return spec.ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return spec.ExitInternal
}

func main() {
	err := run(os.Stdout, os.Stderr, os.Args[1:])
	if err != nil {
		var e *exitError
		if !errors.As(err, &e) || e.err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "bitparity") {
				msg = "bitparity: " + msg
			}
			fmt.Fprintln(os.Stderr, msg)
		}
	}
	os.Exit(exitCode(err))
}
