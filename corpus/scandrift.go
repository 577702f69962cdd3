package corpus

import (
	"fmt"
	"regexp"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// A drift a scan found lives beside the certificates of a folder store,
// one file per scan: "drift-" + CertHash(scan) + ".json" (a certificate
// of the same scan is "cert-" + the same hash). Case readers ignore it
// (IsName is false); a new drift of the same scan replaces the old.

var driftRE = regexp.MustCompile(`^drift-[0-9a-f]{16}\.json$`)

// IsScanDriftName reports whether base is the name of a scan drift file.
func IsScanDriftName(base string) bool { return driftRE.MatchString(base) }

// ScanDriftName returns the file name of the drift of scan s.
func ScanDriftName(s spec.ScanSpec) (string, error) { return scanDrifts.nameOf(s) }

// NewScanDrift is the record of drift found, a scan's result, made in env
// now: open, never rechecked.
func NewScanDrift(found spec.ScanResult, env spec.Env) *spec.ScanDriftRecord {
	return &spec.ScanDriftRecord{Scan: found.Scan, Found: found, Env: env,
		Created: time.Now().UTC().Truncate(time.Second), Status: spec.ScanDriftStatus{State: StateOpen}}
}

// EncodeScanDrift writes d as indented JSON with its format and version
// set.
func EncodeScanDrift(d *spec.ScanDriftRecord) ([]byte, error) { return scanDrifts.encode(d) }

// DecodeScanDrift reads a scan drift file's content; name is for errors.
// It refuses another format or version, unknown fields, files over
// spec.MaxFileBytes, a record without a scan, a state other than open or
// fixed, and a found result of another scan.
func DecodeScanDrift(name string, data []byte) (*spec.ScanDriftRecord, error) {
	return scanDrifts.decode(name, data)
}

// checkScanDrift refuses a scan drift d (read from name) whose state is
// other than open or fixed, or whose found result is of another scan.
func checkScanDrift(name string, d *spec.ScanDriftRecord) error {
	if d.Status.State != StateOpen && d.Status.State != StateFixed {
		return fmt.Errorf("%s: status %q, want %s or %s", name, truncate(d.Status.State), StateOpen, StateFixed)
	}
	a, _ := CertHash(d.Scan)
	if b, _ := CertHash(d.Found.Scan); a != b {
		return fmt.Errorf("%s: its found result is of another scan (%s, not %s)", name, truncate(d.Found.Scan.Target), truncate(d.Scan.Target))
	}
	return nil
}

// PutScanDrift writes d to the folder under ScanDriftName, replacing an
// earlier drift of the same scan, atomically.
func (d *Dir) PutScanDrift(r *spec.ScanDriftRecord) (string, error) {
	return scanDrifts.put(d, r)
}

// GetScanDrift reads the scan drift stored under name and checks that its
// scan hashes to name.
func (d *Dir) GetScanDrift(name string) (*spec.ScanDriftRecord, error) {
	return scanDrifts.get(d, name)
}

// ScanDrifts lists the names of the folder's entries named like scan
// drift files, sorted, whatever their type (as Certificates).
func (d *Dir) ScanDrifts() ([]string, error) {
	return listNamed(d.path, IsScanDriftName)
}

// RecheckedScanDrift returns d after a rerun of its scan here in env
// gave got: fixed (FixedAt, FixedEnv now) when got compared every row
// equal (certified or agree), else open; Checked now and Last the rerun's
// verdict in words either way.
func RecheckedScanDrift(d spec.ScanDriftRecord, got spec.ScanResult, env spec.Env, last string) spec.ScanDriftRecord {
	now := time.Now().UTC().Truncate(time.Second)
	d.Status.Checked, d.Status.Last = now, last
	if got.Verdict == spec.ScanCertified || got.Verdict == spec.ScanAgree {
		d.Status.State, d.Status.FixedAt, d.Status.FixedEnv = StateFixed, now, &env
		return d
	}
	d.Status.State, d.Status.FixedAt, d.Status.FixedEnv = StateOpen, time.Time{}, nil
	return d
}

// ScanStored says what StoreScan kept of one scan in a corpus folder, by
// file name; each is empty when not done.
type ScanStored struct {
	Certificate string // the scan certified: its certificate
	Fixed       string // an open drift of the same scan, now marked fixed
	Drift       string // the scan drifted or faulted: its scan drift file
}

// StoreScan keeps what scan r found in d. A certificate is put; then, as
// for a scan that agreed (spec.ScanAgree: no row differed, no
// certificate), an open scan drift stored for the same scan is marked
// fixed (RecheckedScanDrift, "rescanned: VERDICT"). A drift or a fault is
// put as a scan drift file, with the user kernel's manifest and the
// adapter it ran on (either may be nil), for Recheck to rerun.
func StoreScan(d *Dir, r spec.ScanResult, env spec.Env, kernel *spec.KernelManifest, adapter *spec.Adapter) (ScanStored, error) {
	var out ScanStored
	if r.Certificate == nil && r.Verdict != spec.ScanAgree {
		rec := NewScanDrift(r, env)
		rec.Kernel, rec.Adapter = kernel, adapter
		name, err := d.PutScanDrift(rec)
		if err != nil {
			return out, fmt.Errorf("store the drift: %w", err)
		}
		out.Drift = name
		return out, nil
	}
	if r.Certificate != nil {
		name, err := d.PutCertificate(r.Certificate)
		if err != nil {
			return out, fmt.Errorf("store the certificate: %w", err)
		}
		out.Certificate = name
	}
	name, err := ScanDriftName(r.Scan)
	if err != nil {
		return out, err
	}
	old, err := d.GetScanDrift(name)
	if err != nil || old.Status.State != StateOpen {
		return out, nil // none stored (or unreadable: corpus ls says so)
	}
	got := RecheckedScanDrift(*old, r, env, "rescanned: "+r.Verdict)
	if _, err := d.PutScanDrift(&got); err != nil {
		return out, fmt.Errorf("mark %s fixed: %w", name, err)
	}
	out.Fixed = name
	return out, nil
}
