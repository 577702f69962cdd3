package main

import (
	"flag"
	"strings"
	"time"
)

// runCheckFlags refuses run's flags that make no sense, before any work:
// a --duration of zero or less (a campaign needs a time; stop one early
// with Ctrl-C or SIGTERM), negative counts, an empty --case, and
// --shrink-past-profile without --profile.
func runCheckFlags(fs *flag.FlagSet) error {
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	if d := get("duration").(time.Duration); d <= 0 {
		return usageErr("run: --duration %s: want a positive duration such as 60s (stop a run early with Ctrl-C or SIGTERM)", d)
	}
	for _, name := range []string{"max-cases", "min-cases", "control-cases"} {
		if n := get(name).(int64); n < 0 {
			return usageErr("run: --%s %d: want a count >= 0 (0: no limit)", name, n)
		}
	}
	if n := get("workers").(int); n < 0 {
		return usageErr("run: --workers %d: want a count >= 0 (0: one per CPU)", n)
	}
	if flagSet(fs, "shrink-past-profile") && get("profile").(string) == "" {
		return usageErr("run: --shrink-past-profile needs --profile: without a profile shrinking already reduces every dimension")
	}
	if flagSet(fs, "case") && strings.TrimSpace(get("case").(string)) == "" {
		return usageErr("run: --case is empty: want a case as JSON, as a finding's repro line prints it")
	}
	return nil
}
