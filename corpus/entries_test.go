package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// junkEntries are what may already lie under a file's name in a folder:
// each func puts one at path (good is a valid file of another name, with
// its path).
var junkEntries = []struct {
	name string
	make func(t *testing.T, path string, good []byte)
}{
	{"truncated file", func(t *testing.T, path string, good []byte) { write(t, path, good[:len(good)/2]) }},
	{"sparse file", func(t *testing.T, path string, good []byte) {
		write(t, path, nil)
		if err := os.Truncate(path, 1<<20); err != nil {
			t.Fatal(err)
		}
	}},
	{"empty file", func(t *testing.T, path string, good []byte) { write(t, path, nil) }},
	{"file of another name", func(t *testing.T, path string, good []byte) { write(t, path, good) }},
	{"symlink to a file outside", func(t *testing.T, path string, good []byte) {
		out := filepath.Join(t.TempDir(), "outside.json")
		write(t, out, good)
		symlink(t, out, path)
	}},
	{"dangling symlink", func(t *testing.T, path string, good []byte) {
		symlink(t, filepath.Join(t.TempDir(), "gone.json"), path)
	}},
	{"symlink to /dev/zero", func(t *testing.T, path string, good []byte) { symlink(t, "/dev/zero", path) }},
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, to, path string) {
	t.Helper()
	if err := os.Symlink(to, path); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

// TestPutReplacesJunk: an entry already under a case's name counts as
// stored only when it is that case file; any other entry is replaced (Put
// says added) and the case reads back, and a folder under the name fails
// the Put instead of passing for the case.
func TestPutReplacesJunk(t *testing.T) {
	f := NewFile(seedCase(1), sampleFinding(seedCase(1)), spec.Env{Bitparity: "t"}, "test")
	good, err := Encode(NewFile(seedCase(2), nil, spec.Env{}, ""))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := f.Name()
	for _, junk := range junkEntries {
		t.Run(junk.name, func(t *testing.T) {
			d := mustDir(t)
			junk.make(t, d.PathOf(name), good)
			got, added, err := d.Put(f)
			if err != nil || !added || got != name {
				t.Fatalf("Put over a %s: %q added=%v %v; want it replaced", junk.name, got, added, err)
			}
			if st, err := os.Lstat(d.PathOf(name)); err != nil || !st.Mode().IsRegular() {
				t.Fatalf("after Put the entry is %v (%v), want a regular file", st.Mode(), err)
			}
			if g, err := d.Get(name); err != nil || g.Finding == nil || g.Signature != f.Signature {
				t.Fatalf("after Put: %v %+v", err, g)
			}
		})
	}
	t.Run("folder", func(t *testing.T) {
		d := mustDir(t)
		if err := os.Mkdir(d.PathOf(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, added, err := d.Put(f); err == nil || added || !strings.Contains(err.Error(), "folder") {
			t.Fatalf("Put over a folder: added=%v %v, want an error naming the folder", added, err)
		}
	})
	t.Run("bucket", func(t *testing.T) {
		k := memBucket(t)
		putRaw(t, k.b, name, good[:len(good)/2])
		if got, added, err := k.Put(f); err != nil || !added || got != name {
			t.Fatalf("Put over a truncated object: %q added=%v %v", got, added, err)
		}
		if g, err := k.Get(name); err != nil || g.Finding == nil {
			t.Fatalf("after Put: %v %+v", err, g)
		}
	})
}

// TestPutCertificateReplacesJunk: a certificate is written over whatever
// lies under its name, and a folder there is an error.
func TestPutCertificateReplacesJunk(t *testing.T) {
	c := testCert()
	name, _ := CertName(c)
	good, _ := EncodeCertificate(c)
	for _, junk := range junkEntries {
		t.Run(junk.name, func(t *testing.T) {
			d := mustDir(t)
			junk.make(t, d.PathOf(name), good)
			if _, err := d.PutCertificate(c); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Lstat(d.PathOf(name)); err != nil || !st.Mode().IsRegular() {
				t.Fatalf("after PutCertificate the entry is %v (%v), want a regular file", st.Mode(), err)
			}
			if _, err := d.GetCertificate(name); err != nil {
				t.Fatal(err)
			}
		})
	}
	d := mustDir(t)
	os.Mkdir(d.PathOf(name), 0o755)
	if _, err := d.PutCertificate(c); err == nil {
		t.Errorf("PutCertificate over a folder succeeded")
	}
}

// TestSymlinkedEntries: a link under a case's, a certificate's or a scan
// drift's name is listed and followed when it resolves inside the folder,
// and refused with an error naming it otherwise (never skipped in
// silence); a folder under a case's name is listed and refused.
func TestSymlinkedEntries(t *testing.T) {
	d := mustDir(t)
	f := NewFile(seedCase(1), sampleFinding(seedCase(1)), spec.Env{}, "test")
	name, _ := f.Name()
	data, _ := Encode(f)
	if err := os.Mkdir(filepath.Join(d.Path(), "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Path(), "keep", name), data)
	symlink(t, filepath.Join("keep", name), d.PathOf(name))

	outside := NewFile(seedCase(2), nil, spec.Env{}, "")
	outName, _ := outside.Name()
	odata, _ := Encode(outside)
	out := filepath.Join(t.TempDir(), outName)
	write(t, out, odata)
	symlink(t, out, d.PathOf(outName))

	dirName, _ := NewFile(seedCase(3), nil, spec.Env{}, "").Name()
	os.Mkdir(d.PathOf(dirName), 0o755)

	names, err := d.List()
	if err != nil || len(names) != 3 {
		t.Fatalf("List = %v %v, want the link inside, the link outside and the folder", names, err)
	}
	entries, errs := Load(d)
	if len(entries) != 1 || entries[0].Name != name {
		t.Errorf("Load read %v, want only the link inside the folder", entries)
	}
	var saw []string
	for _, err := range errs {
		saw = append(saw, err.Error())
	}
	all := strings.Join(saw, "\n")
	if len(errs) != 2 || !strings.Contains(all, "outside the corpus folder") || !strings.Contains(all, dirName+": not a regular file") {
		t.Errorf("Load errors:\n%s\nwant the outside link and the folder, each named", all)
	}
	if _, err := d.Get(outName); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a link outside the folder: %v, want a refusal", err)
	}

	// certificates and scan drifts: the same rule
	c := testCert()
	cname, _ := CertName(c)
	cdata, _ := EncodeCertificate(c)
	s := rmsnormScan("drift-rmsnorm-te-mod32", 40)
	dname, _ := ScanDriftName(s)
	ddata, _ := EncodeScanDrift(NewScanDrift(spec.ScanResult{Scan: s, Verdict: spec.ScanDrift}, spec.Env{}))
	for _, k := range []struct {
		what, name string
		data       []byte
		list       func() ([]string, error)
		get        func(name string) error
	}{
		{"certificate", cname, cdata, d.Certificates, func(n string) error { _, err := d.GetCertificate(n); return err }},
		{"scan drift", dname, ddata, d.ScanDrifts, func(n string) error { _, err := d.GetScanDrift(n); return err }},
	} {
		write(t, filepath.Join(d.Path(), "keep", k.name), k.data)
		symlink(t, filepath.Join("keep", k.name), d.PathOf(k.name))
		if names, err := k.list(); err != nil || len(names) != 1 {
			t.Fatalf("%s list = %v %v, want the linked one", k.what, names, err)
		}
		if err := k.get(k.name); err != nil {
			t.Errorf("get of a %s linked inside the folder: %v", k.what, err)
		}
		os.Remove(d.PathOf(k.name))
		symlink(t, filepath.Join(t.TempDir(), "x"), d.PathOf(k.name))
		if err := k.get(k.name); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("get of a dangling %s link: %v, want a refusal", k.what, err)
		}
	}
}
