package main

import (
	"fmt"
	"io"

	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// listCmd is `bitparity list`: the ops, relations, targets (one that is
// registered but not available here, no GPU or no process, with the
// reason), the op packages and their targets (which `bitparity scan
// --target NAME` sweeps, docs/moe.md) and the campaign pairs, on stdout.
func listCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("list", stderr, "")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("list: unexpected arguments %q", fs.Args())
	}
	fmt.Fprintln(stdout, "ops:")
	for _, op := range spec.Ops {
		fmt.Fprintf(stdout, "  %s\n", op)
	}
	fmt.Fprintln(stdout, "\nrelations:")
	relate.WriteRelations(stdout)
	fmt.Fprintln(stdout, "\ntargets:")
	if err := target.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nop packages (bitparity scan --target NAME; relations: items = batch invariance, neighbours = neighbour replacement):")
	if err := ops.WriteTable(stdout, all.Ops); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\ncampaign pairs (relation: targets):")
	relate.WritePairs(stdout)
	return nil
}
