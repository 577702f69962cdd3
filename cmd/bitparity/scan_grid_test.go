package main

import (
	"strings"
	"testing"
)

// TestScanGrid holds --grid-kv: the split-KV decode model's two-dimensional
// rule is printed exactly (exit 1, each length's scan stored), the oracle's
// grid certifies (exit 0), and a list that is not ascending is a usage
// error.
func TestScanGrid(t *testing.T) {
	dir := t.TempDir()
	args := []string{"scan", "--grid-kv", "1,64,256,512", "--to", "24", "--heads", "8", "--kv-heads", "2", "--head-dim", "8", "--dir", dir}
	out, errOut, code := bp(t, append(args, "--target", "drift-attn-split-kv")...)
	if code != 1 || !strings.Contains(out, "batch 1..24 x kv 1..512 (12 lengths scanned): batch >= 17 and kv >= 256 -> B, otherwise -> A") {
		t.Fatalf("split-kv grid: exit %d, want 1 and the rule\n%s%s", code, out, errOut)
	}
	ls, _, _ := bp(t, "corpus", "ls", "--dir", dir)
	if n := strings.Count(ls, "cert-"); n != 10 {
		t.Errorf("corpus ls lists %d certificates, want 10 (one per KV length below 256)\n%s", n, ls)
	}
	out, errOut, code = bp(t, append(args, "--target", "oracle-attn_decode", "--grid-kv", "1,64")...)
	if code != 0 || !strings.Contains(out, ": every batch -> A") {
		t.Fatalf("oracle grid: exit %d, want 0 and every batch -> A\n%s%s", code, out, errOut)
	}
	if _, _, code = bp(t, "scan", "--target", "oracle-attn_decode", "--grid-kv", "64,1"); code != 2 {
		t.Fatalf("descending --grid-kv: exit %d, want 2", code)
	}
}
