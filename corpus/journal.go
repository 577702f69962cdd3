package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// JournalSuffix ends the name of a result's journal: `run --json R` keeps
// R + JournalSuffix while the campaign runs.
const JournalSuffix = ".journal"

// asideMark follows JournalSuffix in the name of the journal of an
// interrupted run that a later run with the same result file moved aside:
// R.journal.interrupted-STAMP (AsideName).
const asideMark = ".interrupted-"

// AsideName is the name the journal jpath (R + JournalSuffix) of an
// interrupted run is moved to, stamped with t (UTC, to the second):
// R.journal.interrupted-20261204T101500.
func AsideName(jpath string, t time.Time) string {
	return jpath + asideMark + t.UTC().Format("20060102T150405")
}

// IsJournal says whether path names a journal by its name: R.journal, or
// a journal moved aside, R.journal.interrupted-STAMP (with anything after
// STAMP, a suffix a mover added to keep two apart).
func IsJournal(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, JournalSuffix) || strings.Index(base, JournalSuffix+asideMark) > 0
}

// Journal is the append-only record of one campaign, written while it runs
// so that a process killed at any moment (kill -9 included) leaves every
// finding it reported behind. One JSON object per line:
//
//	{"rec":"start","result":R}          the campaign's header (no findings)
//	{"rec":"found","key":K,"finding":F} a finding as first found
//	{"rec":"shrunk","key":K,"finding":F} the minimal form of finding K
//	{"rec":"progress","cases":N,"invariant_cases":M}
//	{"rec":"end","result":R}            the complete result
//
// K is the corpus name of the case as first found (CaseHash + ".json"),
// which a shrunk record names again. Each record is written with one write
// call; found, shrunk and end records are fsynced before the call returns.
// RebuildJournal turns a journal, complete or cut short, into a result.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

type journalRecord struct {
	Rec            string        `json:"rec"`
	Key            string        `json:"key,omitempty"`
	Finding        *spec.Finding `json:"finding,omitempty"`
	Result         *spec.Result  `json:"result,omitempty"`
	Cases          int64         `json:"cases,omitempty"`
	InvariantCases int64         `json:"invariant_cases,omitempty"`
}

// CreateJournal creates the journal at path and writes its start record
// (head without findings). A journal already at path is an error: it is
// what an interrupted run left, for RebuildJournal.
func CreateJournal(path string, head spec.Result) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{f: f, path: path}
	head.Findings = nil
	if err := j.append(journalRecord{Rec: "start", Result: &head}, true); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return j, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Found records finding f as first found, under key (see Journal).
func (j *Journal) Found(key string, f spec.Finding) error {
	return j.append(journalRecord{Rec: "found", Key: key, Finding: &f}, true)
}

// Shrunk records f as the minimal form of the finding recorded under key.
func (j *Journal) Shrunk(key string, f spec.Finding) error {
	return j.append(journalRecord{Rec: "shrunk", Key: key, Finding: &f}, true)
}

// Progress records the case counts so far (not fsynced: a count lost to a
// crash only understates the cases run).
func (j *Journal) Progress(cases, invariantCases int64) error {
	return j.append(journalRecord{Rec: "progress", Cases: cases, InvariantCases: invariantCases}, false)
}

// End records the complete result and closes the journal.
func (j *Journal) End(r spec.Result) error {
	err := j.append(journalRecord{Rec: "end", Result: &r}, true)
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close closes the journal file; later writes fail.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

func (j *Journal) append(rec journalRecord, sync bool) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal %s: encode %s: %w", j.path, rec.Rec, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("journal %s: closed", j.path)
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if sync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
	}
	return nil
}

// RebuildJournal reads a journal and returns the result it records: the
// end record's result when the campaign finished; otherwise the start
// record's header with the last progress counts and every finding, in the
// order found, each replaced by its shrunk form when one was recorded,
// marked Interrupted (the run never ended it). A last line cut short by a
// kill is ignored; any other bad line is an error.
// complete says whether the journal has its end record.
func RebuildJournal(path string) (r *spec.Result, complete bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("journal: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("journal: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("journal %s: not a regular file", path)
	}
	if st.Size() > spec.MaxResultBytes {
		return nil, false, fmt.Errorf("journal %s: %d bytes, over the %d-byte limit", path, st.Size(), spec.MaxResultBytes)
	}
	br := bufio.NewReader(io.LimitReader(fh, spec.MaxResultBytes))
	var (
		head  *spec.Result
		end   *spec.Result
		keys  []string
		found = map[string]spec.Finding{}
		cases [2]int64
	)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr == io.EOF {
			break // a last line without its newline was cut short: ignored
		}
		if rerr != nil {
			return nil, false, fmt.Errorf("journal %s: %w", path, rerr)
		}
		var rec journalRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, false, fmt.Errorf("journal %s: line %d: %w", path, n, jsonErr(err))
		}
		switch {
		case n == 1 && (rec.Rec != "start" || rec.Result == nil):
			return nil, false, fmt.Errorf("journal %s: line 1 is a %q record, want start: not a journal", path, rec.Rec)
		case rec.Rec == "start" && n == 1:
			head = rec.Result
		case (rec.Rec == "found" || rec.Rec == "shrunk") && rec.Finding != nil && rec.Key != "":
			if _, ok := found[rec.Key]; !ok {
				keys = append(keys, rec.Key)
			}
			found[rec.Key] = *rec.Finding
		case rec.Rec == "progress":
			cases = [2]int64{rec.Cases, rec.InvariantCases}
		case rec.Rec == "end" && rec.Result != nil:
			end = rec.Result
		default:
			return nil, false, fmt.Errorf("journal %s: line %d: bad %q record", path, n, rec.Rec)
		}
	}
	if head == nil {
		return nil, false, fmt.Errorf("journal %s: empty", path)
	}
	if end != nil {
		return end, true, checkResultVersion(path, end)
	}
	r = head
	r.Cases, r.InvariantCases = max(r.Cases, cases[0]), max(r.InvariantCases, cases[1])
	r.Interrupted = true // the run ended before it wrote its end record
	for _, k := range keys {
		r.Findings = append(r.Findings, found[k])
	}
	return r, false, checkResultVersion(path, r)
}

func checkResultVersion(path string, r *spec.Result) error {
	if r.Version != spec.ResultVersion {
		return fmt.Errorf("%s: version: %d, this build reads result version %d", path, r.Version, spec.ResultVersion)
	}
	return nil
}

// ReadResultOrJournal reads a result file, or rebuilds one from a journal
// when IsJournal(path) (see RebuildJournal).
func ReadResultOrJournal(path string) (*spec.Result, error) {
	if !IsJournal(path) {
		return ReadResult(path)
	}
	r, _, err := RebuildJournal(path)
	return r, err
}

// MergeResultFiles reads the result files (or journals: ReadResultOrJournal)
// at paths and merges them (fuzz.MergeResults: findings deduplicated by
// signature, the earliest kept; cases summed), as `bitparity merge` does
// with the results of one campaign's shards.
func MergeResultFiles(paths ...string) (*spec.Result, error) {
	rs := make([]*spec.Result, len(paths))
	for i, p := range paths {
		r, err := ReadResultOrJournal(p)
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	return fuzz.MergeResults(rs...)
}
