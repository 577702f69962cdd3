package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/profile"
)

// profileFlag is --profile: a model profile's name (profile.Names) or
// file; for run also --shrink-past-profile.
type profileFlag struct {
	name       *string
	shrinkPast *bool              // nil where the command does not shrink
	drawn      *profile.Histogram // run: the batch sizes the campaign drew
}

func addProfileFlag(fs *flag.FlagSet, what string) profileFlag {
	return profileFlag{name: fs.String("profile", "", fmt.Sprintf("model profile whose inner sizes and dtype %s (one of %s, or a profile file)",
		what, strings.Join(profile.Names(), ", ")))}
}

// addRunProfileFlags adds run's --profile and --shrink-past-profile.
func addRunProfileFlags(fs *flag.FlagSet) profileFlag {
	p := addProfileFlag(fs, "every drawn case takes, with batches over 1..max_tokens")
	p.shrinkPast = fs.Bool("shrink-past-profile", false,
		"let a finding's shrinking reduce the profile's inner sizes too (default: only batch and sequence dimensions shrink, the finding stays at the model's shape)")
	p.drawn = &profile.Histogram{}
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
		if p.drawn != nil {
			p.drawn.Top = pr.MaxTokens
			c.OnDraw = p.drawn.Add
		}
	}
	return err
}

// report prints the histogram of the batch sizes the campaign drew, when
// it ran at a profile.
func (p profileFlag) report(w io.Writer) {
	if p.drawn != nil && p.drawn.Top > 0 {
		p.drawn.Write(w, *p.name)
	}
}
