package verdict

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestReadShard: a shard counts when it exited 0 or 1 and its result reads
// back; every other shard is missing with its reason.
func TestReadShard(t *testing.T) {
	res, err := json.Marshal(spec.Result{Version: spec.ResultVersion, Started: time.Now().UTC(), Cases: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, exit string // exit "": no exit file; "-": no shard folder
		result     bool
		want       string // the reason's start; "": the result
	}{
		{"never started", "-", false, "never started"},
		{"killed", "", false, "no exit status"},
		{"sigterm", "143\n", true, "terminated"},
		{"interrupted", "6\n", true, "terminated"},
		{"stalled", "5\n", true, "bitparity run exited 5"},
		{"garbage", "x\n", true, `exit status "x" unreadable`},
		{"no result", "0\n", false, "result unreadable"},
		{"pass", "0\n", true, ""},
		{"finding", "1\n", true, ""},
	} {
		dir := filepath.Join(t.TempDir(), "shard")
		if tc.exit != "-" {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if tc.exit != "" && tc.exit != "-" {
			os.WriteFile(filepath.Join(dir, "exit"), []byte(tc.exit), 0o644)
		}
		if tc.result {
			os.WriteFile(filepath.Join(dir, "result.json"), res, 0o644)
		}
		r, reason := ReadShard(dir)
		switch {
		case tc.want == "" && (r == nil || r.Cases != 7 || reason != ""):
			t.Errorf("%s: %v, %q; want the result", tc.name, r, reason)
		case tc.want != "" && (r != nil || !strings.HasPrefix(reason, tc.want)):
			t.Errorf("%s: %v, %q; want no result, %q", tc.name, r, reason, tc.want)
		}
	}
}
