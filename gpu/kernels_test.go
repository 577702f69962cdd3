package gpu

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestFatbinMatchesSources checks the fat images in gpu/kernels against
// fatbin.sha256: every module has one, each has the listed hash, and the
// sources they were made from are the ones in the tree, but for a module
// whose sources were edited where no CUDA 13 nvcc was (logged: it loads
// its PTX, which TestPTXMatchesSources holds to its sources). A build
// without fat images (fatbin.sha256 absent) must have no .fatbin file
// either.
func TestFatbinMatchesSources(t *testing.T) {
	fats, err := kernelFiles(".fatbin")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := kernelFS.ReadFile("kernels/fatbin.sha256")
	if err != nil {
		if len(fats) > 0 {
			t.Fatalf("gpu/kernels has %v but no fatbin.sha256: run make fatbin", fats)
		}
		t.Logf("no fat images in this tree (made by make fatbin on a host with nvcc): modules load from PTX")
		return
	}
	sums, codes, err := parseSums(raw)
	if err != nil {
		t.Fatalf("fatbin.sha256: %v", err)
	}
	for _, c := range []string{"sm_80", "sm_90"} {
		if !strings.Contains(" "+strings.Join(codes, " ")+" ", " "+c+" ") {
			t.Errorf("fatbin.sha256 code line %v lacks %s", codes, c)
		}
	}
	if pickCode(codes, 12, 0) == "" {
		t.Errorf("fatbin.sha256 code line %v has no PTX for other GPUs", codes)
	}
	set := fatbins()
	if set.note != "" {
		t.Errorf("fat images unusable: %s", set.note)
	}
	for _, m := range Modules {
		note := fatImage(kernelFS, "kernels", set, m, 9, 0)
		switch {
		case note != "" && slices.ContainsFunc(sources(kernelFS, "kernels", m+".cu"), func(f string) bool { return set.changed[f] }):
			// a source edited where no CUDA 13 nvcc was (its PTX is
			// current: TestPTXMatchesSources): the module loads its PTX
			// until make fatbin runs on the device (scripts/device-round.sh,
			// stage ptx)
			t.Logf("module %s loads its PTX: %s", m, note)
		case note != "":
			t.Errorf("module %s: %s", m, note)
		}
	}
	for _, f := range fats {
		b, _ := kernelFS.ReadFile("kernels/" + f)
		if got := sha256Hex(b); sums[f] != got {
			t.Errorf("%s: sha256 %s, fatbin.sha256 says %q: run make fatbin", f, got, sums[f])
		}
	}
	if len(fats) != len(Modules) {
		t.Errorf("gpu/kernels has %d fat images, Modules lists %d", len(fats), len(Modules))
	}
}

func TestPickCode(t *testing.T) {
	codes := []string{"sm_80", "sm_90", "sm_100", "compute_90"}
	cases := []struct {
		codes        []string
		major, minor int
		want         string
	}{
		{codes, 9, 0, "sm_90"},
		{codes, 8, 0, "sm_80"},
		{codes, 8, 6, "sm_80"},
		{codes, 8, 9, "sm_80"},
		{codes, 10, 0, "sm_100"},
		{codes, 12, 0, "compute_90"},
		{codes[:2], 10, 0, ""},
		{append(codes[:2:2], "compute_90"), 10, 0, "compute_90"},
		{codes, 7, 5, ""},
	}
	for _, c := range cases {
		if got := pickCode(c.codes, c.major, c.minor); got != c.want {
			t.Errorf("pickCode(%v, %d.%d) = %q, want %q", c.codes, c.major, c.minor, got, c.want)
		}
	}
}

