package verdict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// RecorderOptions say where a Recorder writes. Every field but Head is
// optional.
type RecorderOptions struct {
	// Store receives each finding as a case file; Where names it in
	// messages (a folder or a bucket URL). Nil: no case files.
	Store corpus.Store
	Where string
	// JSON is the result file (--json); its journal (JSON +
	// corpus.JournalSuffix) records each finding as it happens. "": none.
	JSON string
	// Head is the result's header: version, start, seed, environment and
	// arguments. Its Env is the fingerprint stored with each case file.
	Head spec.Result
	// Source is the case files' source ("campaign", "go test FuzzX").
	Source string
	// Log receives one line per finding found ("found: ...") and shrunk
	// ("minimal: ..."), and each write failure. Nil: io.Discard.
	Log io.Writer
}

// Recorder makes a campaign's findings outlive the process: each one is
// written to the store and to the journal when it is found, before it is
// printed and before shrinking, and its shrunk form replaces it when
// shrinking is done:
//
//	Found:   store Put(found case), journal "found", log "found: ..."
//	Shrunk:  store Put(minimal case), journal "shrunk", delete the found
//	         case's file when this recorder created it (or, when shrinking
//	         kept the case, update its finding), log "minimal: ..."
//
// A kill -9 after a "found:" line therefore leaves that finding in the
// store (as found or as shrunk) and in the journal. The first write
// failure is kept (Err) and logged; recording goes on. A Recorder is safe
// for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	opts    RecorderOptions
	log     io.Writer
	journal *corpus.Journal
	lock    *resultLock             // of opts.JSON, held until Finish
	keys    []string                // finding keys in the order found
	latest  map[string]spec.Finding // key -> its latest form
	created map[string]bool         // case names this recorder created and still holds
	stats   fuzz.Stats
	closed  bool
	err     error
}

// NewRecorder locks opts.JSON, if any, and creates its journal: the lock
// (flock on opts.JSON + LockSuffix, held until Finish or the process ends)
// refuses a second run on the same result file, with an error wrapping
// ErrLocked, before it touches the first's journal. A journal left by an
// interrupted run at the same path is then moved aside
// (corpus.AsideName), and the move logged with the command that rebuilds
// its result.
func NewRecorder(opts RecorderOptions) (*Recorder, error) {
	r := &Recorder{opts: opts, log: opts.Log, latest: map[string]spec.Finding{}, created: map[string]bool{}}
	if r.log == nil {
		r.log = io.Discard
	}
	if opts.Source == "" {
		r.opts.Source = "campaign"
	}
	if opts.JSON != "" {
		lock, err := lockResult(opts.JSON)
		if err != nil {
			return nil, fmt.Errorf("--json %w", err)
		}
		jpath := opts.JSON + corpus.JournalSuffix
		if _, err := os.Lstat(jpath); err == nil {
			aside, err := moveAside(jpath)
			if err != nil {
				lock.release()
				return nil, fmt.Errorf("move the journal of an interrupted run aside: %w", err)
			}
			fmt.Fprintf(r.log, "run: %s is the journal of an interrupted run, moved to %s; its result: bitparity merge --json %s %s\n",
				jpath, aside, spec.ShellQuote(recoveredName(opts.JSON, jpath, aside)), spec.ShellQuote(aside))
		}
		j, err := corpus.CreateJournal(jpath, opts.Head)
		if err != nil {
			lock.release()
			return nil, fmt.Errorf("--json: %w", err)
		}
		r.journal, r.lock = j, lock
	}
	return r, nil
}

// OpenRecorder is NewRecorder storing each finding in the corpus folder
// or bucket URL where (corpus.Open, created if needed); "" stores no case
// files.
func OpenRecorder(ctx context.Context, where string, opts RecorderOptions) (*Recorder, error) {
	if where != "" {
		s, err := corpus.Open(ctx, where, true)
		if err != nil {
			return nil, fmt.Errorf("--corpus: %w", err)
		}
		opts.Store, opts.Where = s, where
	}
	return NewRecorder(opts)
}

// moveAside renames the journal jpath to corpus.AsideName, or, when a
// journal moved aside in the same second is there, to that name with -2,
// -3, ... after it: never over another.
func moveAside(jpath string) (string, error) {
	base := corpus.AsideName(jpath, time.Now())
	aside := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(aside); err != nil {
			break // free (or unreadable: the rename says why)
		}
		aside = fmt.Sprintf("%s-%d", base, n)
	}
	return aside, os.Rename(jpath, aside)
}

// recoveredName is the result file the logged merge command writes for
// the journal of result moved aside from jpath to aside: result with the
// aside's mark before its extension (r.json -> r.interrupted-STAMP.json),
// a name no run's --json r.json writes or locks.
func recoveredName(result, jpath, aside string) string {
	ext := filepath.Ext(result)
	return strings.TrimSuffix(result, ext) + strings.TrimPrefix(aside, jpath) + ext
}

