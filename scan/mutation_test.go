package scan

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var (
	mutants    = flag.Int("mutants", 4, "TestMutation: planted drifts")
	mutantTo   = flag.Int("mutant-to", 24, "TestMutation: the largest batch (items 1..N)")
	mutantCols = flag.Int("mutant-hidden", 768, "TestMutation: rmsnorm hidden size (logprob: vocab)")
	mutantOp   = flag.String("mutant-op", "rmsnorm", "TestMutation: rmsnorm or logprob")
)

// mutant is the CPU twin of a kernel whose schedule for one row depends
// on the batch: the oracle's declared schedule for every row, but row pos
// (a batch position, the item at it in an items scan) of a batch of
// lo..hi rows computes with alt, as a kernel does whose last partial tile
// or second wave takes another reduction path from some batch size on.
type mutant struct {
	info    target.Info
	decl    oracle.Schedule
	alt     oracle.Schedule
	pos     int
	lo, hi  int
	rowsFor func(b *target.Batch) int
}

func (p *mutant) Info() target.Info { return p.info }

func (p *mutant) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := target.RunOracle(b, p.decl, rows)
	if err != nil {
		return nil, err
	}
	if n := p.rowsFor(b); n < p.lo || n > p.hi || p.pos >= n {
		return o, nil
	}
	alt, err := target.RunOracle(b, p.alt, []int{p.pos})
	if err != nil {
		return nil, err
	}
	for i, r := range o.Rows {
		if r == p.pos {
			copy(o.Values[i*o.Cols:(i+1)*o.Cols], alt.Values)
			if o.Taps != nil {
				copy(o.Taps[i*o.TapCols:(i+1)*o.TapCols], alt.Taps)
			}
		}
	}
	return o, nil
}

var registerPlanted sync.Mutex

// TestMutation plants single-row drifts of the family (a random
// alternative of fuzz.Family, a random position, a random batch range
// lo..To that contains the position's batches) into the CPU twin and
// scans each over items 1..To with the default draws and power loop,
// outputs only: every planted drift must be caught (>= 99%). The share
// and the time to catch are logged; -mutants, -mutant-to, -mutant-hidden
// and -mutant-op scale it (docs/detection.md).
func TestMutation(t *testing.T) {
	op := spec.Op(*mutantOp)
	s := spec.ScanSpec{Op: op, From: 1, To: *mutantTo, In: spec.BF16, Out: spec.BF16, Seed: 7, NoTaps: true, Power: -1}
	decl := oracle.Schedule(target.OracleRMSNormSchedule)
	rowsFor := func(b *target.Batch) int { return b.RMSNorm.Rows }
	if op == spec.OpLogProb {
		s.Shape.Vocab, s.Out, decl = *mutantCols, spec.FP32, target.OracleLogProbSchedule
		rowsFor = func(b *target.Batch) int { return b.LogProb.Rows }
	} else {
		s.Shape.Hidden = *mutantCols
	}
	c := spec.Case{Op: op, Shape: s.Shape}
	f, err := fuzz.Family(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	caught, total := 0, time.Duration(0)
	for m := range *mutants {
		pos := rng.Intn(s.To)
		p := &mutant{decl: decl, alt: f.Alts[rng.Intn(len(f.Alts))], pos: pos, lo: pos + 1 + rng.Intn(s.To-pos), hi: s.To, rowsFor: rowsFor}
		if rng.Intn(2) == 0 { // a range that ends before the largest batch
			p.hi = p.lo + rng.Intn(s.To-p.lo+1)
		}
		name := fmt.Sprintf("test-planted-%s-%d-%d", op, *mutantCols, m)
		p.info = target.Info{Name: name, Op: op, Device: "cpu", Schedule: decl.String()}
		registerPlanted.Lock()
		if _, err := target.Lookup(name); err != nil {
			target.Register(name, func() (target.Target, error) { return p, nil })
		}
		registerPlanted.Unlock()
		ms := s
		ms.Target = name
		r, err := Run(context.Background(), ms, Options{})
		if err != nil {
			t.Fatal(err)
		}
		total += r.Elapsed
		if r.Certificate == nil {
			caught++
		} else {
			t.Logf("missed: %s at position %d, batches %d..%d (%s)", p.alt, p.pos, p.lo, p.hi, PowerWords(r.Power))
		}
	}
	share := float64(caught) / float64(*mutants)
	t.Logf("%s %d, items 1..%d: caught %d of %d planted single-row drifts (%.1f%%), %.2fs a scan", op, *mutantCols, s.To, caught, *mutants, 100*share, total.Seconds()/float64(*mutants))
	if share < 0.99 {
		t.Errorf("caught %.1f%% of planted single-row drifts, want >= 99%%", 100*share)
	}
}

// TestPowerStatus: a scan's certificate carries its power; one whose draws
// reach the target is valid, one below it (the draw limit reached first)
// is underpowered and says so; the loop adds sensitive draws.
func TestPowerStatus(t *testing.T) {
	s := spec.ScanSpec{Target: "oracle-rmsnorm", From: 1, To: 16, Shape: spec.Shape{Hidden: 256}, Seed: 3, NoTaps: true}
	for _, tc := range []struct {
		power    float64
		maxDraws int
		state    string
		draws    int
	}{
		{0.01, 4, spec.CertValid, 3}, // the first two draws leave a position at 0: one draw added
		{1, 3, spec.CertUnderpowered, 3},
	} {
		s.Power, s.MaxDraws = tc.power, tc.maxDraws
		r, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := r.Certificate
		if c == nil || c.Power == nil {
			t.Fatalf("power %g: certificate %+v", tc.power, c)
		}
		if c.Status.State != tc.state || len(c.Draws) != tc.draws || c.Power.Draws != tc.draws || c.Power.Positions != 16 {
			t.Errorf("power %g: state %s, draws %v, power %+v; want %s, %d draws", tc.power, c.Status.State, c.Draws, c.Power, tc.state, tc.draws)
		}
		if tc.draws > 2 && c.Draws[2] != spec.DistSensitive {
			t.Errorf("added draw %s, want sensitive", c.Draws[2])
		}
	}
}
