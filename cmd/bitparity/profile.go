package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/profile"
	"github.com/bitparity/bitparity/spec"
)

// profileFlag is --profile: a model profile's name (profile.Names) or
// file; for run also --shrink-past-profile.
type profileFlag struct {
	fs         *flag.FlagSet
	name       *string
	shrinkPast *bool // nil where the command does not shrink
}

func addProfileFlag(fs *flag.FlagSet, what string) profileFlag {
	return profileFlag{fs: fs, name: fs.String("profile", "", fmt.Sprintf("model profile whose inner sizes and dtype %s (one of %s, or a profile file)",
		what, strings.Join(profile.Names(), ", ")))}
}

// addRunProfileFlags adds run's --profile and --shrink-past-profile.
func addRunProfileFlags(fs *flag.FlagSet) profileFlag {
	p := addProfileFlag(fs, "every drawn case takes, with batches over 1..max_tokens")
	p.shrinkPast = fs.Bool("shrink-past-profile", false,
		"let a finding's shrinking reduce the profile's inner sizes too (default: only batch and sequence dimensions shrink, the finding stays at the model's shape)")
	return p
}

// load returns the profile named by the flag, nil when it is not set; a
// bad profile is a usage error.
func (p profileFlag) load() (*profile.Profile, error) {
	if *p.name == "" {
		return nil, nil
	}
	pr, err := profile.Load(*p.name)
	if err != nil {
		return nil, usageErr("--profile: %v", err)
	}
	return pr, nil
}

// apply makes the campaign draw the profile's inner sizes and dtypes and
// its batches over 1..max_tokens, and hold them when shrinking unless
// --shrink-past-profile.
func (p profileFlag) apply(c *fuzz.Campaign) error {
	pr, err := p.load()
	if pr != nil {
		c.Reshape, c.MaxTokens = pr.Apply, pr.MaxTokens
		c.ShrinkPastReshape = p.shrinkPast != nil && *p.shrinkPast
	}
	return err
}

// scanDTypes sets a scan's dtypes and eps to the profile's where --in,
// --out and --eps were not given (logprob writes fp32).
func (p profileFlag) scanDTypes(s *spec.ScanSpec, pr *profile.Profile) {
	if !flagSet(p.fs, "in") {
		s.In = pr.DType
	}
	if !flagSet(p.fs, "out") && s.Op != spec.OpLogProb {
		s.Out = pr.DType
	}
	if !flagSet(p.fs, "eps") && s.Op == spec.OpRMSNorm {
		s.Eps = pr.Eps
	}
}
