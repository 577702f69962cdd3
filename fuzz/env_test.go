package fuzz

import (
	"context"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestCampaignEnv: the fingerprint a campaign is given (the command's,
// with the GPU fields) is the one its result and every finding record, as
// found and as shrunk; without one they record the host's.
func TestCampaignEnv(t *testing.T) {
	env := spec.HostEnv()
	env.GPU, env.CC, env.Driver, env.CUDA, env.KernelHash = "Test GPU", "9.0", "550.54.15", "12.4", "0123456789abcdef"
	for _, tc := range []struct {
		name string
		env  spec.Env
		want spec.Env
	}{
		{"given", env, env},
		{"host", spec.Env{}, spec.HostEnv()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found []spec.Finding
			c := &Campaign{Seed: 3, MaxCases: 400, Workers: 1, ShrinkBudget: 2 * time.Second, Targets: []string{"drift-rmsnorm-te-mod32"},
				Relations: []string{spec.RelBatchInvariance}, Env: tc.env, OnFound: func(f spec.Finding) { found = append(found, f) }}
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) == 0 || len(found) == 0 {
				t.Fatalf("no finding in %d cases: the test needs one", res.Cases)
			}
			if res.Env != tc.want {
				t.Errorf("result env %+v, want %+v", res.Env, tc.want)
			}
			for _, f := range append(found, res.Findings...) {
				if f.Env != tc.want {
					t.Errorf("finding env %+v, want %+v", f.Env, tc.want)
				}
			}
		})
	}
}
