package transformer

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/transformer/internal/e2e"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestTransformerCampaign: in a short fuzz.Campaign over the transformer
// source every control is found (drift models at their planted site,
// misuses flagged: Expected) and the invariant jobs give no finding.
// Shrinking is TestTransformerMinimize's.
func TestTransformerCampaign(t *testing.T) {
	c := &fuzz.Campaign{Duration: 10 * time.Second, Seed: 1, NoShrink: true, Workers: 1,
		Sources: []*fuzz.Source{Source("", "")}, Targets: []string{"transformer"}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	jobs := jobs("", "")
	if len(res.Targets) != len(jobs) {
		t.Fatalf("%d job statistics, want one per job (%d): %+v", len(res.Targets), len(jobs), res.Targets)
	}
	for _, s := range res.Targets {
		if !s.Invariant && s.Findings == 0 {
			t.Errorf("control %s not found in %d cases", s.Target, s.Cases)
		}
		if s.Invariant && s.Findings > 0 {
			t.Errorf("invariant job %s gave %d finding(s)", s.Target, s.Findings)
		}
	}
	if res.InvariantCases == 0 {
		t.Error("no invariant case ran")
	}
	for _, f := range res.Findings {
		if !f.Expected {
			t.Errorf("finding not expected: %s %s at %+v: %s", f.Relation, f.Kind, f.Site, f.Message)
		}
		t.Logf("%-8s after %3d cases, %v: %s", f.Kind, f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond),
			f.Message[:min(len(f.Message), 160)])
	}
	t.Logf("%d cases (%d invariant, all agreeing) in %v", res.Cases, res.InvariantCases, time.Duration(res.Duration).Round(time.Millisecond))
}

// plantedCase finds a seed from 7000 whose case, with gemm_splitk_by_m
// planted at L0.mlp_up, gives a finding.
func plantedCase(t *testing.T) (spec.Case, *spec.Finding) {
	t.Helper()
	for seed := uint64(7000); seed < 7040; seed++ {
		c := Gen{}.Case(seed)
		c.Relation = spec.RelPathParity
		c, err := e2e.Plant(c, "gemm_splitk_by_m", e2e.Site{Layer: 0, Op: e2e.OpMLPUp})
		if err != nil {
			t.Fatal(err)
		}
		f, err := fuzz.Check(context.Background(), c, Source("", ""))
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			return c, f
		}
	}
	t.Fatal("no planted finding in 40 seeds")
	return spec.Case{}, nil
}

// TestTransformerMinimize shrinks a planted drift's case with fuzz.Minimize
// and the source's steps: the minimal case is no larger in any dimension,
// smaller in some, and still shows the drift at the planted site.
func TestTransformerMinimize(t *testing.T) {
	c, f := plantedCase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, st, err := fuzz.Minimize(ctx, f, fuzz.MinimizeOptions{Targets: []target.Target{Source("", "")}})
	if err != nil {
		t.Fatal(err)
	}
	o, m := c.Shape, g.Case.Shape
	if g.ShrinkSteps == 0 || g.Original == nil {
		t.Fatalf("no shrink step from %+v", o)
	}
	if m.Rows > o.Rows || m.Hidden > o.Hidden || m.Seqs > o.Seqs || m.SeqLen > o.SeqLen || m.N > o.N || m.Vocab > o.Vocab {
		t.Fatalf("minimal %+v is larger than %+v", m, o)
	}
	if want := (spec.Site{Layer: 0, Op: "mlp_up"}); g.Site == nil || *g.Site != want {
		t.Fatalf("the minimal case's finding moved: site %+v, want %+v (%s)", g.Site, want, g.Message)
	}
	if g.DriftMap == nil || g.DriftMap.Rule == "" {
		t.Fatalf("the minimal finding has no drift map: %s", g.Message)
	}
	t.Logf("%d steps, %d tries in %v: %+v -> %+v; map %s: %s", g.ShrinkSteps, st.Tried, st.Elapsed.Round(time.Millisecond), o, m,
		g.DriftMap.Dim, g.DriftMap.Rule)
}

// TestTransformerExpectedBySite: a planted drift's finding carries its
// structured site, and fuzz.Job.Expected judges it by that site alone: the
// planted site makes it expected, another site (same message text aside)
// does not, and neither does another kind.
func TestTransformerExpectedBySite(t *testing.T) {
	c, f := plantedCase(t)
	planted := e2e.PlantedSite(c)
	if want := (spec.Site{Layer: 0, Op: "mlp_up"}); planted == nil || *planted != want {
		t.Fatalf("planted site %+v, want %+v", planted, want)
	}
	if f.Site == nil || *f.Site != *planted {
		t.Fatalf("finding site %+v, want the planted %+v (%s)", f.Site, planted, f.Message)
	}
	var drift, misuse fuzz.Job
	for _, j := range jobs("", "") {
		switch j.Name {
		case "transformer/drift/gemm_splitk_by_m":
			drift = j
		case "transformer/misuse/compare_fp32":
			misuse = j
		}
	}
	if !drift.Expected(f, planted) {
		t.Error("the planted site's finding is not expected")
	}
	other := *f
	other.Site = &spec.Site{Layer: 1, Op: "mlp_up"}
	if !strings.Contains(other.Message, "first divergence: L0.mlp_up ") {
		t.Fatalf("message does not name the site: %s", other.Message)
	}
	if drift.Expected(&other, planted) {
		t.Error("a finding at another site is expected (its message still names the planted one)")
	}
	if misuse.Expected(f, planted) {
		t.Error("a mismatch is expected of a misuse control")
	}
}

var update = flag.Bool("update", false, "rewrite testdata/campaign.golden")

// TestTransformerCampaignGolden pins what a seeded campaign over the source
// finds, unshrunk: each control's kind, planted target and drift map
// (testdata/campaign.golden; -update rewrites it). The jobs' seeds and
// their turns make it depend on the seed alone.
func TestTransformerCampaignGolden(t *testing.T) {
	c := &fuzz.Campaign{Duration: time.Second, Seed: 1, NoShrink: true, Workers: 1,
		Sources: []*fuzz.Source{Source("", "")}, Targets: []string{"transformer"}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range res.Findings {
		rule := ""
		if f.DriftMap != nil {
			rule = f.DriftMap.Dim + ": " + f.DriftMap.Rule
		}
		lines = append(lines, fmt.Sprintf("%s %s expected=%v %s | %s", f.Relation, f.Kind, f.Expected, f.TargetB, rule))
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "campaign.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("seed 1's findings changed (go test -run TestTransformerCampaignGolden -update after an intended change):\ngot:\n%s\nwant:\n%s", got, want)
	}
}
