package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// A bundle is a tar.gz that carries case files to another machine:
//
//	MANIFEST.json        first member: format, version, and for every case
//	                     file its member name, size and sha256
//	cases/<hash>.json    one member per case file, as Encode writes it
const (
	BundleFormat  = "bitparity-bundle"
	BundleVersion = 1
	ManifestName  = "MANIFEST.json"
	casesDir      = "cases/"
)

// Manifest is the first member of a bundle.
type Manifest struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Created time.Time       `json:"created"`
	Files   []ManifestEntry `json:"files"`
}

// ManifestEntry describes one member.
type ManifestEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// WriteBundle writes entries as a bundle to w: the manifest, then each case
// file re-encoded canonically (Encode) under cases/<name>. Members are
// regular files with mode 0644 and the manifest's creation time.
func WriteBundle(w io.Writer, entries []Entry) (*Manifest, error) {
	if len(entries) > spec.MaxBundleFiles {
		return nil, fmt.Errorf("bundle: %d cases, the limit is %d", len(entries), spec.MaxBundleFiles)
	}
	m := &Manifest{Format: BundleFormat, Version: BundleVersion, Created: time.Now().UTC().Truncate(time.Second)}
	datas := make([][]byte, len(entries))
	seen := map[string]bool{}
	for i, e := range entries {
		data, err := Encode(e.File)
		if err != nil {
			return nil, fmt.Errorf("bundle: %s: %w", e.Name, err)
		}
		name, err := e.File.Name()
		if err != nil {
			return nil, fmt.Errorf("bundle: %s: %w", e.Name, err)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		sum := sha256.Sum256(data)
		datas[i] = data
		m.Files = append(m.Files, ManifestEntry{Name: casesDir + name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
	}
	mdata, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bundle manifest: %w", err)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(name string, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: m.Created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("bundle: %s: %w", name, err)
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add(ManifestName, append(mdata, '\n')); err != nil {
		return nil, err
	}
	k := 0
	for _, data := range datas {
		if data == nil {
			continue
		}
		if err := add(m.Files[k].Name, data); err != nil {
			return nil, err
		}
		k++
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return m, nil
}

// BadMember is a member of a bundle that was refused, with why.
type BadMember struct {
	Name string
	Err  error
}

func (b BadMember) Error() string {
	if msg := b.Err.Error(); strings.HasPrefix(msg, b.Name+": ") {
		return msg // Decode's errors already start with the name
	}
	return b.Name + ": " + b.Err.Error()
}

// UnbundleReport says what Unbundle did with each member.
type UnbundleReport struct {
	Added    []string    // case names newly stored
	Existing []string    // case names the store already held (left as they were)
	Bad      []BadMember // refused members, each with its reason
	// Reopened are the added cases the bundle said were fixed: stored
	// open, like every imported case, until a recheck here says fixed.
	Reopened []string
}

// countingReader counts bytes read and fails once more than limit were.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
}

var errBundleTooLarge = fmt.Errorf("bundle decompresses to more than %d bytes", spec.MaxBundleBytes)

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n > c.limit {
		return 0, errBundleTooLarge
	}
	if rem := c.limit + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.limit {
		return n, errBundleTooLarge
	}
	return n, err
}

// memberName checks a member name: relative, clean, no "..", no
// backslashes, exactly cases/<hash>.json.
func memberName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("empty name")
	case strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':'):
		return "", errors.New("absolute path refused")
	case strings.Contains(name, "\\"):
		return "", errors.New("backslash in name refused")
	case slicesContains(strings.Split(name, "/"), ".."):
		return "", errors.New("path traversal (..) refused")
	case path.Clean(name) != name:
		return "", errors.New("name is not clean")
	}
	dir, base := path.Split(name)
	if dir != casesDir || !IsName(base) {
		return "", fmt.Errorf("unexpected member (want %s<16 hex>.json)", casesDir)
	}
	return base, nil
}

func slicesContains(xs []string, x string) bool { return contains(xs, x) }

