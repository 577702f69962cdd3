package main

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// A transformer case runs through `run --case` (the command passes
// transformer.Source to fuzz.Check; nothing is registered): a drift planted in layer 0's QKV
// projection is found and named there, with its drift map.
func TestRunCaseTransformer(t *testing.T) {
	c := `{"version":1,"op":"transformer","relation":"path_parity",` +
		`"targets":["train:fixed+gemm_splitk_by_m@L0.qkv","infer:fixed+gemm_splitk_by_m@L0.qkv"],` +
		`"shape":{"rows":2,"hidden":32,"n":48,"vocab":97,"seqs":5,"seq_len":30,"kv":16,"heads":4,"kv_heads":2,"head_dim":8},` +
		`"in":"bf16","out":"bf16","eps":1e-5,"dist":"normal","seed":7,"gen_version":1}`
	out, errOut, code := runArgs("run", "--case", c)
	if code != spec.ExitFinding {
		t.Fatalf("exit %d, want %d (a finding)\nstdout:\n%s\nstderr:\n%s", code, spec.ExitFinding, out, errOut)
	}
	for _, want := range []string{"L0.qkv (gemm)", "drift map: over rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// the same model with fixed kernels on both paths agrees bitwise
	fixed := strings.ReplaceAll(c, "+gemm_splitk_by_m@L0.qkv", "")
	if out, errOut, code := runArgs("run", "--case", fixed); code != spec.ExitOK {
		t.Fatalf("fixed kernels: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
