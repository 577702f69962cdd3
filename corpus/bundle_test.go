package corpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// asImported is f as Unbundle stores it: open and marked imported,
// whatever status it had.
func asImported(f *File) *File {
	g := *f
	g.Status = Status{State: StateOpen, Imported: true}
	return &g
}

// TestBundleRoundTrip: every case comes through a bundle unchanged but for
// its status (open, imported).
func TestBundleRoundTrip(t *testing.T) {
	src := mustDir(t)
	for s := uint64(0); s < 20; s++ {
		c := seedCase(s)
		var fd *spec.Finding
		if s%2 == 0 {
			fd = sampleFinding(c)
		}
		if _, _, err := src.Put(NewFile(c, fd, spec.Env{GPU: "H200"}, "src")); err != nil {
			t.Fatal(err)
		}
	}
	src.Put(NewFile(explicitCase(spec.BF16), sampleFinding(explicitCase(spec.BF16)), spec.Env{}, "src"))
	entries, errs := Load(src)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	data, err := bundleBytes(entries)
	if err != nil {
		t.Fatal(err)
	}
	dst := mustDir(t)
	rep, err := Unbundle(bytes.NewReader(data), dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != len(entries) || len(rep.Bad) != 0 {
		t.Fatalf("added %d of %d, bad %v", len(rep.Added), len(entries), rep.Bad)
	}
	for _, e := range entries {
		a, _ := Encode(asImported(e.File))
		g, err := dst.Get(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Encode(g)
		if !bytes.Equal(a, b) {
			t.Errorf("%s changed on the way", e.Name)
		}
	}
	// unbundling again adds nothing and harms nothing
	rep, err = Unbundle(bytes.NewReader(data), dst)
	if err != nil || len(rep.Added) != 0 || len(rep.Existing) != len(entries) {
		t.Errorf("second unbundle: %v, added %d existing %d", err, len(rep.Added), len(rep.Existing))
	}
}

// member is one tar member of a hand-made bundle.
type member struct {
	hdr  tar.Header
	data []byte
}

func reg(name string, data []byte) member {
	return member{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}, data: data}
}

// makeBundle writes members as a tar.gz; when manifest is nil, one is made
// listing every regular member with its true size and sha256.
func makeBundle(t *testing.T, manifest *Manifest, members ...member) []byte {
	t.Helper()
	if manifest == nil {
		manifest = &Manifest{Format: BundleFormat, Version: BundleVersion}
		for _, m := range members {
			if m.hdr.Typeflag == tar.TypeReg {
				sum := sha256.Sum256(m.data)
				manifest.Files = append(manifest.Files, ManifestEntry{Name: m.hdr.Name, Size: int64(len(m.data)), SHA256: hex.EncodeToString(sum[:])})
			}
		}
	}
	mdata, _ := json.Marshal(manifest)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	all := append([]member{reg(ManifestName, mdata)}, members...)
	for _, m := range all {
		h := m.hdr
		h.ModTime = time.Unix(0, 0)
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if len(m.data) > 0 {
			if _, err := tw.Write(m.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func encoded(t *testing.T, f *File) (string, []byte) {
	t.Helper()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := f.Name()
	return n, b
}

func TestUnbundleHostile(t *testing.T) {
	goodName, good := encoded(t, NewFile(seedCase(100), nil, spec.Env{}, ""))
	otherName, other := encoded(t, NewFile(seedCase(101), nil, spec.Env{}, ""))
	// a file that decodes but whose case is hostile
	hostile := func(edit func(m map[string]any)) []byte {
		m := encodeRaw(t, NewFile(seedCase(102), nil, spec.Env{}, ""))
		edit(m)
		b, _ := json.Marshal(m)
		return b
	}
	bigShape := hostile(func(m map[string]any) {
		m["case"].(map[string]any)["shape"] = map[string]any{"rows": 1 << 30, "hidden": 1 << 30}
	})
	v2 := hostile(func(m map[string]any) { m["version"] = 2 })
	huge := bytes.Repeat([]byte(" "), spec.MaxFileBytes+10)

	for _, tc := range []struct {
		name    string
		members []member
		badWant []string // substrings, one per expected bad member
	}{
		{"traversal", []member{reg("cases/../../evil/"+goodName, good), reg("cases/"+goodName, good)}, []string{"path traversal"}},
		{"absolute", []member{reg("/tmp/"+goodName, good), reg("cases/"+goodName, good)}, []string{"absolute"}},
		{"symlink", []member{{hdr: tar.Header{Name: "cases/" + otherName, Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, reg("cases/"+goodName, good)}, []string{"symlink"}},
		{"hardlink", []member{{hdr: tar.Header{Name: "cases/" + otherName, Typeflag: tar.TypeLink, Linkname: "cases/" + goodName}}, reg("cases/"+goodName, good)}, []string{"hard link"}},
		{"device", []member{{hdr: tar.Header{Name: "cases/" + otherName, Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}, reg("cases/"+goodName, good)}, []string{"device"}},
		{"huge member", []member{reg("cases/"+otherName, huge), reg("cases/"+goodName, good)}, []string{"skipped unread"}},
		{"wrong version", []member{reg("cases/"+otherName, v2), reg("cases/"+goodName, good)}, []string{"version: 2"}},
		{"hostile shape", []member{reg("cases/"+otherName, bigShape), reg("cases/"+goodName, good)}, []string{"case.shape"}},
		{"name mismatch", []member{reg("cases/"+otherName, good), reg("cases/"+goodName, good)}, []string{"not to its name"}},
		{"other name", []member{reg("cases/README", good), reg("cases/"+goodName, good)}, []string{"unexpected member"}},
		{"duplicate", []member{reg("cases/"+goodName, good), reg("cases/"+goodName, good)}, []string{"duplicate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := mustDir(t)
			// something already stored must survive untouched
			pre, _, _ := dst.Put(NewFile(seedCase(999), nil, spec.Env{}, "pre"))
			before := snapshot(t, dst.Path())
			rep, err := Unbundle(bytes.NewReader(makeBundle(t, nil, tc.members...)), dst)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Bad) != len(tc.badWant) {
				t.Fatalf("bad members %v, want %d", rep.Bad, len(tc.badWant))
			}
			for i, w := range tc.badWant {
				if !strings.Contains(rep.Bad[i].Error(), w) {
					t.Errorf("bad[%d] = %q, want it to say %q", i, rep.Bad[i], w)
				}
			}
			if len(rep.Added) != 1 || rep.Added[0] != goodName {
				t.Errorf("added %v, want only the good case %s", rep.Added, goodName)
			}
			names, _ := dst.List()
			if len(names) != 2 {
				t.Errorf("store holds %v, want the pre-existing and the good case", names)
			}
			if _, err := dst.Get(pre); err != nil {
				t.Errorf("pre-existing case harmed: %v", err)
			}
			if err := dst.Delete(goodName); err != nil {
				t.Fatal(err)
			}
			if snapshot(t, dst.Path()) != before {
				t.Errorf("the folder changed beyond the one added case")
			}
		})
	}

	t.Run("bad checksum", func(t *testing.T) {
		m := &Manifest{Format: BundleFormat, Version: BundleVersion, Files: []ManifestEntry{
			{Name: "cases/" + goodName, Size: int64(len(good)), SHA256: strings.Repeat("0", 64)},
			{Name: "cases/" + otherName, Size: int64(len(other)), SHA256: sha(other)},
		}}
		dst := mustDir(t)
		rep, err := Unbundle(bytes.NewReader(makeBundle(t, m, reg("cases/"+goodName, good), reg("cases/"+otherName, other))), dst)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Bad) != 1 || !strings.Contains(rep.Bad[0].Error(), "sha256") || len(rep.Added) != 1 {
			t.Errorf("report %+v, want the checksum refused and the other added", rep)
		}
	})
	t.Run("size differs from manifest", func(t *testing.T) {
		m := &Manifest{Format: BundleFormat, Version: BundleVersion, Files: []ManifestEntry{
			{Name: "cases/" + goodName, Size: 3, SHA256: sha(good)},
			{Name: "cases/" + otherName, Size: int64(len(other)), SHA256: sha(other)},
			{Name: "cases/0123456789abcdef.json", Size: 3, SHA256: sha(other)},
		}}
		rep, err := Unbundle(bytes.NewReader(makeBundle(t, m, reg("cases/"+goodName, good), reg("cases/"+otherName, other))), mustDir(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Bad) != 2 || !strings.Contains(rep.Bad[0].Error(), "manifest says 3") || !strings.Contains(rep.Bad[1].Error(), "missing from the bundle") {
			t.Errorf("bad %v, want the size and the missing member", rep.Bad)
		}
	})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte("hello"), "not a gzip"},
		{"wrong bundle version", makeBundle(t, &Manifest{Format: BundleFormat, Version: 7}), "version: 7"},
		{"wrong bundle format", makeBundle(t, &Manifest{Format: "zip", Version: 1}), "format"},
		{"no manifest first", func() []byte {
			var buf bytes.Buffer
			gz := gzip.NewWriter(&buf)
			tw := tar.NewWriter(gz)
			tw.WriteHeader(&tar.Header{Name: "cases/" + goodName, Typeflag: tar.TypeReg, Size: int64(len(good)), Mode: 0o644})
			tw.Write(good)
			tw.Close()
			gz.Close()
			return buf.Bytes()
		}(), "first member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := mustDir(t)
			_, err := Unbundle(bytes.NewReader(tc.data), dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if names, _ := dst.List(); len(names) != 0 {
				t.Errorf("stored %v from a refused bundle", names)
			}
		})
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUnbundleGzipBomb: a member claiming 2 GiB of zeros (compressing to a
// few MB) stops at spec.MaxBundleBytes with an error, having read no more.
func TestUnbundleGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 1 GiB")
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	m, _ := json.Marshal(Manifest{Format: BundleFormat, Version: BundleVersion})
	tw.WriteHeader(&tar.Header{Name: ManifestName, Typeflag: tar.TypeReg, Size: int64(len(m)), Mode: 0o644})
	tw.Write(m)
	const size = spec.MaxBundleBytes + 1<<20
	tw.WriteHeader(&tar.Header{Name: "cases/0123456789abcdef.json", Typeflag: tar.TypeReg, Size: size, Mode: 0o644})
	zero := make([]byte, 1<<20)
	for n := 0; n < size; n += len(zero) {
		tw.Write(zero)
	}
	tw.Close()
	gz.Close()
	_, err := Unbundle(bytes.NewReader(buf.Bytes()), mustDir(t))
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a %d MB gzip of %d GiB: error %v, want the size limit", buf.Len()>>20, size>>30, err)
	}
}

// benchEntries are n entries of seedCase's cases, each with a finding.
func benchEntries(n int) []Entry {
	var entries []Entry
	for s := uint64(0); s < uint64(n); s++ {
		c := seedCase(s)
		f := NewFile(c, sampleFinding(c), spec.Env{GPU: "H200"}, "bench")
		name, _ := f.Name()
		entries = append(entries, Entry{Name: name, File: f})
	}
	return entries
}

func BenchmarkBundle1000(b *testing.B) {
	entries := benchEntries(1000)
	var size int
	for i := 0; i < b.N; i++ {
		data, err := bundleBytes(entries)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size), "bytes/bundle")
}

func BenchmarkUnbundle1000(b *testing.B) {
	entries := benchEntries(1000)
	data, err := bundleBytes(entries)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d, err := OpenDir(b.TempDir(), true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := Unbundle(bytes.NewReader(data), d)
		if err != nil || len(rep.Added) != 1000 {
			b.Fatalf("%v, %d added", err, len(rep.Added))
		}
	}
}
