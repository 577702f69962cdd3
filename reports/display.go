package reports

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// display is what Progress and Steps share: where they write, their
// clock, when they started and last wrote a line, the bar on a terminal
// (nil elsewhere) and whether they finished; mu guards it.
type display struct {
	mu       sync.Mutex
	w        io.Writer
	now      func() time.Time
	start    time.Time
	lastLine time.Time
	bar      *progressbar.ProgressBar // nil when not a terminal
	finished bool
}

// init starts d on w at now().
func (d *display) init(w io.Writer, now func() time.Time) {
	d.w, d.now = w, now
	d.start = now()
	d.lastLine = d.start
}

// update runs fn holding d's lock, unless d finished.
func (d *display) update(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.finished {
		fn()
	}
}

// finish ends d the first time it is called: it clears the bar and runs
// fn (nil: nothing) with the time elapsed since the start, holding d's
// lock. Later calls do nothing.
func (d *display) finish(fn func(elapsed time.Duration)) {
	d.update(func() {
		d.finished = true
		elapsed := d.now().Sub(d.start)
		if d.bar != nil {
			d.bar.Clear()
			d.bar.Exit()
		}
		if fn != nil {
			fn(elapsed)
		}
	})
}
