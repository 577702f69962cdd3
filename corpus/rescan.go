package corpus

import (
	"fmt"

	"github.com/bitparity/bitparity/spec"
)

// CertRecheck is one certificate RecheckCertificates read.
type CertRecheck struct {
	Name string
	Was  *spec.Certificate // as stored; nil: it could not be read (Err)
	Got  spec.Certificate  // as written back, when Err is nil
	Err  error             // reading or rerunning it failed
}

// RecheckCertificates reruns the scan of every certificate of d that is
// not invalid (rerun gives it back with its new status: valid, checked
// now, underpowered or invalid) and writes it back. each sees, in order,
// every certificate rerun and every one that could not be read or rerun;
// the error is a failure to list or to write back.
func RecheckCertificates(d *Dir, rerun func(*spec.Certificate) (spec.Certificate, error), each func(CertRecheck)) error {
	open := func(c *spec.Certificate) bool { return c.Status.State != spec.CertInvalid }
	return recheck(d, certificates, open, rerun, func(name string, was, got *spec.Certificate, err error) {
		r := CertRecheck{Name: name, Was: was, Err: err}
		if got != nil {
			r.Got = *got
		}
		each(r)
	})
}

// DriftRecheck is one scan drift RecheckScanDrifts read.
type DriftRecheck struct {
	Name  string
	Was   *spec.ScanDriftRecord // as stored; nil: it could not be read (Err)
	Found spec.ScanResult       // the rerun's result, when Err is nil
	Got   spec.ScanDriftRecord  // as written back (RecheckedScanDrift)
	Err   error                 // reading or rerunning it failed
}

// RecheckScanDrifts reruns the scan of every open scan drift of d (rerun)
// and writes each back (RecheckedScanDrift, with the reason why gives the
// rerun's result): fixed when no row differed, else open. each sees, in
// order, every drift rerun and every one that could not be read or rerun;
// the error is a failure to list or to write back.
func RecheckScanDrifts(d *Dir, env spec.Env, rerun func(*spec.ScanDriftRecord) (spec.ScanResult, error), why func(spec.ScanResult) string, each func(DriftRecheck)) error {
	open := func(r *spec.ScanDriftRecord) bool { return r.Status.State == StateOpen }
	var found spec.ScanResult // the last rerun's result
	recorded := func(r *spec.ScanDriftRecord) (spec.ScanDriftRecord, error) {
		var err error
		if found, err = rerun(r); err != nil {
			return spec.ScanDriftRecord{}, err
		}
		return RecheckedScanDrift(*r, found, env, why(found)), nil
	}
	return recheck(d, scanDrifts, open, recorded, func(name string, was, got *spec.ScanDriftRecord, err error) {
		r := DriftRecheck{Name: name, Was: was, Err: err}
		if got != nil {
			r.Found, r.Got = found, *got
		}
		each(r)
	})
}

// recheck reruns, in name order, every record of kind k in folder d that
// open accepts, and writes back the record rerun gives. each sees every
// record rerun (was and got) and every one that could not be read (was
// nil) or rerun (got nil), with the error; recheck's own error is a
// failure to list or to write back.
func recheck[T any](d *Dir, k scanRecord[T], open func(*T) bool, rerun func(*T) (T, error), each func(name string, was, got *T, err error)) error {
	names, err := listNamed(d.path, k.isName)
	if err != nil {
		return err
	}
	for _, name := range names {
		was, err := k.get(d, name)
		if err != nil {
			each(name, nil, nil, err)
			continue
		}
		if !open(was) {
			continue
		}
		got, err := rerun(was)
		if err != nil {
			each(name, was, nil, err)
			continue
		}
		if _, err := k.put(d, &got); err != nil {
			return fmt.Errorf("recheck %s: %w", name, err)
		}
		each(name, was, &got, nil)
	}
	return nil
}
