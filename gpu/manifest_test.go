package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// fakePTX is enough PTX text for LoadManifest: an entry with n parameters.
func fakePTX(entry string, n int) string {
	var ps []string
	for i := 0; i < n; i++ {
		ps = append(ps, "\t.param .u64 p"+string(rune('a'+i)))
	}
	return ".version 8.0\n.target sm_80\n.visible .entry " + entry + "(\n" + strings.Join(ps, ",\n") + "\n)\n{\n\tret;\n}\n"
}

const goodManifest = `{
  "version": 1,
  "name": "mine",
  "op": "rmsnorm",
  "ptx": "k.ptx",
  "entry": "rmsnorm_rows",
  "params": ["x", "w", "y", "rows", "hidden", "eps", "in_dtype", "out_dtype"],
  "in": ["bf16", "fp32"],
  "out": ["bf16"],
  "grid": ["cdiv(rows, block)"],
  "block": ["128"],
  "shared": "block*4",
  "schedule": "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w",
  "timeout": "7s"
}`

func writeManifest(t *testing.T, js string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "k.ptx"), []byte(fakePTX("rmsnorm_rows", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "m.json")
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadManifest(t *testing.T) {
	m, err := LoadManifest(writeManifest(t, goodManifest), ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Op != spec.OpRMSNorm || m.Entry != "rmsnorm_rows" || len(m.Params) != 8 || m.Timeout != 7*time.Second || len(m.In) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	grid, block, shared, err := m.Geometry(map[string]int64{"rows": 300, "hidden": 64})
	if err != nil {
		t.Fatal(err)
	}
	if grid != [3]int{3, 1, 1} || block != [3]int{128, 1, 1} || shared != 512 {
		t.Fatalf("geometry grid %v block %v shared %d, want [3 1 1] [128 1 1] 512", grid, block, shared)
	}
	if info := m.Info("cuda:0"); info.Name != "kernel:mine" || !info.Invariant || info.Schedule == "" {
		t.Fatalf("info %+v", info)
	}
}

// TestBadManifests: every kind of mistake gets an error naming the field.
func TestBadManifests(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(goodManifest, old) {
			t.Fatalf("test bug: %q not in the manifest", old)
		}
		return strings.Replace(goodManifest, old, new, 1)
	}
	tests := []struct {
		name, js, field, msg string
	}{
		{"missing file", edit(`"k.ptx"`, `"nothere.ptx"`), "ptx", "no such file"},
		{"no image", edit(`"ptx": "k.ptx",`, ``), "ptx", "missing"},
		{"unknown op", edit(`"rmsnorm"`, `"conv2d"`), "op", `unknown op "conv2d"`},
		{"wrong parameter count", edit(`, "out_dtype"]`, `]`), "params", "7 names, but the PTX entry rmsnorm_rows takes 8"},
		{"unknown parameter", edit(`"eps"`, `"epsilon"`), "params", `"epsilon" is not a parameter of op rmsnorm`},
		{"missing pointer", edit(`"x", "w", "y"`, `"x", "w", "hidden2"`), "params", `not a parameter`},
		{"duplicate parameter", edit(`"x", "w", "y", "rows"`, `"x", "w", "y", "x"`), "params", "given twice"},
		{"missing entry in PTX", edit(`"entry": "rmsnorm_rows"`, `"entry": "other"`), "entry", `no entry "other" (it has: rmsnorm_rows)`},
		{"grid does not parse", edit(`"cdiv(rows, block)"`, `"rows +"`), "grid", "column 7"},
		{"grid bad character", edit(`"cdiv(rows, block)"`, `"rows $ 2"`), "grid", "column 6: unexpected character"},
		{"grid unknown name", edit(`"cdiv(rows, block)"`, `"tokens"`), "grid", `unknown name "tokens"`},
		{"zero block", edit(`["128"]`, `["0"]`), "block", "is 0 (want 1..1024)"},
		{"absurd block", edit(`["128"]`, `["2048"]`), "block", "is 2048"},
		{"block product", edit(`["128"]`, `["128", "16"]`), "block", "2048 threads"},
		{"zero grid", edit(`"cdiv(rows, block)"`, `"rows - rows"`), "grid", "is 0"},
		{"absurd grid y", edit(`["cdiv(rows, block)"]`, `["1", "rows*hidden"]`), "grid", "want 1..65535"},
		{"absurd shared", edit(`"block*4"`, `"hidden*4"`), "shared", "want 0..49152"},
		{"shared division by zero", edit(`"block*4"`, `"block/(rows-rows)"`), "shared", "division by zero"},
		{"unknown dtype", edit(`["bf16", "fp32"]`, `["bf16", "fp8"]`), "in", `unknown dtype "fp8"`},
		{"layout of an op without one", edit(`"schedule"`, `"layout": true, "schedule"`), "layout", "op rmsnorm has no layout to read"},
		{"no dtypes", edit(`"out": ["bf16"],`, `"out": [],`), "out", "missing"},
		{"dtype code needed", edit(`"in_dtype", "out_dtype"]`, `"out_dtype"]`), "params", ""},
		{"bad schedule", edit(`threads=1 vec=1`, `threads=3 vec=1`), "schedule", "threads 3"},
		{"no claim", edit(`"schedule": "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w",`, ``), "schedule", "missing"},
		{"both claims", edit(`"timeout"`, `"ulp_bound": 2, "timeout"`), "schedule", "not both"},
		{"absurd ulp bound", strings.Replace(edit(`"timeout"`, `"ulp_bound": 100000000, "timeout"`), `"schedule": "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w",`, "", 1), "ulp_bound", "no bound"},
		{"ulp bound past target.MaxULPBound", strings.Replace(edit(`"timeout"`, `"ulp_bound": 31743, "timeout"`), `"schedule": "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w",`, "", 1), "ulp_bound", "at most 31742"},
		{"zero timeout", edit(`"7s"`, `"0s"`), "timeout", "want more than 0"},
		{"bad timeout", edit(`"7s"`, `"soon"`), "timeout", "invalid duration"},
		{"wrong version", edit(`"version": 1`, `"version": 2`), "version", "reads version 1"},
		{"unknown field", edit(`"timeout"`, `"gird": ["1"], "timeout"`), "", `unknown field "gird"`},
		{"wrong type", edit(`"block": ["128"]`, `"block": 128`), "block", "cannot unmarshal"},
		{"bad name", edit(`"mine"`, `"my kernel"`), "name", "want letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadManifest(writeManifest(t, tt.js), ManifestOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *ManifestError: %v", err, err)
			}
			if me.Field != tt.field {
				t.Errorf("field %q, want %q (error: %v)", me.Field, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			if tt.field != "" && !strings.Contains(err.Error(), `field "`+tt.field+`"`) {
				t.Errorf("error %q does not name the field %q", err, tt.field)
			}
		})
	}
}

