package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// failing is an RMSNorm target that fails every batch with an ordinary
// error (a device that is gone). It is neither invariant nor a drift model,
// so no campaign pair includes it.
type failing struct{}

func (failing) Info() target.Info {
	return target.Info{Name: "test-failing-rmsnorm", Op: spec.OpRMSNorm, Device: "test"}
}

func (failing) Run(context.Context, *target.Batch, []int) (*target.Output, error) {
	return nil, errors.New("no device")
}

func init() {
	target.Register("test-failing-rmsnorm", func() (target.Target, error) { return failing{}, nil })
}

// TestRunCaseTargetFailure: `run --case` on a well-formed case whose target
// fails exits 3 (internal or device failure), not 2 (bad input); a case
// that cannot run for its own sake still exits 2.
func TestRunCaseTargetFailure(t *testing.T) {
	c := `{"version":1,"op":"rmsnorm","relation":"determinism","targets":["test-failing-rmsnorm"],"shape":{"rows":2,"hidden":8},"in":"bf16","out":"bf16","eps":1e-6,"dist":"normal","seed":0,"gen_version":1,"rel":{}}`
	_, errOut, code := runArgs("run", "--case", c)
	if code != spec.ExitInternal {
		t.Errorf("failing target: exit %d, want %d (%s)", code, spec.ExitInternal, errOut)
	}
	bad := strings.Replace(c, `"relation":"determinism"`, `"relation":"path_parity"`, 1) // one target for a two-target relation
	if _, _, code := runArgs("run", "--case", bad); code != spec.ExitUsage {
		t.Errorf("bad case: exit %d, want %d", code, spec.ExitUsage)
	}
}