// TestPickImage: a module loads its fat image only when fatbin.sha256
// lists it with its hash, every source matches, and the image holds code
// for the GPU; otherwise its PTX, with a note saying why.
func TestPickImage(t *testing.T) {
	const ptx = "//\n.version 8.0\n.target sm_80\n.address_size 64\n"
	fat := "\x50\xed\x55\xba fat image bytes\x00\x01"
	src, hdr, other := "kernel source\n#include \"k.cuh\"\n", "header\n  # include \"j.cuh\"\n", "another module's source"
	sums := func(cu, fb string) string {
		return fmt.Sprintf("# made by test\n# code: sm_80 sm_90 compute_90\n%s  k.cu\n%s  k.cuh\n%s  j.cuh\n%s  other.cu\n%s  k.fatbin\n",
			sha256Hex([]byte(cu)), sha256Hex([]byte(hdr)), sha256Hex([]byte(hdr)), sha256Hex([]byte(other)), sha256Hex([]byte(fb)))
	}
	tree := func(sumfile string, withFat bool) fstest.MapFS {
		m := fstest.MapFS{
			"d/k.cu":     {Data: []byte(src)},
			"d/k.cuh":    {Data: []byte(hdr)},
			"d/j.cuh":    {Data: []byte(hdr)},
			"d/other.cu": {Data: []byte(other)},
			"d/k.ptx":    {Data: []byte(ptx)},
		}
		if withFat {
			m["d/k.fatbin"] = &fstest.MapFile{Data: []byte(fat)}
		}
		if sumfile != "" {
			m["d/fatbin.sha256"] = &fstest.MapFile{Data: []byte(sumfile)}
		}
		return m
	}
	cases := []struct {
		name         string
		fsys         fs.FS
		major, minor int
		fatbin       bool
		code, note   string
	}{
		{"fat image, SASS", tree(sums(src, fat), true), 9, 0, true, "sm_90", ""},
		{"fat image, PTX inside", tree(sums(src, fat), true), 12, 0, true, "compute_90", ""},
		{"no fat images", tree("", false), 9, 0, false, "compute_80", "no fat images in this build"},
		{"image missing", tree(sums(src, fat), false), 9, 0, false, "compute_80", "no k.fatbin in this build"},
		{"image changed", tree(sums(src, "other"), true), 9, 0, false, "compute_80", "k.fatbin does not match fatbin.sha256"},
		{"source changed", tree(sums("old source", fat), true), 9, 0, false, "compute_80", "stale: k.cu changed"},
		{"header included by an include changed", withFile(tree(sums(src, fat), true), "d/j.cuh", "new header"), 9, 0, false, "compute_80",
			"stale: j.cuh changed"},
		{"another module's source changed", withFile(tree(sums(src, fat), true), "d/other.cu", "new source"), 9, 0, true, "sm_90", ""},
		{"no code for the GPU", tree(sums(src, fat), true), 7, 5, false, "compute_80", "nothing sm_75 runs"},
		{"bad record", tree("zz  k.fatbin\n", true), 9, 0, false, "compute_80", "bad line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, im, err := pickImage(c.fsys, "d", readFatbinSet(c.fsys, "d"), "k", c.major, c.minor)
			if err != nil {
				t.Fatal(err)
			}
			if im.Fatbin != c.fatbin || im.Code != c.code || !strings.Contains(im.Note, c.note) || (c.note == "") != (im.Note == "") {
				t.Fatalf("got %+v, want fatbin %v code %s note containing %q", im, c.fatbin, c.code, c.note)
			}
			want := ptx
			if c.fatbin {
				want = fat
			}
			if string(img) != want {
				t.Errorf("loaded %q, want %q", img, want)
			}
			if im.JIT() != strings.HasPrefix(c.code, "compute_") {
				t.Errorf("JIT() = %v for %s", im.JIT(), c.code)
			}
		})
	}
}

// withFile is m with file name holding data.
func withFile(m fstest.MapFS, name, data string) fstest.MapFS {
	m[name] = &fstest.MapFile{Data: []byte(data)}
	return m
}

func TestModuleImageString(t *testing.T) {
	for _, c := range []struct {
		im   ModuleImage
		want string
	}{
		{ModuleImage{Module: "rmsnorm", Fatbin: true, Code: "sm_90", Load: 1234567}, "rmsnorm: fat image, SASS sm_90, loaded in 1.2ms"},
		{ModuleImage{Module: "attention", Fatbin: true, Code: "compute_90", Load: 2500000000}, "attention: fat image, PTX compute_90 JIT-compiled by the driver in 2.5s"},
		{ModuleImage{Module: "gen", Code: "compute_80", Load: 1310000000, Note: "no fat images in this build: run make fatbin where nvcc exists"},
			"gen: PTX compute_80, JIT-compiled by the driver in 1.31s (no fat images in this build: run make fatbin where nvcc exists)"},
	} {
		if got := c.im.String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
