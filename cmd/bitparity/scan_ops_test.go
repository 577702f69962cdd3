package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/scan"
)

// TestScanOps: bitparity scan runs the op packages' targets: a drift
// model prints its exact map and exits 1, the oracle and per-token FP8
// scaling are certified (exit 0), per-tensor FP8 scaling drifts under
// neighbour replacement in words that say why, and bad flags exit 2.
func TestScanOps(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "scan.json")
	for _, tt := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--target", "drift-moe-route-tie-high-128", "--to", "130", "--dists", "sensitive", "--json", js}, 1,
			[]string{"DRIFT", "tokens <= 127 -> A, tokens >= 128 -> B", "sensitive, tokens = 128, against item alone: 34 of 128 tokens differ: 34 (26.6%) changed experts (32 by a tie, 2 by a near-tie"}},
		{[]string{"--target=oracle-moe_route", "--profile", "mixtral-8x7b", "--to", "40"}, 0,
			[]string{"moe_route experts=8 top_k=2", "CERTIFIED", "tie=lowest sum=sequential"}},
		{[]string{"--target", "quant-fp8-per-tensor", "--dim", "neighbours", "--to", "8", "--shape", "hidden=32"}, 1,
			[]string{"tokens <= 1 -> A, tokens >= 2 -> B", "depend on other rows' values"}},
		{[]string{"--target", "quant-fp8-per-token", "--dim", "neighbours", "--to", "8", "--shape", "hidden=32"}, 0,
			[]string{"CERTIFIED: every row equals itself with the other rows' values replaced"}},
		{[]string{"--target", "oracle-moe_route", "--shape", "experts=8,top_k=9", "--to", "4"}, 2, nil},
		{[]string{"--target", "oracle-moe_route", "--shape", "experts", "--to", "4"}, 2, nil},
		{[]string{"--target", "oracle-moe_route"}, 2, nil},
	} {
		out, errs, code := bp(t, append([]string{"scan"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("scan %v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("scan %v: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var r scan.OpResult
	if err := json.Unmarshal(data, &r); err != nil || r.Certified || r.Map.Rule != "tokens <= 127 -> A, tokens >= 128 -> B" || r.Spec.Op != "moe_route" {
		t.Errorf("--json: %v, %+v", err, r)
	}
}

// TestMoEDocCommands runs every command of docs/moe.md's code blocks
// (the bitparity ones, in process) and checks each exits as its comment
// says, so the page stays true.
func TestMoEDocCommands(t *testing.T) {
	cmds, err := readmeCommands("../../docs/moe.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 5 {
		t.Fatalf("docs/moe.md: %d commands found", len(cmds))
	}
	for _, c := range cmds {
		args := strings.Fields(c.cmd)
		if args[0] != "bitparity" {
			t.Fatalf("docs/moe.md:%d: %q is not a bitparity command", c.line, c.cmd)
		}
		out, errs, code := bp(t, args[1:]...)
		if code != c.exit {
			t.Errorf("docs/moe.md:%d: %s: exit %d, want %d\n%s%s", c.line, c.cmd, code, c.exit, out, errs)
		}
	}
}
