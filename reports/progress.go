package reports

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// LineInterval is how often a Progress that is not on a terminal writes a
// line.
const LineInterval = 5 * time.Second

// Progress shows how a campaign of a known duration is going. On a terminal
// it draws a progress bar over the elapsed time with cases/s, findings,
// elapsed and remaining time; anywhere else (a CI log, a file, a pipe) it
// writes one plain line every LineInterval:
//
//	progress: 0:15 of 1:00, 43210 cases (2881/s), 1 finding, 0:45 left
//
// Update and Finish may be called from any goroutine. A nil *Progress does
// nothing, so callers need not check.
type Progress struct {
	display
	total    time.Duration
	interval time.Duration
	cases    int64
	findings int
}

// NewProgress starts a progress display on w for a campaign of total
// duration (zero or less: unknown, no remaining time). It draws a bar when
// w is a terminal (an *os.File for which isatty says so, and TERM is not
// "dumb").
func NewProgress(w io.Writer, total time.Duration) *Progress {
	return newProgress(w, total, time.Now, isTerminal(w), 200*time.Millisecond)
}

// newProgress is NewProgress with a clock, the terminal decision and the
// bar's redraw throttle (measured by the bar on the real clock) given.
func newProgress(w io.Writer, total time.Duration, now func() time.Time, terminal bool, throttle time.Duration) *Progress {
	p := &Progress{total: total, interval: LineInterval}
	p.init(w, now)
	if terminal {
		max := int64(-1)
		if total > 0 {
			max = int64(total / (100 * time.Millisecond))
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(throttle),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Update records the campaign's running totals (cases run so far, findings
// so far) and redraws the bar, or writes a line when LineInterval has passed
// since the last one. It is cheap enough to call after every case.
func (p *Progress) Update(cases int64, findings int) {
	if p == nil {
		return
	}
	p.update(func() {
		p.cases, p.findings = cases, findings
		now := p.now()
		elapsed := now.Sub(p.start)
		if p.bar != nil {
			units := int64(elapsed / (100 * time.Millisecond))
			if max := p.bar.GetMax64(); max > 0 && units >= max {
				units = max - 1 // a full bar is finished and no longer redraws
			}
			p.bar.Set64(units)
			p.bar.Describe(p.stats(elapsed, false))
			return
		}
		if now.Sub(p.lastLine) >= p.interval {
			p.lastLine = now
			fmt.Fprintf(p.w, "progress: %s\n", p.stats(elapsed, true))
		}
	})
}

// Finish ends the display with one final line:
//
//	done: 1:00, 172800 cases (2880/s), 2 findings
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.finish(func(elapsed time.Duration) {
		fmt.Fprintf(p.w, "done: %s, %d cases (%s/s), %d %s\n", clock(elapsed), p.cases,
			rate(p.cases, elapsed), p.findings, words.Plural(int64(p.findings), "finding", "findings"))
	})
}

// stats says cases, cases/s, findings, elapsed and remaining time.
func (p *Progress) stats(elapsed time.Duration, withElapsed bool) string {
	s := ""
	if withElapsed {
		s = clock(elapsed)
		if p.total > 0 {
			s += " of " + clock(p.total)
		}
		s += ", "
	}
	s += fmt.Sprintf("%d cases (%s/s), %d %s", p.cases, rate(p.cases, elapsed), p.findings,
		words.Plural(int64(p.findings), "finding", "findings"))
	if !withElapsed {
		s += ", " + clock(elapsed) + " elapsed"
	}
	if p.total > 0 {
		s += ", " + clock(max(p.total-elapsed, 0)) + " left"
	}
	return s
}

// clock formats a duration as m:ss, or h:mm:ss from one hour.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// rate is cases per second over elapsed, rounded; "-" before any time passed.
func rate(cases int64, elapsed time.Duration) string {
	if elapsed <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(cases)/elapsed.Seconds())
}
