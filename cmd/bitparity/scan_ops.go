package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

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
// size --from..--to (scan.RunOp). It prints and stores what it found as
// every scan does (scanOne: the certificate, or the drift that corpus
// recheck reruns, in --dir) and writes --json in the scan results schema
// (docs/report-schema.md). Exit codes: 0 certified, 1 a row differed (the
// exact map and the op's words are printed), 2 bad flags.
func scanOpCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s spec.ScanSpec
	fs.StringVar(&s.Target, "target", "", "target of an op package (docs/moe.md)")
	fs.StringVar(&s.Dim, "dim", spec.ScanItems, "items: row r of a batch of v items against item r alone; neighbours: row r against the same batch with the other rows' values replaced")
	fs.IntVar(&s.From, "from", 1, "smallest batch")
	fs.IntVar(&s.To, "to", 0, "largest batch (default: the profile's max_tokens)")
	in := fs.String("in", "", "input dtype (default: the op's first, fp32)")
	dists := fs.String("dists", "", "input draws, comma-separated (default: every draw of the op)")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the draws")
	shape := fs.String("shape", "", "inner sizes, e.g. experts=128,top_k=8 or hidden=2048 (default: the profile's, else the op's)")
	dir := fs.String("dir", defaultDir(), "corpus folder the certificate or drift is stored in ($"+envCorpus+")")
	jsonPath := fs.String("json", "", "write the scan's results (docs/report-schema.md, \"Scan results\") to this file")
	prof := addProfileFlag(fs, "the scan takes (moe_route: experts and top_k; quant_fp8: hidden)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("scan: unexpected arguments %q", fs.Args())
	}
	var err error
	if s.Shape.Dims, err = parseShape(*shape); err != nil {
		return usageErr("scan: --shape: %v", err)
	}
	s.In = spec.DType(*in)
	for _, d := range runSplitList(*dists) {
		s.Dists = append(s.Dists, spec.Dist(d))
	}
	if err := opProfile(&s, prof); err != nil {
		return err
	}
	if s.To == 0 {
		return usageErr("scan: --to is required (or --profile for its max_tokens)")
	}
	if s, _, err = scan.NormalizeOp(s); err != nil {
		return withCode(spec.ExitUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env := hereEnv()
	res := newScanResults(*jsonPath, env, args)
	r, err := scanOne(ctx, stdout, stderr, scan.RunOp, s, env, *dir, nil)
	if err != nil {
		return err
	}
	res.add(r)
	if err := res.write(); err != nil {
		return err
	}
	if r.Verdict != spec.ScanCertified {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}

// opProfile fills the dimensions --shape left unset from --profile, and
// --to from its max_tokens.
func opProfile(s *spec.ScanSpec, prof profileFlag) error {
	p, err := prof.load()
	if err != nil || p == nil {
		return err
	}
	n, _, err := scan.NormalizeOp(spec.ScanSpec{Target: s.Target, To: 1})
	if err != nil {
		return usageErr("scan: %v", err)
	}
	if s.Shape.Dims == nil {
		s.Shape.Dims = map[string]int{}
	}
	for name := range n.Shape.Dims {
		if _, set := s.Shape.Dims[name]; set {
			continue
		}
		v, ok := p.Dim(name)
		if !ok {
			return usageErr("scan: profile %s has no %s for %s", p.Name, name, n.Op)
		}
		s.Shape.Dims[name] = v
	}
	if s.To == 0 {
		s.To = p.MaxTokens
	}
	return nil
}

// parseShape parses "name=value,name=value".
func parseShape(v string) (map[string]int, error) {
	s := map[string]int{}
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
