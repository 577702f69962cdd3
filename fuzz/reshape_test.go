package fuzz

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/internal/casecost"
	"github.com/bitparity/bitparity/profile"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// smallProfile is the CPU-sized test profile: hidden 768, max_tokens 400.
const smallProfile = "../profile/testdata/small.json"

func loadProfile(t testing.TB, name string) *profile.Profile {
	t.Helper()
	p, err := profile.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDrawReshaped(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	hidden := func(_ *rand.Rand, c *spec.Case) { c.Shape.Hidden = 384 }
	rows := map[int]bool{}
	for range 200 {
		c := drawReshaped(r, spec.OpRMSNorm, spec.RelBatchInvariance, hidden, 0, 0)
		if c.Shape.Hidden != 384 {
			t.Fatalf("hidden %d, want the profile's 384", c.Shape.Hidden)
		}
		if casecost.Of(c) > casecost.Small {
			t.Errorf("case of cost %d over %d: %+v", casecost.Of(c), casecost.Small, c.Shape)
		}
		rows[c.Shape.Rows] = true
	}
	if len(rows) < 20 {
		t.Errorf("%d distinct row counts in 200 draws: the batch dimension must keep varying", len(rows))
	}
}

func TestCampaignReshape(t *testing.T) {
	seen := 0
	c := &Campaign{Seed: 1, MaxCases: 30, Targets: []string{"oracle-rmsnorm"}, Relations: []string{spec.RelBatchInvariance},
		Reshape: func(_ *rand.Rand, c *spec.Case) { c.Shape.Hidden = 96; seen++ }}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 30 || seen < 30 || len(res.Findings) != 0 {
		t.Errorf("cases %d, reshaped %d, findings %d", res.Cases, seen, len(res.Findings))
	}
}

// batchTokens is the size of the batch dimension of c that a profile's
// max_tokens bounds: rows (requests), or a prefill's tokens.
func batchTokens(c spec.Case) int {
	if c.Op == spec.OpAttnPrefill {
		return c.Shape.Seqs * c.Shape.SeqLen
	}
	return c.Shape.Rows
}

// TestProfileDeciles draws 400 cases per op and relation at the
// llama3-8b profile and the small test profile, as a campaign draws them
// for targets off the CPU (no CPU bound) and, at the small profile, for
// CPU targets (profileCPUCost), and wants every case at the profile's
// inner sizes and dtypes and every decile of 1..max_tokens reached by the
// batch dimension (fixed seeds: Tokens gives each decile >= 4% of the
// draws, so 400 draws miss one with probability < 10^-7). lm_head and
// vocabulary-wide logprob batches are bounded by spec.MaxElements, not
// by the profile, and a CPU gemm or prefill by profileCPUCost: only their first
// deciles are asked for. go test -v
// prints the histograms of rmsnorm under batch invariance.
func TestProfileDeciles(t *testing.T) {
	for _, tc := range []struct {
		profile string
		bound   int64
	}{{"llama3-8b", 0}, {smallProfile, 0}, {smallProfile, profileCPUCost}} {
		p := loadProfile(t, tc.profile)
		for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM, spec.OpAttnDecode, spec.OpAttnPrefill, spec.OpLogProb} {
			for _, rel := range []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelDeterminism, spec.RelOracleParity} {
				if rel == spec.RelPadding && op == spec.OpAttnPrefill {
					continue
				}
				name := fmt.Sprintf("%s/bound=%d/%s/%s", p.Name, tc.bound, op, rel)
				r := rand.New(rand.NewSource(7))
				var h [10]int
				for range 400 {
					c := drawReshaped(r, op, rel, p.Apply, p.MaxTokens, tc.bound)
					if err := p.Holds(c); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if err := c.Validate(); err != nil {
						t.Fatalf("%s: %v: %+v", name, err, c.Shape)
					}
					if tc.bound > 0 && casecost.Of(c) > tc.bound {
						t.Fatalf("%s: casecost.Of %d over the bound %d", name, casecost.Of(c), tc.bound)
					}
					n := min(batchTokens(c), p.MaxTokens)
					h[(n-1)*10/p.MaxTokens]++
				}
				want := 10
				switch {
				case tc.bound > 0 && (op == spec.OpGEMM || op == spec.OpAttnPrefill):
					// on the CPU a gemm row costs K·N (up to 2048·768,
					// a few rows fit profileCPUCost) and a prefill the
					// square of its length (~100 tokens fit)
					want = 1
				case op == spec.OpLogProb || op == spec.OpGEMM && p.Name == "llama3-8b":
					// reached: the deciles up to the largest batch that
					// fits spec.MaxElements (logprob at vocab 128256: ~2000 rows)
					want = 2
				}
				for d := range want {
					if h[d] == 0 {
						t.Errorf("%s: decile %d of 1..%d never drawn: %v", name, d+1, p.MaxTokens, h)
					}
				}
				if op == spec.OpRMSNorm && rel == spec.RelBatchInvariance {
					t.Logf("%s, 400 draws, rows by decile of 1..%d:\n%s", name, p.MaxTokens, decileBars(h, p.MaxTokens))
				}
			}
		}
	}
}

