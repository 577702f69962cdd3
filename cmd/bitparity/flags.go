package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// multiFlag is a repeatable flag (--exec, -shared, --sbatch-arg): each use
// adds its value; String joins them with "; ".
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// newFlagSet is a command's flag set: errors and usage go to stderr, and
// -h prints usage (when given) followed by the flags' defaults.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if usage != "" {
		fs.Usage = func() {
			fmt.Fprintln(stderr, usage)
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseInterspersed parses args with fs like fs.Parse, but accepts flags
// after positional arguments too ("repro case.json -v" is "repro -v
// case.json"); "--" ends the flags, and everything after it is positional.
// fs.Args() then holds the positional arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// parse parses flags; -h gives a nil error and ok=false.
func parse(fs *flag.FlagSet, args []string) (ok bool, err error) {
	if err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, nil
		}
		return false, &exitError{code: spec.ExitUsage}
	}
	return true, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkOutputFile prepares path for a file written at the end of a
// command (--json): it creates the parent folder and refuses a path that
// is a folder or another non-regular file, so a bad path fails before any
// work instead of after it.
func checkOutputFile(flagName, path string) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.Writable(path); err != nil {
		return usageErr("--%s %s: %v", flagName, path, err)
	}
	return nil
}

// checkOutputDir creates the folder path (--out-dir, --corpus) and refuses
// a path that exists and is not a folder.
func checkOutputDir(flagName, path string) error {
	if path == "" {
		return nil
	}
	if corpus.IsURL(path) { // a bucket: reachable, with credentials (bucket.go)
		if err := checkBucket(path); err != nil {
			return usageErr("--%s %s: %v", flagName, path, err)
		}
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return usageErr("--%s %s: %v", flagName, path, err)
	}
	return nil
}
