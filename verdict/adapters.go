package verdict

import (
	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
)

// MissingAdapters lists, as "NAME: what to pass" (external.Missing), each
// exec: target that no --exec started of the cases of s a recheck would
// replay (corpus.Rechecks with all): a recheck without its adapter could
// not tell fixed from not run. A file that cannot be read is left to the
// recheck, which reports it.
func MissingAdapters(s corpus.Store, all bool) ([]string, error) {
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, n := range names {
		f, err := s.Get(n)
		if err != nil || !corpus.Rechecks(f, all) {
			continue
		}
		for _, m := range external.Missing(f.Case, f.Adapters) {
			lines = append(lines, n+": "+m)
		}
	}
	return lines, nil
}
