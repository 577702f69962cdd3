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
	names, err := d.Certificates()
	if err != nil {
		return err
	}
	for _, name := range names {
		c, err := d.GetCertificate(name)
		if err != nil {
			each(CertRecheck{Name: name, Err: err})
			continue
		}
		if c.Status.State == spec.CertInvalid {
			continue
		}
		got, err := rerun(c)
		if err != nil {
			each(CertRecheck{Name: name, Was: c, Err: err})
			continue
		}
		if _, err := d.PutCertificate(&got); err != nil {
			return fmt.Errorf("recheck %s: %w", name, err)
		}
		each(CertRecheck{Name: name, Was: c, Got: got})
	}
	return nil
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
	names, err := d.ScanDrifts()
	if err != nil {
		return err
	}
	for _, name := range names {
		r, err := d.GetScanDrift(name)
		if err != nil {
			each(DriftRecheck{Name: name, Err: err})
			continue
		}
		if r.Status.State != StateOpen {
			continue
		}
		found, err := rerun(r)
		if err != nil {
			each(DriftRecheck{Name: name, Was: r, Err: err})
			continue
		}
		got := RecheckedScanDrift(*r, found, env, why(found))
		if _, err := d.PutScanDrift(&got); err != nil {
			return fmt.Errorf("recheck %s: %w", name, err)
		}
		each(DriftRecheck{Name: name, Was: r, Found: found, Got: got})
	}
	return nil
}
