package external

import "github.com/bitparity/bitparity/spec"

// Adapters describes the named targets among those Add, AddAll or a
// started Register target run: each one's hello (name, device, about) and
// command line, in the order of names. Names of other targets are skipped.
func Adapters(names ...string) []spec.Adapter {
	openMu.Lock()
	defer openMu.Unlock()
	var out []spec.Adapter
	for _, n := range names {
		for _, t := range open {
			if t.info.Name == n {
				out = append(out, t.Adapter())
				break
			}
		}
	}
	return out
}

// Adapter describes t's process as a case file records it.
func (t *Target) Adapter() spec.Adapter {
	return spec.Adapter{Target: t.info.Name, Name: t.hello["name"], Device: t.hello["device"],
		About: t.hello["about"], Exec: t.cmdline}
}
