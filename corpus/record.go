package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// A scan's records (certificates, scan drifts) are JSON files beside the
// case files of a folder store, read and written alike.

// encodeRecord is v as indented JSON and a newline; what names v in the
// error.
func encodeRecord(what string, v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return append(b, '\n'), nil
}

// decodeRecord decodes data, the content of a what file (name for
// errors), into a T: at most spec.MaxFileBytes, no unknown field.
func decodeRecord[T any](name, what string, data []byte) (*T, error) {
	if len(data) > spec.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, a %s may have at most %d", name, len(data), what, spec.MaxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: not a %s: %w", name, what, jsonErr(err))
	}
	return &v, nil
}

// checkScanRecord checks what a what record read from name says first:
// format and version equal to wantFormat and wantVersion, and scan s a
// target and a range (From <= To).
func checkScanRecord(name, what, format string, version int, s spec.ScanSpec, wantFormat string, wantVersion int) error {
	if format != wantFormat || version != wantVersion {
		return fmt.Errorf("%s: format %q version %d, want %q version %d", name, truncate(format), version, wantFormat, wantVersion)
	}
	if s.Target == "" || s.To < s.From {
		return fmt.Errorf("%s: %s without a scan (target %q, range %d..%d)", name, what, truncate(s.Target), s.From, s.To)
	}
	return nil
}

// scanRecord is how one kind of a scan's records (certificates, scan
// drifts) is named, encoded and decoded in a folder store.
type scanRecord[T any] struct {
	what   string // "certificate", in errors
	prefix string // of its file names: "cert-"
	isName func(base string) bool
	nameOf func(*T) (string, error)
	encode func(*T) ([]byte, error)
	decode func(name string, data []byte) (*T, error)
}

var (
	certificates = scanRecord[spec.Certificate]{"certificate", "cert-", IsCertName, CertName, EncodeCertificate, DecodeCertificate}
	scanDrifts   = scanRecord[spec.ScanDriftRecord]{"scan drift", "drift-", IsScanDriftName,
		func(r *spec.ScanDriftRecord) (string, error) { return ScanDriftName(r.Scan) }, EncodeScanDrift, DecodeScanDrift}
)

// put writes v to folder d under its name, replacing atomically whatever
// is there.
func (k scanRecord[T]) put(d *Dir, v *T) (string, error) {
	name, err := k.nameOf(v)
	if err != nil {
		return "", err
	}
	data, err := k.encode(v)
	if err != nil {
		return "", err
	}
	return name, atomicfile.Write(filepath.Join(d.path, name), data)
}

// get reads the record stored under name in folder d (Dir.readEntry) and
// checks that its scan hashes to name.
func (k scanRecord[T]) get(d *Dir, name string) (*T, error) {
	if !k.isName(name) {
		return nil, fmt.Errorf("%q is not a %s file name (%s, 16 lowercase hex digits, .json)", truncate(name), k.what, k.prefix)
	}
	_, data, err := d.readEntry(name)
	if err != nil {
		return nil, err
	}
	v, err := k.decode(d.PathOf(name), data)
	if err != nil {
		return nil, err
	}
	if got, _ := k.nameOf(v); got != name {
		return nil, fmt.Errorf("%s: its scan hashes to %s: the file was renamed or its scan edited", d.PathOf(name), got)
	}
	return v, nil
}
