package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// listCmd is `bitparity list`: data on stdout, a target that is registered
// but not available here (no GPU, no process) is listed with the reason.
func listCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	for _, r := range fuzz.Relations() {
		ops := make([]string, len(r.Ops()))
		for i, op := range r.Ops() {
			ops[i] = string(op)
		}
		fmt.Fprintf(stdout, "  %-17s %d target(s), ops: %s\n", r.Name(), r.Targets(), strings.Join(ops, ", "))
	}
	fmt.Fprintln(stdout, "\ntargets:")
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tOP\tDEVICE\tINVARIANT\tSCHEDULE\tMODELS")
	for _, name := range target.Names() {
		t, err := target.Lookup(name)
		if err != nil {
			fmt.Fprintf(tw, "  %s\t-\tunavailable\t-\t-\t%v\n", name, err)
			continue
		}
		info := t.Info()
		inv := "yes"
		switch {
		case info.OnRequest && len(info.Expect) == 0:
			inv = "no (scan control: scan only, no campaign relation varies its dimension)"
		case info.OnRequest:
			inv = "no (scan control: " + strings.Join(info.Expect, ", ") + "; a campaign runs it where --targets names it)"
		case !info.Invariant:
			inv = "no (control: " + strings.Join(info.Expect, ", ") + ")"
		}
		sched := info.Schedule
		if sched == "" {
			sched = fmt.Sprintf("undeclared (oracle parity within %d ulps)", info.ULPBound)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", name, info.Op, info.Device, inv, sched, info.Models)
	}
	tw.Flush()
	listOpPackages(stdout)
	fmt.Fprintln(stdout, "\ncampaign pairs (relation: targets):")
	for _, p := range fuzz.Pairs() {
		note := ""
		if p.Expect {
			note = "  [must find: negative control]"
		}
		fmt.Fprintf(stdout, "  %-17s %s%s\n", p.Relation, strings.Join(p.Targets, " vs "), note)
	}
	return nil
}

// listOpPackages writes the op packages' ops (ops/all) and their CPU
// targets, which `bitparity scan --target NAME` sweeps (docs/moe.md).
func listOpPackages(stdout io.Writer) {
	fmt.Fprintln(stdout, "\nop packages (bitparity scan --target NAME; relations: items = batch invariance, neighbours = neighbour replacement):")
	for _, op := range all.Ops {
		r := op.Record()
		dims := make([]string, len(r.Dims))
		for i, d := range r.Dims {
			dims[i] = fmt.Sprintf("%s=%d", d.Name, d.Default)
		}
		fmt.Fprintf(stdout, "  %-17s a row is one %s; %s; draws %s\n", r.Name, r.Item, strings.Join(dims, " "), strings.Join(r.Dists, ", "))
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tOP\tDEVICE\tINVARIANT\tDECLARED\tMODELS")
	for _, t := range all.Targets() {
		inv := "yes"
		if !t.Invariant() {
			inv = "no (control: a drift scan must find)"
		}
		fmt.Fprintf(tw, "  %s\t%s\tcpu\t%s\t%s\t%s\n", t.Name(), t.Op().Record().Name, inv, t.Declared(), t.Models())
	}
	tw.Flush()
}
