package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
)

// Certificates live beside the case files of a folder store, one file
// per scan: "cert-" + CertHash(scan) + ".json". Case readers ignore them
// (IsName is false); a new certificate of the same scan replaces the old.

var certRE = regexp.MustCompile(`^cert-[0-9a-f]{16}\.json$`)

// IsCertName reports whether base is the name of a certificate file.
func IsCertName(base string) bool { return certRE.MatchString(base) }

// CertHash is the first 16 hex digits of the sha256 of the JSON encoding
// of a scan spec (Go's encoding/json: fixed field order).
func CertHash(s spec.ScanSpec) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode scan: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// CertName returns the file name of certificate c.
func CertName(c *spec.Certificate) (string, error) { return certificates.nameOf(c.Scan) }

// EncodeCertificate writes c as indented JSON with its format and version
// set.
func EncodeCertificate(c *spec.Certificate) ([]byte, error) { return certificates.encode(c) }

// DecodeCertificate reads a certificate file's content; name is for
// errors. It refuses another format or version, unknown fields and files
// over spec.MaxFileBytes.
func DecodeCertificate(name string, data []byte) (*spec.Certificate, error) {
	return certificates.decode(name, data)
}

// PutCertificate writes c to the folder under CertName, replacing
// atomically whatever is there (an earlier certificate of the same scan, a
// truncated file, a link); nothing there is taken on trust. An entry that
// cannot be replaced (a folder) is an error.
func (d *Dir) PutCertificate(c *spec.Certificate) (string, error) {
	return certificates.put(d, c)
}

// GetCertificate reads the certificate stored under name and checks that
// its scan hashes to name; a symbolic link is followed within the folder
// only, as by Get.
func (d *Dir) GetCertificate(name string) (*spec.Certificate, error) {
	return certificates.get(d, name)
}

// Certificates lists the names of the folder's entries named like
// certificate files, sorted, whatever their type (as List: GetCertificate
// reports a link or a folder instead of it being skipped in silence).
func (d *Dir) Certificates() ([]string, error) {
	return listNamed(d.path, IsCertName)
}

// checkCertAdapter checks what a certificate records of an adapter: a
// certificate of an exec: target names what it proves about, the adapter
// and its hello (at least its name and op), which a recheck compares with
// the adapter given. Other targets served by a process (a kernel worker)
// may record theirs; a recorded adapter is the scan's target's.
func checkCertAdapter(c *spec.Certificate) error {
	if c.Adapter == nil && c.Hello == nil && !strings.HasPrefix(c.Scan.Target, "exec:") {
		return nil
	}
	switch {
	case c.Adapter == nil || c.Hello == nil:
		return fmt.Errorf("certificate of adapter %s without the adapter and its hello: it does not say what it proves about", truncate(c.Scan.Target))
	case c.Adapter.Target != c.Scan.Target:
		return fmt.Errorf("certificate of %s records adapter %s", truncate(c.Scan.Target), truncate(c.Adapter.Target))
	case c.Hello["name"] == "" || c.Hello["op"] != external.HelloOp(c.Scan.Op):
		return fmt.Errorf("certificate of %s: hello name %q op %q, want the adapter's name and op %s", truncate(c.Scan.Target),
			truncate(c.Hello["name"]), truncate(c.Hello["op"]), external.HelloOp(c.Scan.Op))
	}
	return nil
}
