package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// opTarget returns the --target of args when it names a target of an op
// package (ops/all), which `bitparity scan` hands to scanOpCmd.
func opTarget(args []string) (string, bool) {
	for i, a := range args {
		name, ok := "", false
		switch {
		case a == "--target" || a == "-target":
			if i+1 < len(args) {
				name, ok = args[i+1], true
			}
		case strings.HasPrefix(a, "--target=") || strings.HasPrefix(a, "-target="):
			_, name, ok = strings.Cut(a, "=")
		}
		if ok {
			return name, scan.IsOpTarget(name)
		}
	}
	return "", false
}

// scanOpCmd is `bitparity scan --target NAME` for a target of an op
// package (moe_route, quant_fp8: docs/moe.md): batch invariance over
// --dim items or neighbour replacement over --dim neighbours, every batch
// size --from..--to. Exit codes: 0 certified, 1 a row differed (the exact
// map is printed), 2 bad flags.
func scanOpCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s scan.OpSpec
	fs.StringVar(&s.Target, "target", "", "target of an op package (docs/moe.md)")
	fs.StringVar(&s.Dim, "dim", spec.ScanItems, "items: row r of a batch of v items against item r alone; neighbours: row r against the same batch with the other rows' values replaced")
	fs.IntVar(&s.From, "from", 1, "smallest batch")
	fs.IntVar(&s.To, "to", 0, "largest batch (default: the profile's max_tokens)")
	fs.StringVar(&s.In, "in", "", "input dtype (default: the op's first, fp32)")
	dists := fs.String("dists", "", "input draws, comma-separated (default: every draw of the op)")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the draws")
	shape := fs.String("shape", "", "inner sizes, e.g. experts=128,top_k=8 or hidden=2048 (default: the profile's, else the op's)")
	jsonPath := fs.String("json", "", "write the scan's result (spec, certified, map, diffs) to this file")
	prof := addProfileFlag(fs, "the scan takes (moe_route: experts and top_k; quant_fp8: hidden)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("scan: unexpected arguments %q", fs.Args())
	}
	var err error
	if s.Shape, err = parseShape(*shape); err != nil {
		return usageErr("scan: --shape: %v", err)
	}
	for _, d := range strings.Split(*dists, ",") {
		if d = strings.TrimSpace(d); d != "" {
			s.Dists = append(s.Dists, d)
		}
	}
	if err := opProfile(&s, prof); err != nil {
		return err
	}
	if s.To == 0 {
		return usageErr("scan: --to is required (or --profile for its max_tokens)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := scan.RunOp(ctx, s)
	if errors.Is(err, scan.ErrBadSpec) {
		return withCode(spec.ExitUsage, err)
	}
	if err != nil {
		return withCode(spec.ExitInternal, err)
	}
	printOpScan(stdout, r)
	if *jsonPath != "" {
		data, err := json.MarshalIndent(r, "", "  ")
		if err == nil {
			err = atomicfile.Write(*jsonPath, append(data, '\n'))
		}
		if err != nil {
			return withCode(spec.ExitInternal, fmt.Errorf("scan: --json: %w", err))
		}
	}
	if !r.Certified {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}

// opProfile fills the dimensions --shape left unset from --profile, and
// --to from its max_tokens.
func opProfile(s *scan.OpSpec, prof profileFlag) error {
	p, err := prof.load()
	if err != nil || p == nil {
		return err
	}
	n, _, err := scan.NormalizeOp(scan.OpSpec{Target: s.Target, To: 1})
	if err != nil {
		return usageErr("scan: %v", err)
	}
	if s.Shape == nil {
		s.Shape = ops.Shape{}
	}
	for name := range n.Shape {
		if _, set := s.Shape[name]; set {
			continue
		}
		v, ok := p.Dim(name)
		if !ok {
			return usageErr("scan: profile %s has no %s for %s", p.Name, name, n.Op)
		}
		s.Shape[name] = v
	}
	if s.To == 0 {
		s.To = p.MaxTokens
	}
	return nil
}

// parseShape parses "name=value,name=value".
func parseShape(v string) (ops.Shape, error) {
	s := ops.Shape{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, val, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q is not name=integer", f)
		}
		s[k] = n
	}
	return s, nil
}

// printOpScan prints a scan of an op: what it swept, its counts, and its
// certificate or its map and the words of each onset.
func printOpScan(w io.Writer, r *scan.OpResult) {
	s := r.Spec
	fmt.Fprintf(w, "scan %s (%s %s, %s, %s %d..%d, draws %s, seed %d)\n", s.Target, s.Op, s.Shape, s.In, s.Dim, s.From, s.To,
		strings.Join(s.Dists, ","), s.Seed)
	fmt.Fprintf(w, "  %d row comparisons in %d batches, %.3gs\n", r.RowsCompared, r.Batches, r.Seconds)
	if r.Certified {
		same := "the item alone"
		if s.Dim == scan.DimNeighbours {
			same = "itself with the other rows' values replaced"
		}
		fmt.Fprintf(w, "  CERTIFIED: every row equals %s and the oracle of its declared policy (%s); %s\n", same, r.Declared, scan.MapWords(r.Map))
		return
	}
	fmt.Fprintf(w, "  DRIFT: %d row comparisons differ; drift map: %s\n", r.Differing, scan.MapWords(r.Map))
	for _, d := range r.Diffs {
		fmt.Fprintf(w, "  %s, tokens = %d, against %s: %s\n", d.Draw, d.Value, d.Against, d.Words)
	}
}