// decileBars renders a decile histogram, one line per decile.
func decileBars(h [10]int, top int) string {
	var b strings.Builder
	total := 0
	for _, c := range h {
		total += c
	}
	for d, c := range h {
		fmt.Fprintf(&b, "  %5d..%-5d %4d %s\n", d*top/10+1, (d+1)*top/10, c, strings.Repeat("#", c*100/max(1, total)))
	}
	return b.String()
}

// TestProfileReachesCPUDrift: at the small profile (hidden 768), a CPU
// target's cases drawn with MaxTokens reach batches of 256 rows and more
// (drift-rmsnorm-vllm-256's onset, in the upper half of 1..400), while
// gen's own batch draw under casecost.Small never does at that width.
func TestProfileReachesCPUDrift(t *testing.T) {
	p := loadProfile(t, smallProfile)
	reach := func(maxTokens int) int {
		r := rand.New(rand.NewSource(1))
		n := 0
		for range 300 {
			c := drawReshaped(r, spec.OpRMSNorm, spec.RelBatchInvariance, p.Apply, maxTokens, profileCPUCost)
			if max(c.Shape.Rows, c.Rel.Batch) >= 256 {
				n++
			}
		}
		return n
	}
	if n := reach(p.MaxTokens); n < 90 {
		t.Errorf("with max_tokens: %d of 300 draws reach 256 rows, want >= 90 (40%% expected)", n)
	}
	if n := reach(0); n != 0 {
		t.Errorf("without max_tokens: %d of 300 draws reach 256 rows at hidden 768, want 0 (casecost.Small)", n)
	}
}

// offCPU is an rmsnorm target off the CPU (device "test") with a declared
// schedule and no device reference: the CPU computes none of its items
// under batch invariance or padding, every item under oracle parity. It
// runs the oracle, and only on request (it is in no campaign's pairs).
type offCPU struct{}

func (offCPU) Info() target.Info {
	return target.Info{Name: "test-off-cpu", Op: spec.OpRMSNorm, Device: "test", OnRequest: true,
		Schedule: target.OracleRMSNormSchedule.String()}
}

func (offCPU) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := target.Lookup(target.OracleName(b.Op))
	if err != nil {
		return nil, err
	}
	return o.Run(ctx, b, rows)
}

func init() {
	target.Register("test-off-cpu", func() (target.Target, error) { return offCPU{}, nil })
}

// TestCPUBound: the CPU bound falls only where the CPU computes every
// item.
func TestCPUBound(t *testing.T) {
	tests := []struct {
		pair target.Pair
		want int64
	}{
		{target.Pair{Relation: spec.RelBatchInvariance, Targets: []string{"drift-rmsnorm-vllm-256"}}, profileCPUCost},
		{target.Pair{Relation: spec.RelOracleParity, Targets: []string{"drift-rmsnorm-vllm-256"}}, profileCPUCost},
		{target.Pair{Relation: spec.RelBatchInvariance, Targets: []string{"test-off-cpu"}}, 0},
		{target.Pair{Relation: spec.RelPadding, Targets: []string{"test-off-cpu"}}, 0},
		{target.Pair{Relation: spec.RelOracleParity, Targets: []string{"test-off-cpu"}}, profileCPUCost},
		{target.Pair{Relation: spec.RelBatchInvariance, Targets: []string{"no-such-target"}}, profileCPUCost},
	}
	for _, tt := range tests {
		if got := cpuBound(tt.pair); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.pair, got, tt.want)
		}
	}
}

// TestProfileCampaignHolds runs a campaign at the small profile against
// drift-rmsnorm-vllm-256 (drift from 256 rows on, the upper half of
// 1..400): it finds the drift, and the minimal case is at the profile's
// hidden 768, bf16 and eps, with a batch of 256 rows; with
// ShrinkPastReshape the hidden size shrinks below the profile's.
func TestProfileCampaignHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("a campaign")
	}
	p := loadProfile(t, smallProfile)
	run := func(past bool) spec.Finding {
		c := &Campaign{Seed: 5, Duration: 20 * time.Second, Targets: []string{"drift-rmsnorm-vllm-256"},
			Relations: []string{spec.RelBatchInvariance}, Reshape: p.Apply, MaxTokens: p.MaxTokens,
			ShrinkPastReshape: past, ShrinkBudget: 10 * time.Second}
		res, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 1 {
			t.Fatalf("%d findings in %d cases, want the drift", len(res.Findings), res.Cases)
		}
		return res.Findings[0]
	}
	f := run(false)
	m := f.Case
	if err := p.Holds(m); err != nil {
		t.Errorf("minimal case %s: %v", spec.ReproLine(m), err)
	}
	if b := max(m.Shape.Rows, m.Rel.Batch); b != 256 {
		t.Errorf("minimal case %s: batch %d, want the onset 256", spec.ReproLine(m), b)
	}
	if f.Original == nil || p.Holds(*f.Original) != nil {
		t.Errorf("the case as drawn is not at the profile: %+v", f.Original)
	}
	if f := run(true); f.Case.Shape.Hidden >= p.Hidden {
		t.Errorf("shrunk past the profile: hidden %d, want < %d", f.Case.Shape.Hidden, p.Hidden)
	}
}