// Key names a finding by the case name of its case as first found (its
// Original when it was shrunk).
func Key(f spec.Finding) string {
	c := f.Case
	if f.Original != nil {
		c = *f.Original
	}
	h, err := corpus.CaseHash(c)
	if err != nil {
		return "unhashable"
	}
	return h + ".json"
}

// Found records f as first found, then logs it.
func (r *Recorder) Found(f spec.Finding) {
	r.whileOpen(func() {
		_, where := r.record(f, false)
		fmt.Fprintf(r.log, "found: %s %s (%s) after %s, %d cases%s\n", f.Relation, words.Targets(f), f.Kind,
			time.Duration(f.Elapsed).Round(time.Millisecond), f.CasesBefore, where)
	})
}

// Shrunk records f, the minimal form of a finding recorded by Found, then
// logs it. A finding Found never saw is recorded too.
func (r *Recorder) Shrunk(f spec.Finding) {
	r.whileOpen(func() {
		key, where := r.record(f, true)
		if name := caseName(f.Case); name != key && r.opts.Store != nil && r.created[key] && r.err == nil {
			if err := r.opts.Store.Delete(key); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, corpus.ErrNotFound) {
				r.fail(fmt.Errorf("corpus: replace %s by its shrunk form: %w", key, err))
			} else {
				delete(r.created, key)
			}
		}
		fmt.Fprintf(r.log, "minimal: %s %s (%s) in %s%s\n", f.Relation, words.Targets(f), f.Kind,
			time.Duration(f.ToMinimal).Round(time.Millisecond), where)
	})
}

// whileOpen runs fn holding r's lock, unless r is closed (Partial or
// Finish ran): a finding reported after that is not recorded.
func (r *Recorder) whileOpen(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		fn()
	}
}

// record notes f under its key, stores it in the corpus and journals it
// as shrunk or as first found; it returns the key and where the corpus
// put it (for the log line).
func (r *Recorder) record(f spec.Finding, shrunk bool) (key, where string) {
	key = Key(f)
	r.note(key, f)
	where = r.store(f, shrunk)
	if r.journal != nil {
		journal := r.journal.Found
		if shrunk {
			journal = r.journal.Shrunk
		}
		r.fail(journal(key, f))
	}
	return key, where
}

func (r *Recorder) note(key string, f spec.Finding) {
	if _, seen := r.latest[key]; !seen {
		r.keys = append(r.keys, key)
	}
	r.latest[key] = f
}

func caseName(c spec.Case) string {
	h, err := corpus.CaseHash(c)
	if err != nil {
		return "unhashable"
	}
	return h + ".json"
}

// store puts f, final when shrunk is true, into the store and says where
// it went (for the logged line), "" without a store.
func (r *Recorder) store(f spec.Finding, shrunk bool) string {
	if r.opts.Store == nil {
		return ""
	}
	if !corpus.Keeps(f.Case.Op) {
		return " (not stored: the corpus keeps no case of op " + string(f.Case.Op) + ")"
	}
	file := corpus.NewFile(f.Case, &f, r.opts.Head.Env, r.opts.Source)
	file.Adapters = external.Adapters(f.Case.Targets...) // what an exec: target needs to replay
	name, added, err := r.opts.Store.Put(file)
	if err != nil {
		r.fail(fmt.Errorf("corpus %s: %w", r.opts.Where, err))
		return " (NOT stored: " + err.Error() + ")"
	}
	if added {
		r.created[name] = true
	} else if r.created[name] {
		// shrinking kept the case this recorder stored as found: its final
		// finding (the drift map, the shrink record) replaces the first
		if err := r.opts.Store.Update(name, func(g *corpus.File) error {
			g.Finding, g.Signature = file.Finding, file.Signature
			return nil
		}); err != nil {
			r.fail(fmt.Errorf("corpus %s: %w", r.opts.Where, err))
			return " (NOT updated: " + err.Error() + ")"
		}
	}
	return "; case " + r.pathOf(name)
}

func (r *Recorder) pathOf(name string) string {
	if dir, ok := r.opts.Store.(*corpus.Dir); ok {
		return dir.PathOf(name)
	}
	return strings.TrimSuffix(r.opts.Where, "/") + "/" + name
}

// PathOf is where the store holds the case of f ("" without a store).
func (r *Recorder) PathOf(f spec.Finding) string {
	if r.opts.Store == nil {
		return ""
	}
	return r.pathOf(caseName(f.Case))
}

func (r *Recorder) fail(err error) {
	if err != nil && r.err == nil {
		r.err = err
		fmt.Fprintf(r.log, "run: %v\n", err)
	}
}

// Err is the first write failure, nil when every write succeeded.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Progress records the campaign's counts (fuzz.Campaign.Progress) in the
// journal.
func (r *Recorder) Progress(s fuzz.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats = s
	if r.journal != nil && !r.closed {
		r.journal.Progress(s.Cases, s.InvariantCases) // a lost count only understates
	}
}

// Findings counts the distinct findings recorded so far, found or shrunk.
func (r *Recorder) Findings() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys)
}