func TestExpr(t *testing.T) {
	env := map[string]int64{"rows": 928, "hidden": 4096, "block": 256}
	tests := []struct {
		src  string
		want int64
		err  string
	}{
		{"rows", 928, ""},
		{"256", 256, ""},
		{"block*4", 1024, ""},
		{"cdiv(rows, 128)", 8, ""},
		{"cdiv(929, 128)", 8, ""},
		{"cdiv(1025, 128)", 9, ""},
		{"rows % 32", 0, ""},
		{"(rows + 1) * 2 - hidden / 1024", 1854, ""},
		{"2 + 3 * 4", 14, ""},
		{"(2 + 3) * 4", 20, ""},
		{"-3 + 10", 7, ""},
		{"10 - 4 - 3", 3, ""},
		{"100 / 10 / 5", 2, ""},
		{"min(rows, 512) + max(1, 0)", 513, ""},
		{"", 0, "empty"},
		{"rows +", 0, "column 7: expected a number, a name or \"(\" at the end"},
		{"(rows", 0, "column 6: expected \")\""},
		{"rows)", 0, "column 5: unexpected \")\""},
		{"rows ^ 2", 0, "column 6: unexpected character '^'"},
		{"cdiv(rows)", 0, "column 10: expected \",\""},
		{"sqrt(rows)", 0, "unknown function \"sqrt\""},
		{"rows / 0", 0, "column 6: division by zero"},
		{"rows % (block - 256)", 0, "remainder by zero"},
		{"vocab", 0, "unknown name \"vocab\""},
		{"99999999999999999999", 0, "too large"},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.src)
		var v int64
		if err == nil {
			v, err = e.Eval(env)
		}
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one saying %q", tt.src, err, tt.err)
			}
			continue
		}
		if err != nil || v != tt.want {
			t.Errorf("%q = %d, %v; want %d", tt.src, v, err, tt.want)
		}
	}
}

// TestManifestFatbin: "fatbin" names a fat image loaded in place of the
// PTX; an absent file leaves the PTX to load, an empty one is an error.
func TestManifestFatbin(t *testing.T) {
	js := strings.Replace(goodManifest, `"ptx": "k.ptx",`, `"ptx": "k.ptx", "fatbin": "k.fatbin",`, 1)
	p := writeManifest(t, js)
	m, err := LoadManifest(p, ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Fatbin != nil || m.FatbinPath != filepath.Join(filepath.Dir(p), "k.fatbin") {
		t.Errorf("absent fat image: Fatbin %q, FatbinPath %s", m.Fatbin, m.FatbinPath)
	}
	fat := filepath.Join(filepath.Dir(p), "k.fatbin")
	os.WriteFile(fat, []byte("\x50\xed\x55\xba image"), 0o644)
	if m, err = LoadManifest(p, ManifestOptions{}); err != nil || string(m.Fatbin) != "\x50\xed\x55\xba image" {
		t.Errorf("fat image: %q, %v", m.Fatbin, err)
	}
	os.WriteFile(fat, nil, 0o644)
	var me *ManifestError
	if _, err = LoadManifest(p, ManifestOptions{}); !errors.As(err, &me) || me.Field != "fatbin" || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty fat image: %v", err)
	}
}

func TestManifestImageHash(t *testing.T) {
	p := writeManifest(t, goodManifest)
	m, err := LoadManifest(p, ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "ptx:" + sha256Hex([]byte(fakePTX("rmsnorm_rows", 8)))[:16]
	if h := m.ImageHash(); h != want {
		t.Errorf("ImageHash %s, want %s", h, want)
	}
	m.Fatbin = []byte("fat")
	if h := m.ImageHash(); h != want+"+fatbin:"+sha256Hex([]byte("fat"))[:16] {
		t.Errorf("ImageHash with a fat image: %s", h)
	}
}
