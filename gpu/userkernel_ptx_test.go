package gpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	if len(cus) < 8 {
		t.Fatalf("%d example kernels, want 8", len(cus))
	}
	headers, _ := filepath.Glob(filepath.Join(dir, "*.cuh"))
	for i, h := range headers {
		headers[i] = filepath.Base(h)
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
		js, err := os.ReadFile(filepath.Join(dir, base+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Entry string }
		if err := json.Unmarshal(js, &head); err != nil {
			t.Fatalf("%s.json: %v", base, err)
		}
		// The kernel's parameter count from its signature.
		sig := string(src)
		i := strings.Index(sig, "__global__ void "+head.Entry+"(")
		if i < 0 {
			t.Fatalf("%s: no kernel %s (the manifest's entry)", cu, head.Entry)
		}
		sig = sig[i:]
		sig = sig[:strings.IndexByte(sig, ')')]
		nparams := strings.Count(sig, ",") + 1
		tmp := t.TempDir()
		os.WriteFile(filepath.Join(tmp, base+".ptx"), []byte(fakePTX(head.Entry, nparams)), 0o644)
		m, err := ParseManifest(filepath.Join(tmp, base+".json"), js, ManifestOptions{})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if len(m.Params) != nparams {
			t.Errorf("%s: %d params, the kernel %s takes %d", base, len(m.Params), m.Entry, nparams)
		}
		if !built {
			continue
		}
		for _, f := range append([]string{base + ".cu", base + ".ptx"}, headers...) {
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
			for _, f := range append([]string{filepath.Base(cu), strings.TrimSuffix(filepath.Base(cu), ".cu") + ".fatbin"}, headers...) {
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

// TestUserKernelExpLog: the example attention kernels' explog.cuh is
// gpu/kernels/explog.cuh byte for byte (whose constants TestExpLogConstants
// holds to the oracle's), so their exp32 and log32 are the oracle's.
func TestUserKernelExpLog(t *testing.T) {
	ours, err := kernelFS.ReadFile("kernels/explog.cuh")
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join("testdata", "userkernels", "explog.cuh"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, copied) {
		t.Fatal("testdata/userkernels/explog.cuh differs from kernels/explog.cuh: copy it again (cp kernels/explog.cuh testdata/userkernels/)")
	}
}
