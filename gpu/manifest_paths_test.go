//go:build unix

package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin loads the manifest at path, failing the test when it takes
// more than 5 s (a FIFO opened for reading blocks until a writer comes).
func loadWithin(t *testing.T, path string, opts ManifestOptions) (*Manifest, error) {
	t.Helper()
	type ret struct {
		m   *Manifest
		err error
	}
	done := make(chan ret, 1)
	go func() {
		m, err := LoadManifest(path, opts)
		done <- ret{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("LoadManifest(%s) hung", path)
		return nil, nil
	}
}

// TestManifestPaths: the files a manifest names are within its folder
// unless ManifestOptions.AnyPath (absolute paths, "..", symbolic links out
// are refused), regular files (a FIFO, a device, a folder are refused
// before they are opened: nothing hangs) and at most MaxImageBytes (a
// larger one is refused by its size, never read), each refused with the
// field named. The manifest itself is a regular file of at most
// MaxManifestBytes.
func TestManifestPaths(t *testing.T) {
	outside := t.TempDir()
	outPTX := filepath.Join(outside, "k.ptx")
	if err := os.WriteFile(outPTX, []byte(fakePTX("rmsnorm_rows", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	// setup makes a manifest folder holding k.ptx, a FIFO, a folder, a
	// sparse file one byte over the limit and a link to a file outside
	// it, inside folder sub/ of a parent that holds k.ptx too; it returns
	// the manifest's path with field set to value.
	setup := func(t *testing.T, field, value string) string {
		parent := t.TempDir()
		dir := filepath.Join(parent, "sub")
		if err := os.MkdirAll(filepath.Join(dir, "folder"), 0o755); err != nil {
			t.Fatal(err)
		}
		ptx := []byte(fakePTX("rmsnorm_rows", 8))
		for _, p := range []string{filepath.Join(parent, "k.ptx"), filepath.Join(dir, "k.ptx")} {
			if err := os.WriteFile(p, ptx, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		big, err := os.Create(filepath.Join(dir, "big.ptx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := big.Truncate(MaxImageBytes + 1); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		big.Close()
		if err := os.Symlink(outPTX, filepath.Join(dir, "link.ptx")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("k.ptx", filepath.Join(dir, "inlink.ptx")); err != nil {
			t.Fatal(err)
		}
		js := goodManifest
		if field == "ptx" {
			js = strings.Replace(js, `"ptx": "k.ptx"`, `"ptx": "`+value+`"`, 1)
		} else {
			js = strings.Replace(js, `"ptx": "k.ptx"`, `"ptx": "k.ptx", "`+field+`": "`+value+`"`, 1)
		}
		p := filepath.Join(dir, "m.json")
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, field, value string
		anyPath            bool
		want               string // "" loads
	}{
		{"in the folder", "ptx", "k.ptx", false, ""},
		{"dot-dot staying in", "ptx", "folder/../k.ptx", false, ""},
		{"link within", "ptx", "inlink.ptx", false, ""},
		{"dot-dot out", "ptx", "../k.ptx", false, "../k.ptx: outside the manifest's folder"},
		{"absolute", "ptx", outPTX, false, "outside the manifest's folder"},
		{"link out", "ptx", "link.ptx", false, "through a symbolic link"},
		{"dev zero", "ptx", "/dev/zero", false, "outside the manifest's folder"},
		{"FIFO", "ptx", "fifo", false, "not a regular file (a FIFO)"},
		{"folder", "ptx", "folder", false, "not a regular file (a folder)"},
		{"over the limit", "ptx", "big.ptx", false, "67108865 bytes, over the limit of 67108864"},
		{"cubin out", "cubin", "../k.ptx", false, "outside the manifest's folder"},
		{"fatbin out", "fatbin", "../k.ptx", false, "outside the manifest's folder"},
		{"fatbin FIFO", "fatbin", "fifo", false, "not a regular file (a FIFO)"},
		{"fatbin dev zero", "fatbin", "/dev/zero", true, "not a regular file (a character device)"},
		{"fatbin over the limit", "fatbin", "big.ptx", false, "over the limit"},
		{"any path: dot-dot out", "ptx", "../k.ptx", true, ""},
		{"any path: absolute", "ptx", outPTX, true, ""},
		{"any path: link out", "ptx", "link.ptx", true, ""},
		{"any path: dev zero", "ptx", "/dev/zero", true, "not a regular file (a character device)"},
		{"any path: FIFO", "ptx", "fifo", true, "not a regular file (a FIFO)"},
		{"any path: over the limit", "ptx", "big.ptx", true, "over the limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := setup(t, tt.field, tt.value)
			if tt.field == "cubin" {
				raw, _ := os.ReadFile(p)
				os.WriteFile(p, []byte(strings.Replace(string(raw), `"ptx": "k.ptx", `, "", 1)), 0o644)
			}
			m, err := loadWithin(t, p, ManifestOptions{AnyPath: tt.anyPath})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(m.Image) == 0 {
					t.Fatal("no image read")
				}
				return
			}
			var me *ManifestError
			if !errors.As(err, &me) || me.Field != tt.field {
				t.Fatalf("error %v, want a *ManifestError of field %q", err, tt.field)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `field "`+tt.field+`"`) {
				t.Errorf("error %q does not name field %q and say %q", err, tt.field, tt.want)
			}
			if strings.Contains(tt.want, "outside") && !strings.Contains(err.Error(), "--kernel-any-path") {
				t.Errorf("error %q does not name the flag that allows it", err)
			}
		})
	}
}

// TestManifestFileBounded: the manifest itself must be a regular file of
// at most MaxManifestBytes, checked before it is read: a FIFO does not
// hang, /dev/zero does not exhaust memory.
func TestManifestFileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxManifestBytes+1); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "not a regular file (a FIFO)",
		"/dev/zero": "not a regular file (a character device)",
		dir:         "not a regular file (a folder)",
		big:         "1048577 bytes, over the limit of 1048576",
	} {
		_, err := loadWithin(t, path, ManifestOptions{AnyPath: true})
		var me *ManifestError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "kernel manifest "+path) {
			t.Errorf("%s: error %v, want a *ManifestError naming it and saying %q", path, err, want)
		}
	}
}
