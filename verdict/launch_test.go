package verdict

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestRunArgs: a worker gets the flags the user set, less the parallel
// ones, --json and --max-cases, and then its own shard, files and budget.
func TestRunArgs(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Uint64("seed", 1, "")
	fs.String("targets", "", "")
	for _, name := range []string{"gpus", "shard", "corpus", "work-dir", "json"} {
		fs.String(name, "", "")
	}
	fs.Int("procs", 0, "")
	fs.Int64("max-cases", 0, "")
	if err := fs.Parse([]string{"--seed", "7", "--procs", "2", "--shard", "1/2", "--corpus", "c", "--json", "r.json", "--max-cases", "9"}); err != nil {
		t.Fatal(err)
	}
	shard, err := spec.ParseShard("3/4")
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{Shard: shard, Dir: "w"}
	for _, tc := range []struct {
		maxCases   int64
		withCorpus bool
		want       string
	}{
		{0, false, "run --seed=7 --shard 3/4 --json " + filepath.Join("w", "result.json")},
		{5, true, "run --seed=7 --shard 3/4 --json " + filepath.Join("w", "result.json") + " --max-cases 5 --corpus " + filepath.Join("w", "corpus")},
	} {
		if got := strings.Join(RunArgs(fs, w, tc.maxCases, tc.withCorpus), " "); got != tc.want {
			t.Errorf("RunArgs(%d, %v) = %q, want %q", tc.maxCases, tc.withCorpus, got, tc.want)
		}
	}
}
