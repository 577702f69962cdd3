package corpus

import (
	"fmt"

	"github.com/bitparity/bitparity/spec"
)

// validateAdapters checks the adapters a file records: at most one per
// target of the case, each naming one of its targets, with a name and a
// command line of bounded length.
func validateAdapters(f *File) error {
	if len(f.Adapters) > spec.MaxTargets {
		return fieldErr("adapters", "%d entries, want at most %d", len(f.Adapters), spec.MaxTargets)
	}
	seen := map[string]bool{}
	for i, a := range f.Adapters {
		at := fmt.Sprintf("adapters[%d]", i)
		if !contains(f.Case.Targets, a.Target) {
			return fieldErr(at+".target", "%q is not a target of the case", truncate(a.Target))
		}
		if seen[a.Target] {
			return fieldErr(at+".target", "%q recorded twice", truncate(a.Target))
		}
		seen[a.Target] = true
		if a.Name == "" || a.Exec == "" {
			return fieldErr(at, "name and exec are required")
		}
		for _, s := range []string{a.Name, a.Device, a.About, a.Exec} {
			if len(s) > spec.MaxAdapterText {
				return fieldErr(at, "a field of %d bytes, the limit is %d", len(s), spec.MaxAdapterText)
			}
		}
	}
	return nil
}

// AdaptersOf returns the adapters among all that run a target of c, in the
// order of c's targets.
func AdaptersOf(all []spec.Adapter, c spec.Case) []spec.Adapter {
	var out []spec.Adapter
	for _, t := range c.Targets {
		for _, a := range all {
			if a.Target == t {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
