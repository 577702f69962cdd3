package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
)

// durable makes a campaign's findings outlive the process: each one is
// written to the --corpus folder and to --json's journal (corpus.Journal)
// when it is found, before it is printed and before shrinking, and its
// shrunk form replaces it when shrinking is done:
//
//	found:   corpus Put(found case), journal "found", print "found: ..."
//	shrunk:  corpus Put(minimal case), journal "shrunk", delete the found
//	         case's file when this run created it (or, when shrinking kept
//	         the case, update its finding), print "minimal: ..."
//
// A kill -9 after a "found:" line therefore leaves that finding in the
// corpus (as found or as shrunk) and in the journal. The first write
// failure is kept and ends the run with exit 3.
type durable struct {
	mu      sync.Mutex
	stderr  io.Writer
	dir     corpus.Store    // nil without --corpus
	where   string          // --corpus: a folder or a bucket URL
	journal *corpus.Journal // nil without --json
	json    string
	head    spec.Result
	keys    []string                // finding keys in the order found
	latest  map[string]spec.Finding // key -> its latest form
	created map[string]bool         // corpus names this run created
	stats   fuzz.Stats
	closed  bool
	err     error
}

// openDurable opens the corpus folder and creates --json's journal (both
// optional). A journal left by an interrupted run at the same path is moved
// aside, and said so, before a new one starts.
func openDurable(stderr io.Writer, corpusDir, jsonPath string, head spec.Result) (*durable, error) {
	d := &durable{stderr: stderr, json: jsonPath, head: head, latest: map[string]spec.Finding{}, created: map[string]bool{}}
	if corpusDir != "" {
		dir, err := corpus.Open(context.Background(), corpusDir, true)
		if err != nil {
			return nil, fmt.Errorf("run: --corpus: %w", err)
		}
		d.dir, d.where = dir, corpusDir
	}
	if jsonPath != "" {
		jpath := jsonPath + corpus.JournalSuffix
		if _, err := os.Lstat(jpath); err == nil {
			aside := fmt.Sprintf("%s.interrupted-%s", jpath, time.Now().UTC().Format("20060102T150405"))
			if err := os.Rename(jpath, aside); err != nil {
				return nil, fmt.Errorf("run: move the journal of an interrupted run aside: %w", err)
			}
			fmt.Fprintf(stderr, "run: %s is the journal of an interrupted run, moved to %s (bitparity merge --json OUT %s rebuilds its result)\n", jpath, aside, aside)
		}
		j, err := corpus.CreateJournal(jpath, head)
		if err != nil {
			return nil, fmt.Errorf("run: --json: %w", err)
		}
		d.journal = j
	}
	return d, nil
}

// key names a finding by the corpus name of its case as first found.
func findingKey(c spec.Case) string {
	h, err := corpus.CaseHash(c)
	if err != nil {
		return "unhashable"
	}
	return h + ".json"
}

// found records f as first found, then prints it.
func (d *durable) found(f spec.Finding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	key := findingKey(f.Case)
	if _, seen := d.latest[key]; !seen {
		d.keys = append(d.keys, key)
	}
	d.latest[key] = f
	where := d.store(f)
	if d.journal != nil {
		d.fail(d.journal.Found(key, f))
	}
	fmt.Fprintf(d.stderr, "found: %s %s (%s) after %s, %d cases%s\n", f.Relation, runTargetsOf(f), f.Kind,
		time.Duration(f.Elapsed).Round(time.Millisecond), f.CasesBefore, where)
}

// shrunk records f, the minimal form of a finding recorded by found, then
// prints it.
func (d *durable) shrunk(f spec.Finding) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	orig := f.Case
	if f.Original != nil {
		orig = *f.Original
	}
	key := findingKey(orig)
	if _, seen := d.latest[key]; !seen {
		d.keys = append(d.keys, key)
	}
	d.latest[key] = f
	where := d.store(f)
	if d.journal != nil {
		d.fail(d.journal.Shrunk(key, f))
	}
	if name := findingKey(f.Case); name != key && d.dir != nil && d.created[key] && d.err == nil {
		if err := d.dir.Delete(key); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, corpus.ErrNotFound) {
			d.fail(fmt.Errorf("run: corpus: replace %s by its shrunk form: %w", key, err))
		}
	}
	fmt.Fprintf(d.stderr, "minimal: %s %s (%s) in %s%s\n", f.Relation, runTargetsOf(f), f.Kind,
		time.Duration(f.ToMinimal).Round(time.Millisecond), where)
}

