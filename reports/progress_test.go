package reports

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock               { return &fakeClock{t: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)} }
func lines(b *bytes.Buffer) []string {
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}
func plain(w *bytes.Buffer, c *fakeClock, total time.Duration) *Progress {
	return newProgress(w, total, c.now, false, 0)
}

// Off a terminal: one line per LineInterval, none in between, and a final
// line on Finish.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	p := plain(&buf, c, time.Minute)
	for i := 1; i <= 24; i++ { // every 0.5 s for 12 s
		c.add(500 * time.Millisecond)
		p.Update(int64(i)*1000, i/10)
	}
	p.Finish()
	p.Update(99, 99) // after Finish: nothing
	p.Finish()
	want := []string{
		"progress: 0:05 of 1:00, 10000 cases (2000/s), 1 finding, 0:55 left",
		"progress: 0:10 of 1:00, 20000 cases (2000/s), 2 findings, 0:50 left",
		"done: 0:12, 24000 cases (2000/s), 2 findings",
	}
	if d := cmp.Diff(want, lines(&buf)); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
}

// Unknown total: no "of" and no remaining time; past the total the
// remaining time stays at zero.
func TestProgressTotals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total time.Duration
		step  time.Duration
		want  string
	}{
		{"unknown", 0, 6 * time.Second, "progress: 0:06, 60 cases (10/s), 0 findings"},
		{"overrun", 5 * time.Second, 6 * time.Second, "progress: 0:06 of 0:05, 60 cases (10/s), 0 findings, 0:00 left"},
		{"hours", 3 * time.Hour, 90 * time.Minute, "progress: 1:30:00 of 3:00:00, 60 cases (0/s), 0 findings, 1:30:00 left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			c := newClock()
			p := plain(&buf, c, tc.total)
			c.add(tc.step)
			p.Update(60, 0)
			if got := strings.TrimSuffix(buf.String(), "\n"); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// On a terminal the bar draws with the stats at the end, and Finish clears
// it and leaves the final line.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	p := newProgress(&buf, time.Minute, c.now, true, 0)
	c.add(30 * time.Second)
	p.Update(60000, 1)
	out := buf.String()
	if !strings.Contains(out, "60000 cases (2000/s), 1 finding, 0:30 elapsed, 0:30 left") {
		t.Errorf("bar without stats: %q", out)
	}
	if !strings.Contains(out, "50%") {
		t.Errorf("bar not at 50%%: %q", out)
	}
	c.add(40 * time.Second) // past the total: the bar stays at 100 %
	p.Update(70000, 1)
	p.Finish()
	if !strings.HasSuffix(buf.String(), "done: 1:10, 70000 cases (1000/s), 1 finding\n") {
		t.Errorf("no final line: %q", buf.String())
	}
}

// NewProgress on a buffer is not a terminal; a nil Progress is a no-op;
// concurrent updates are safe (run with -race).
func TestProgressSafe(t *testing.T) {
	var nilP *Progress
	nilP.Update(1, 1)
	nilP.Finish()

	var buf bytes.Buffer
	p := NewProgress(&buf, time.Hour)
	if p.bar != nil {
		t.Fatal("a bytes.Buffer was taken for a terminal")
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				p.Update(int64(i), 0)
			}
		}()
	}
	wg.Wait()
	p.Finish()
	if !strings.HasPrefix(buf.String(), "done: ") {
		t.Errorf("output %q", buf.String())
	}
}
