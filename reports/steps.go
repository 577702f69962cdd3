package reports

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Steps shows how a job of a known number of steps (a scan: one step per
// value and draw) is going, with its rate and an estimate of the time
// left from the rate so far. On a terminal it draws a bar; anywhere else
// it writes one line every LineInterval:
//
//	scan: 12288 of 24576 steps (50%), 0:04 elapsed, 0:04 left
//
// A nil *Steps does nothing.
type Steps struct {
	display
	what  string
	total int
	done  int
}

// NewSteps starts a display of total steps on w, named what.
func NewSteps(w io.Writer, what string, total int) *Steps {
	return newSteps(w, what, total, time.Now, isTerminal(w))
}

func newSteps(w io.Writer, what string, total int, now func() time.Time, terminal bool) *Steps {
	s := &Steps{what: what, total: total}
	s.init(w, now)
	if terminal {
		s.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
		)
	}
	return s
}

// Update records that done steps are done.
func (s *Steps) Update(done int) {
	if s == nil {
		return
	}
	s.UpdateOf(done, s.total)
}

// UpdateOf records that done of total steps are done: a run that adds
// steps (a scan's added draws) raises the total.
func (s *Steps) UpdateOf(done, total int) {
	if s == nil {
		return
	}
	s.update(func() {
		if total != s.total {
			s.total = total
			if s.bar != nil {
				s.bar.ChangeMax(total)
			}
		}
		s.done = done
		if s.bar != nil {
			s.bar.Set(done)
			return
		}
		if now := s.now(); now.Sub(s.lastLine) >= LineInterval {
			s.lastLine = now
			fmt.Fprintf(s.w, "%s: %s\n", s.what, s.line(now.Sub(s.start)))
		}
	})
}

// line says steps done, the share, the elapsed time and the time left at
// the rate so far.
func (s *Steps) line(elapsed time.Duration) string {
	l := fmt.Sprintf("%d of %d steps", s.done, s.total)
	if s.total > 0 {
		l += fmt.Sprintf(" (%d%%)", 100*s.done/s.total)
	}
	l += ", " + clock(elapsed) + " elapsed"
	if s.done > 0 && s.total >= s.done {
		left := time.Duration(float64(elapsed) * float64(s.total-s.done) / float64(s.done))
		l += ", " + clock(left) + " left"
	}
	return l
}

// Finish clears the bar.
func (s *Steps) Finish() {
	if s == nil {
		return
	}
	s.finish(nil)
}