// store puts f into the corpus and says where it went (for the printed
// line), "" without --corpus.
func (d *durable) store(f spec.Finding) string {
	if d.dir == nil {
		return ""
	}
	// this process's whole fingerprint (hereEnv: the GPU's too in a cuda build)
	file := corpus.NewFile(f.Case, &f, d.head.Env, "campaign")
	file.Adapters = external.Adapters(f.Case.Targets...) // what an exec: target needs to replay
	name, added, err := d.dir.Put(file)
	if err != nil {
		d.fail(fmt.Errorf("run: corpus %s: %w", d.where, err))
		return " (NOT stored: " + err.Error() + ")"
	}
	if added {
		d.created[name] = true
	} else if d.created[name] {
		// shrinking kept the case this run stored as found: its final
		// finding (the drift map, the shrink record) replaces the first
		if err := d.dir.Update(name, func(g *corpus.File) error {
			g.Finding, g.Signature = file.Finding, file.Signature
			return nil
		}); err != nil {
			d.fail(fmt.Errorf("run: corpus %s: %w", d.where, err))
			return " (NOT updated: " + err.Error() + ")"
		}
	}
	if dir, ok := d.dir.(*corpus.Dir); ok {
		return "; case " + dir.PathOf(name)
	}
	return "; case " + strings.TrimSuffix(d.where, "/") + "/" + name
}

func (d *durable) fail(err error) {
	if err != nil && d.err == nil {
		d.err = err
		fmt.Fprintf(d.stderr, "run: %v\n", err)
	}
}

// progress records the campaign's counts (Campaign.Progress).
func (d *durable) progress(s fuzz.Stats) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats = s
	if d.journal != nil && !d.closed {
		d.journal.Progress(s.Cases, s.InvariantCases) // a lost count only understates
	}
}

// partial is the result as recorded so far, for a campaign that did not
// return in time: the header, the last counts and every finding in its
// latest form. Later calls record nothing.
func (d *durable) partial() *spec.Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	r := d.head
	r.Duration = spec.Duration(time.Since(r.Started))
	r.Cases, r.InvariantCases = d.stats.Cases, d.stats.InvariantCases
	for _, k := range d.keys {
		r.Findings = append(r.Findings, d.latest[k])
	}
	return &r
}

// finish ends the journal with res, writes --json as rebuilt from the
// journal, and removes the journal; without --json it only closes.
func (d *durable) finish(res *spec.Result) error {
	d.mu.Lock()
	d.closed = true
	j := d.journal
	err := d.err
	d.mu.Unlock()
	if j == nil {
		return err
	}
	if e := j.End(*res); e != nil {
		return fmt.Errorf("run: %w", e)
	}
	back, complete, e := corpus.RebuildJournal(j.Path())
	if e != nil || !complete {
		return fmt.Errorf("run: rebuild %s from its journal: %v (the journal %s is kept)", d.json, e, j.Path())
	}
	if e := runWriteJSONAtomic(d.json, back); e != nil {
		return fmt.Errorf("run: %w (the journal %s is kept)", e, j.Path())
	}
	os.Remove(j.Path())
	return err
}

// runDurably runs c under d until it returns, or, once ctx has ended (an
// interrupt), for at most grace more plus the campaign's own grace: a
// campaign still mapping a drift then is abandoned and the result recorded
// so far is returned (its findings are already in the corpus and journal).
func runDurably(ctx context.Context, c *fuzz.Campaign, d *durable, grace time.Duration) (*spec.Result, error) {
	c.OnFound = d.found
	c.OnFinding = d.shrunk
	prog := c.Progress
	c.Progress = func(s fuzz.Stats) {
		d.progress(s)
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
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
	}
	hard := time.NewTimer(2*grace + time.Second)
	defer hard.Stop()
	select {
	case r := <-done:
		return r.res, r.err
	case <-hard.C:
		fmt.Fprintf(d.stderr, "run: interrupted: shrinking did not end within %s; findings are reported as far as they got\n", 2*grace+time.Second)
		return d.partial(), nil
	}
}
