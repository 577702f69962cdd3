package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/profile"
)

// profileFlag is --profile: a model profile's name (profile.Names) or file.
type profileFlag struct{ name *string }

func addProfileFlag(fs *flag.FlagSet, what string) profileFlag {
	return profileFlag{fs.String("profile", "", fmt.Sprintf("model profile whose inner sizes %s (one of %s, or a profile file)",
		what, strings.Join(profile.Names(), ", ")))}
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

// apply makes the campaign draw the profile's inner sizes.
func (p profileFlag) apply(c *fuzz.Campaign) error {
	pr, err := p.load()
	if pr != nil {
		c.Reshape = pr.Apply
	}
	return err
}
