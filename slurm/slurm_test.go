package slurm

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestSlurmBudgetArithmetic: the shard script's own arithmetic, run by
// bash, gives each task spec.Shard.Budget of --max-cases.
func TestSlurmBudgetArithmetic(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	line := regexp.MustCompile(`(?m)^budget=.*$`)
	for _, tc := range []struct{ m, n int64 }{{400, 4}, {1000, 3}, {7, 7}, {10, 4}, {1 << 40, 5}} {
		s, err := Render(&Plan{Dir: "/d", Bin: "/b", Shards: int(tc.n), MaxCases: tc.m}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		expr := line.FindString(s.Shard)
		if expr == "" {
			t.Fatalf("no budget line in\n%s", s.Shard)
		}
		for i := int64(0); i < tc.n; i++ {
			out, err := exec.Command(bash, "-c", "i="+strconv.FormatInt(i, 10)+"; "+expr+"; echo $budget").Output()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
			if want := (spec.Shard{Index: int(i), Count: int(tc.n)}).Budget(tc.m); got != want {
				t.Errorf("m %d n %d shard %d: script budget %d, Shard.Budget %d", tc.m, tc.n, i, got, want)
			}
		}
	}
}
