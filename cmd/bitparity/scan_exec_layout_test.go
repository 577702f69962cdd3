package main

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// TestScanExecLayouts: the chunk, prefix and page scans of adapters that
// read the layout (docs/protocol.md, request fields chunk_from and
// page_size). The kit's exact NumPy attention is certified on each (a
// chunk's rows are the whole prompt's; it has no paged cache), and the
// example adapter whose chunks past a prefix of whole 16-token pages read
// the KV in tiles of 16 gives the exact prefix map, and a chunk map that
// names the chunk sizes with a chunk starting at 16. On main each scan
// was refused (the adapters did not say they read the layout).
func TestScanExecLayouts(t *testing.T) {
	py := pythontest.NumPy(t)
	small := []string{"--heads", "2", "--kv-heads", "1", "--head-dim", "8", "--out", "fp32", "--dists", "normal", "--dir", "c"}
	prefill := py + " " + adapterScript("numpy_ops.py") + " attn_prefill"
	decode := py + " " + adapterScript("numpy_ops.py") + " attn_decode"
	drift := py + " " + adapterScript("examples/numpy_prefix.py")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"numpy chunk", []string{"--exec", prefill, "--dim", "chunk", "--to", "20", "--seq-len", "20"}, 0, "CERTIFIED"},
		{"numpy prefix", []string{"--exec", prefill, "--dim", "prefix", "--to", "35", "--seq-len", "36"}, 0, "CERTIFIED"},
		{"numpy page", []string{"--exec", decode, "--dim", "page", "--from", "1", "--to", "40", "--kv", "40", "--rows", "2"}, 0, "CERTIFIED"},
		{"drift prefix", []string{"--exec", drift, "--dim", "prefix", "--to", "47", "--seq-len", "48"}, spec.ExitFinding,
			"drift map: over prefix 1..47 (every value): prefix % 16 == 0 -> B, otherwise -> A"},
		{"drift chunk", []string{"--exec", drift, "--dim", "chunk", "--to", "20", "--seq-len", "20"}, spec.ExitFinding,
			"irregular, 2 classes: A = 1, 3, 5..7, 9..15, 17..20; B = 2, 4, 8, 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each waits mostly on its adapter's start
			out, errs, code := cli(t, t.TempDir(), append(append([]string{"scan"}, tt.args...), small...)...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d and %q\n%s\n%s", code, tt.code, tt.want, out, errs)
			}
		})
	}
}
