package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedUserKernels: every example kernel under testdata/userkernels
// has a manifest that is valid against the ABI (loaded beside a stand-in
// PTX whose entry has the parameter count of the kernel's signature in the
// .cu source), and, once build.sh has run (userkernels.sha256 exists), PTX
// made from the sources in the tree; fat images, when present, are the ones
// userkernels.fatbin.sha256 lists with the sources in the tree.
func TestShippedUserKernels(t *testing.T) {
	dir := filepath.Join("testdata", "userkernels")
	cus, _ := filepath.Glob(filepath.Join(dir, "*.cu"))
	if len(cus) < 4 {
		t.Fatalf("%d example kernels, want 4", len(cus))
	}
	sums, err := os.ReadFile(filepath.Join(dir, "userkernels.sha256"))
	built := err == nil
	want := map[string]string{}
	for _, line := range strings.Split(string(sums), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			want[f[1]] = f[0]
		}
	}
	for _, cu := range cus {
		base := strings.TrimSuffix(filepath.Base(cu), ".cu")
		src, err := os.ReadFile(cu)
		if err != nil {
			t.Fatal(err)
		}
		// The kernel's parameter count from its signature.
		sig := string(src)
		i := strings.Index(sig, "__global__ void rmsnorm_rows(")
		if i < 0 {
			t.Fatalf("%s: no rmsnorm_rows kernel", cu)
		}
		sig = sig[i:]
		sig = sig[:strings.IndexByte(sig, ')')]
		nparams := strings.Count(sig, ",") + 1
		js, err := os.ReadFile(filepath.Join(dir, base+".json"))
		if err != nil {
			t.Fatal(err)
		}
		tmp := t.TempDir()
		os.WriteFile(filepath.Join(tmp, base+".ptx"), []byte(fakePTX("rmsnorm_rows", nparams)), 0o644)
		m, err := ParseManifest(filepath.Join(tmp, base+".json"), js, ManifestOptions{})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if m.Entry != "rmsnorm_rows" || len(m.Params) != 8 {
			t.Errorf("%s: entry %s, %d params", base, m.Entry, len(m.Params))
		}
		if !built {
			continue
		}
		for _, f := range []string{base + ".cu", base + ".ptx", "common.cuh"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); want[f] != got {
				t.Errorf("%s: sha256 %s, userkernels.sha256 says %q: rebuild with build.sh", f, got, want[f])
			}
		}
	}
	if fsums, err := os.ReadFile(filepath.Join(dir, "userkernels.fatbin.sha256")); err == nil {
		sums, _, err := parseSums(fsums)
		if err != nil {
			t.Fatalf("userkernels.fatbin.sha256: %v", err)
		}
		for _, cu := range cus {
			for _, f := range []string{filepath.Base(cu), strings.TrimSuffix(filepath.Base(cu), ".cu") + ".fatbin", "common.cuh"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if got := sha256Hex(b); sums[f] != got {
					t.Errorf("%s: sha256 %s, userkernels.fatbin.sha256 says %q: rebuild with build.sh", f, got, sums[f])
				}
			}
		}
	} else if fats, _ := filepath.Glob(filepath.Join(dir, "*.fatbin")); len(fats) > 0 {
		t.Errorf("%v without userkernels.fatbin.sha256: rebuild with build.sh", fats)
	}
	if !built {
		t.Logf("no userkernels.sha256: the example PTX is built on the GPU host (build.sh, or the cuda tests do it)")
	}
}
