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

// scanRecord is one kind of a scan's records (certificates, scan
// drifts): what it is called, its file names (prefix + CertHash(scan) +
// ".json"), its format and version, where a T keeps them and its scan
// (head), and what else a T it reads must hold (check).
type scanRecord[T any] struct {
	what    string // "certificate", in errors
	prefix  string // "cert-"
	isName  func(base string) bool
	format  string
	version int
	head    func(*T) (format *string, version *int, scan *spec.ScanSpec)
	check   func(name string, v *T) error
}

var (
	certificates = scanRecord[spec.Certificate]{what: "certificate", prefix: "cert-", isName: IsCertName,
		format: spec.CertificateFormat, version: spec.CertificateVersion,
		head: func(c *spec.Certificate) (*string, *int, *spec.ScanSpec) { return &c.Format, &c.Version, &c.Scan },
		check: func(name string, c *spec.Certificate) error {
			if err := checkCertAdapter(c); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}}
	scanDrifts = scanRecord[spec.ScanDriftRecord]{what: "scan drift", prefix: "drift-", isName: IsScanDriftName,
		format: spec.ScanDriftFormat, version: spec.ScanDriftVersion,
		head:  func(d *spec.ScanDriftRecord) (*string, *int, *spec.ScanSpec) { return &d.Format, &d.Version, &d.Scan },
		check: checkScanDrift}
)

// nameOf is the file name of the record of scan s.
func (k scanRecord[T]) nameOf(s spec.ScanSpec) (string, error) {
	h, err := CertHash(s)
	if err != nil {
		return "", err
	}
	return k.prefix + h + ".json", nil
}

// encode writes v as indented JSON with its format and version set.
func (k scanRecord[T]) encode(v *T) ([]byte, error) {
	g := *v
	format, version, _ := k.head(&g)
	*format, *version = k.format, k.version
	return encodeRecord(k.what, &g)
}

// decode reads a record file's content; name is for errors. It refuses a
// file over spec.MaxFileBytes, unknown fields, another format or
// version, a record without a scan (a target and a range From <= To) and
// what check refuses.
func (k scanRecord[T]) decode(name string, data []byte) (*T, error) {
	v, err := decodeRecord[T](name, k.what, data)
	if err != nil {
		return nil, err
	}
	format, version, s := k.head(v)
	if *format != k.format || *version != k.version {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d", name, truncate(*format), *version, k.format, k.version)
	}
	if s.Target == "" || s.To < s.From {
		return nil, fmt.Errorf("%s: %s without a scan (target %q, range %d..%d)", name, k.what, truncate(s.Target), s.From, s.To)
	}
	if err := k.check(name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// put writes v to folder d under its name, replacing atomically whatever
// is there.
func (k scanRecord[T]) put(d *Dir, v *T) (string, error) {
	_, _, s := k.head(v)
	name, err := k.nameOf(*s)
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
	_, _, s := k.head(v)
	if got, _ := k.nameOf(*s); got != name {
		return nil, fmt.Errorf("%s: its scan hashes to %s: the file was renamed or its scan edited", d.PathOf(name), got)
	}
	return v, nil
}
