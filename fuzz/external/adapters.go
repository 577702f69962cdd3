package external

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

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

// RecordAdapters writes into res the adapters of the external targets
// names (their hello and command line, which case files keep), and gives
// each finding on an external target a repro line with its --exec flags;
// a finding of an op package's op keeps its own (the scan that maps it,
// with --exec).
func RecordAdapters(res *spec.Result, names []string) {
	res.Adapters = Adapters(names...)
	for i := range res.Findings {
		f := &res.Findings[i]
		if _, opPackage := wireOp(f.Case.Op); opPackage {
			continue
		}
		if execs := Commands(f.Case.Targets...); len(execs) > 0 {
			f.Repro = spec.ReproLine(f.Case, execs...)
		}
	}
}

// Missing says, one line per exec: target of c that was not started, which
// adapter to pass: the command line recorded with the case when there is
// one (quoted, for the user to check and pass; it is never run from the
// file).
func Missing(c spec.Case, recorded []spec.Adapter) []string {
	var out []string
	for _, t := range c.Targets {
		if _, started := all.Lookup(t); started || !strings.HasPrefix(t, "exec:") || slices.Contains(target.Names(), t) || IsModel(t) {
			continue
		}
		i := slices.IndexFunc(recorded, func(a spec.Adapter) bool { return a.Target == t })
		if i < 0 {
			out = append(out, fmt.Sprintf("target %s is an external adapter and none was recorded with the case: pass --exec with the command line of the adapter whose hello names %q", t, strings.TrimPrefix(t, "exec:")))
			continue
		}
		a := recorded[i]
		out = append(out, fmt.Sprintf("target %s is an external adapter (%s on %s): pass --exec %s, the command line recorded with the case; read it first, bitparity never runs a command from a case file",
			t, a.Name, a.Device, spec.ShellQuote(a.Exec)))
	}
	return out
}

// Differ lists how the adapters running here differ from the recorded
// ones: "adapter exec:torch.gemm: about: recorded ..., here ...".
func Differ(recorded []spec.Adapter) []string {
	var out []string
	for _, r := range recorded {
		here := Adapters(r.Target)
		if len(here) == 0 {
			continue
		}
		h := here[0]
		for _, d := range [][3]string{{"device", r.Device, h.Device}, {"about", r.About, h.About}, {"exec", r.Exec, h.Exec}} {
			if d[1] != d[2] {
				out = append(out, fmt.Sprintf("adapter %s: %s: recorded %q, here %q", r.Target, d[0], d[1], d[2]))
			}
		}
	}
	return out
}
