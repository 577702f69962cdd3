package gpu

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readSums parses kernels/kernels.sha256 ("<sha256>  <file>" lines, '#'
// comments) into file -> hash.
func readSums(t *testing.T) map[string]string {
	t.Helper()
	b, err := kernelFS.ReadFile("kernels/kernels.sha256")
	if err != nil {
		t.Fatalf("gpu/kernels/kernels.sha256 missing (run make ptx where nvcc exists): %v", err)
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || len(f[0]) != 64 {
			t.Fatalf("kernels.sha256: bad line %q", line)
		}
		sums[strings.TrimPrefix(f[1], "*")] = f[0]
	}
	return sums
}

// TestPTXMatchesSources checks that every CUDA source and every PTX file
// in gpu/kernels is the one scripts/ptx.sh hashed when it made the PTX:
// editing a .cu or .cuh without rebuilding the PTX (make ptx), or editing
// the PTX by hand, fails here.
func TestPTXMatchesSources(t *testing.T) {
	sums := readSums(t)
	files, err := kernelFiles(".cu", ".cuh", ".ptx")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := kernelFS.ReadFile("kernels/" + f)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := sums[f]
		if !ok {
			t.Errorf("%s is not in kernels.sha256: run make ptx", f)
			continue
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Errorf("%s: sha256 %s, kernels.sha256 says %s: the PTX was not rebuilt from this source (run make ptx)", f, got, want)
		}
		seen[f] = true
	}
	for f := range sums {
		if !seen[f] {
			t.Errorf("kernels.sha256 lists %s, which is not in gpu/kernels", f)
		}
	}
	for _, m := range Modules {
		if !seen[m+".cu"] || !seen[m+".ptx"] {
			t.Errorf("module %s: want kernels/%s.cu and its PTX", m, m)
		}
	}
	cus, _ := kernelFiles(".cu")
	if len(cus) != len(Modules) {
		t.Errorf("gpu/kernels has %d .cu files, Modules lists %d", len(cus), len(Modules))
	}
}

// TestPTXExact scans the embedded PTX: exact kernels may use only
// correctly rounded arithmetic, so no .approx instruction (rsqrt, ex2,
// lg2, fast division) and no .ftz (flush to zero) may appear, and every
// fp32 add, mul, fma, div and sqrt carries .rn.
func TestPTXExact(t *testing.T) {
	files, err := kernelFiles(".ptx")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no PTX embedded (run make ptx)")
	}
	arith := regexp.MustCompile(`^\s*(?:@!?%p\d+\s+)?(add|sub|mul|fma|div|sqrt)((?:\.[a-z0-9]+)*)\.f32\s`)
	for _, f := range files {
		b, _ := kernelFS.ReadFile("kernels/" + f)
		for i, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if strings.Contains(code, ".approx") || strings.Contains(code, ".ftz") {
				t.Errorf("%s:%d: inexact instruction: %s", f, i+1, strings.TrimSpace(code))
			}
			if m := arith.FindStringSubmatch(code); m != nil && !strings.Contains(m[2], ".rn") {
				t.Errorf("%s:%d: fp32 %s without .rn: %s", f, i+1, m[1], strings.TrimSpace(code))
			}
		}
	}
}

// TestExpLogConstants checks that the fp32 constants of
// kernels/explog.cuh are the oracle's, bit for bit: the bit constants are
// read from oracle/explog.go, the polynomial coefficients are the fp32
// roundings of 1/n! and 2/(2n+1), as the oracle defines them.
func TestExpLogConstants(t *testing.T) {
	cuh, err := kernelFS.ReadFile("kernels/explog.cuh")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../oracle/explog.go")
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) uint32 {
		m := regexp.MustCompile(`#define ` + name + ` 0x([0-9a-f]{8})u`).FindSubmatch(cuh)
		if m == nil {
			t.Fatalf("explog.cuh: no #define %s", name)
		}
		v, _ := strconv.ParseUint(string(m[1]), 16, 32)
		return uint32(v)
	}
	orc := func(name string) uint32 {
		m := regexp.MustCompile(name + `\s*=\s*0x([0-9a-f]{8})`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("oracle/explog.go: no %s", name)
		}
		v, _ := strconv.ParseUint(string(m[1]), 16, 32)
		return uint32(v)
	}
	bits := func(f float32) uint32 { return mathFloat32bits(f) }
	cases := []struct {
		cuda string
		want uint32
	}{
		{"LOG2E", orc("log2eBits")}, {"LN2_HI", orc("ln2HiBits")}, {"LN2_LO", orc("ln2LoBits")}, {"SQRT2", orc("sqrt2Bits")},
		{"EXP_MAGIC", bits(12582912.0)},
		{"EXP_C7", bits(1.0 / 5040)}, {"EXP_C6", bits(1.0 / 720)}, {"EXP_C5", bits(1.0 / 120)}, {"EXP_C4", bits(1.0 / 24)},
		{"EXP_C3", bits(1.0 / 6)}, {"EXP_C2", bits(0.5)},
		{"LOG_C9", bits(2.0 / 9)}, {"LOG_C7", bits(2.0 / 7)}, {"LOG_C5", bits(2.0 / 5)}, {"LOG_C3", bits(2.0 / 3)},
	}
	for _, c := range cases {
		if got := def(c.cuda); got != c.want {
			t.Errorf("explog.cuh %s = 0x%08x, oracle 0x%08x", c.cuda, got, c.want)
		}
	}
	for _, s := range []string{"expMagic  = 12582912.0", "expMaxArg = 89.0", "expMinArg = -104.0",
		"{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5}", "{2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3}"} {
		if !bytes.Contains(src, []byte(s)) {
			t.Errorf("oracle/explog.go no longer has %q: update kernels/explog.cuh and this test", s)
		}
	}
}