// Unbundle reads a bundle from r and Puts every valid case file into dst.
// It refuses, member by member, and reports in the returned report: links,
// devices and anything but regular files; absolute names, "..", and names
// other than cases/<hash>.json; members over spec.MaxFileBytes (skipped unread);
// members missing from the manifest or whose size or sha256 differ from it;
// duplicates; files that fail Decode (format, version, schema, shape
// limits, a signature that is not the one its finding hashes to); files
// whose case does not hash to their name. Everything else is stored open
// and marked imported (Status.Imported), whatever status the bundle gave
// it: another corpus's status is a claim, which a recheck here replaces; a
// case dst already holds is left as it was (Put never overwrites). The error is non-nil only when the bundle as a whole cannot
// be read: not gzip, no valid manifest first, more than spec.MaxBundleBytes
// decompressed; members stored before such an error stay stored and are in
// the report.
func Unbundle(r io.Reader, dst Store) (*UnbundleReport, error) {
	rep := &UnbundleReport{}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return rep, fmt.Errorf("bundle: not a gzip stream: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(&countingReader{r: gz, limit: spec.MaxBundleBytes})
	hdr, err := tr.Next()
	if err != nil {
		return rep, fmt.Errorf("bundle: not a tar archive: %w", err)
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg {
		return rep, fmt.Errorf("bundle: first member is %q, want the regular file %s", truncate(hdr.Name), ManifestName)
	}
	if hdr.Size > spec.MaxManifestBytes {
		return rep, fmt.Errorf("bundle: %s has %d bytes, the limit is %d", ManifestName, hdr.Size, spec.MaxManifestBytes)
	}
	mdata, err := io.ReadAll(io.LimitReader(tr, spec.MaxManifestBytes+1))
	if err != nil {
		return rep, fmt.Errorf("bundle: %s: %w", ManifestName, err)
	}
	var m Manifest
	if err := json.Unmarshal(mdata, &m); err != nil {
		return rep, fmt.Errorf("bundle: %s: %w", ManifestName, jsonErr(err))
	}
	if err := checkHead("bundle: "+ManifestName, m.Format, m.Version, BundleFormat, BundleVersion); err != nil {
		return rep, err
	}
	if len(m.Files) > spec.MaxBundleFiles {
		return rep, fmt.Errorf("bundle: %s lists %d files, the limit is %d", ManifestName, len(m.Files), spec.MaxBundleFiles)
	}
	want := make(map[string]ManifestEntry, len(m.Files))
	for _, e := range m.Files {
		want[e.Name] = e
	}
	done := map[string]bool{}
	bad := func(name string, err error) { rep.Bad = append(rep.Bad, BadMember{Name: truncate(name), Err: err}) }
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("bundle: after %d members: %w", len(done)+len(rep.Bad), err)
		}
		name := hdr.Name
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			if strings.TrimSuffix(name, "/")+"/" == casesDir {
				continue
			}
			bad(name, errors.New("directory refused"))
			continue
		case tar.TypeSymlink:
			bad(name, fmt.Errorf("symlink (to %q) refused", truncate(hdr.Linkname)))
			continue
		case tar.TypeLink:
			bad(name, fmt.Errorf("hard link (to %q) refused", truncate(hdr.Linkname)))
			continue
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			bad(name, errors.New("device or fifo refused"))
			continue
		default:
			bad(name, fmt.Errorf("member type %q refused", hdr.Typeflag))
			continue
		}
		if done[name] {
			bad(name, errors.New("duplicate member"))
			continue
		}
		done[name] = true
		base, err := memberName(name)
		if err != nil {
			bad(name, err)
			continue
		}
		me, ok := want[name]
		if !ok {
			bad(name, errors.New("not listed in the manifest"))
			continue
		}
		if hdr.Size > spec.MaxFileBytes {
			bad(name, fmt.Errorf("%d bytes, a case file may have at most %d (skipped unread)", hdr.Size, spec.MaxFileBytes))
			continue
		}
		if hdr.Size != me.Size {
			bad(name, fmt.Errorf("size %d, the manifest says %d", hdr.Size, me.Size))
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, spec.MaxFileBytes+1))
		if err != nil {
			return rep, fmt.Errorf("bundle: %s: %w", name, err)
		}
		if int64(len(data)) != me.Size {
			bad(name, fmt.Errorf("read %d bytes, the manifest says %d", len(data), me.Size))
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != me.SHA256 {
			bad(name, fmt.Errorf("sha256 %s, the manifest says %s", got, truncate(me.SHA256)))
			continue
		}
		f, err := Decode(name, data)
		if err != nil {
			bad(name, err)
			continue
		}
		if h, _ := f.Name(); h != base {
			bad(name, fmt.Errorf("case hashes to %s, not to its name", h))
			continue
		}
		claimed := f.Status.State
		f.Status = Status{State: StateOpen, Imported: true} // their status is their claim: open until a recheck here
		stored, added, err := dst.Put(f)
		if err != nil {
			bad(name, fmt.Errorf("store: %w", err))
			continue
		}
		if added {
			rep.Added = append(rep.Added, stored)
			if claimed == StateFixed {
				rep.Reopened = append(rep.Reopened, stored)
			}
		} else {
			rep.Existing = append(rep.Existing, stored)
		}
	}
	for _, e := range m.Files {
		if !done[e.Name] {
			bad(e.Name, errors.New("listed in the manifest, missing from the bundle"))
		}
	}
	return rep, nil
}

// bundleBytes is WriteBundle into memory (tests and callers that need the
// size).
func bundleBytes(entries []Entry) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := WriteBundle(&buf, entries); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