// Created lists the case files this recorder added to the store and
// still holds (a found case replaced by its shrunk form is not among them).
func (r *Recorder) Created() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.created))
	for name := range r.created {
		out = append(out, name)
	}
	return out
}

// Partial is the result as recorded so far, for a campaign that did not
// return in time: the header, the last counts and every finding in its
// latest form, marked interrupted. Later calls of Found, Shrunk and
// Progress record nothing.
func (r *Recorder) Partial() *spec.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	res := r.opts.Head
	res.Duration = spec.Duration(time.Since(res.Started))
	res.Cases, res.InvariantCases = r.stats.Cases, r.stats.InvariantCases
	res.Interrupted = true
	for _, k := range r.keys {
		res.Findings = append(res.Findings, r.latest[k])
	}
	return &res
}

// Finish ends the journal with res, writes the result file as rebuilt
// from the journal, removes the journal and releases the result file's
// lock; without a result file it only closes. It returns the first
// failure of the whole recording.
func (r *Recorder) Finish(res *spec.Result) error {
	r.mu.Lock()
	r.closed = true
	j := r.journal
	err := r.err
	r.mu.Unlock()
	defer r.lock.release()
	if j == nil {
		return err
	}
	if e := j.End(*res); e != nil {
		return e
	}
	back, complete, e := corpus.RebuildJournal(j.Path())
	if e != nil || !complete {
		return fmt.Errorf("rebuild %s from its journal: %v (the journal %s is kept)", r.opts.JSON, e, j.Path())
	}
	if e := WriteResult(r.opts.JSON, back); e != nil {
		return fmt.Errorf("%w (the journal %s is kept)", e, j.Path())
	}
	os.Remove(j.Path())
	return err
}

// Run runs c with r recording its findings (c.OnFound, c.OnFinding and
// c.Progress call r first, then the callbacks c had) until it returns,
// or, once ctx has ended (an interrupt), for at most grace more plus the
// campaign's own grace: a campaign still mapping a drift then is abandoned
// and the result recorded so far is returned (its findings are already in
// the store and the journal). The result of a campaign that ctx stopped is
// marked Interrupted. A grace of 0 is the campaign's (c.ShrinkGrace).
func (r *Recorder) Run(ctx context.Context, c *fuzz.Campaign, grace time.Duration) (*spec.Result, error) {
	return r.run(ctx, c, grace, nil)
}

// run is Run recording only the findings keep keeps (nil: all of them).
func (r *Recorder) run(ctx context.Context, c *fuzz.Campaign, grace time.Duration, keep func(spec.Finding) bool) (*spec.Result, error) {
	if grace <= 0 {
		grace = c.ShrinkGrace()
	}
	if keep == nil {
		keep = func(spec.Finding) bool { return true }
	}
	found, shrunk, prog := c.OnFound, c.OnFinding, c.Progress
	c.OnFound = func(f spec.Finding) {
		if keep(f) {
			r.Found(f)
		}
		if found != nil {
			found(f)
		}
	}
	c.OnFinding = func(f spec.Finding) {
		if keep(f) {
			r.Shrunk(f)
		}
		if shrunk != nil {
			shrunk(f)
		}
	}
	c.Progress = func(s fuzz.Stats) {
		r.Progress(s)
		if prog != nil {
			prog(s)
		}
	}
	c.Grace = grace
	type ret struct {
		res *spec.Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := c.Run(ctx)
		done <- ret{res, err}
	}()
	var out ret
	select {
	case out = <-done:
	case <-ctx.Done():
		hard := time.NewTimer(2*grace + time.Second)
		defer hard.Stop()
		select {
		case out = <-done:
		case <-hard.C:
			fmt.Fprintf(r.log, "run: interrupted: shrinking did not end within %s; findings are reported as far as they got\n", 2*grace+time.Second)
			return r.Partial(), nil
		}
	}
	if out.res != nil && ctx.Err() != nil {
		out.res.Interrupted = true
	}
	return out.res, out.err
}

// WriteResult writes res as indented JSON to path atomically (a temporary
// file in the same folder, then a rename), so a reader never sees half a
// file.
func WriteResult(path string, res *spec.Result) error {
	b, err := jsonIndent(res)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return atomicfile.Write(path, b)
}

// Keep stores in the recorder's store every finding of res it does not
// hold yet (corpus.ImportResult: the findings of a share or a worker,
// and any the recorder could not write as found), and counts the case
// files this run added (those it stored as found among them) and those
// that were already there. Without a store it does nothing.
func (r *Recorder) Keep(res *spec.Result) (added, there int, err error) {
	if r.opts.Store == nil {
		return 0, 0, nil
	}
	fresh, existing, errs := corpus.ImportResult(r.opts.Store, res)
	if len(errs) > 0 {
		return 0, 0, fmt.Errorf("corpus %s: %w", r.opts.Where, errors.Join(errs...))
	}
	ours := map[string]bool{}
	for _, name := range r.Created() {
		ours[name] = true
	}
	added = len(fresh)
	for _, name := range existing {
		if ours[name] {
			added++ // stored by this run as it was found
		} else {
			there++
		}
	}
	return added, there, nil
}
