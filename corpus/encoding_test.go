package corpus

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// seedCase is a small generated rmsnorm case.
func seedCase(seed uint64) spec.Case {
	return spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
		Targets: []string{"oracle"}, Shape: spec.Shape{Rows: 4, Hidden: 8}, In: spec.BF16, Out: spec.BF16,
		Eps: 1e-6, Dist: spec.DistNormal, Seed: seed, GenVersion: spec.GeneratorVersion,
		Rel: spec.RelParams{Row: 1, Batch: 928, Position: 3}}
}

// explicitCase is a 2x4 rmsnorm case whose explicit data holds NaNs with
// payloads (quiet and signalling), ±0, subnormals, infinities and the
// extremes of the dtype.
func explicitCase(in spec.DType) spec.Case {
	c := seedCase(0)
	c.Shape = spec.Shape{Rows: 2, Hidden: 4}
	c.In, c.Out, c.Compare = in, spec.BF16, spec.FP32
	c.Eps = math.Float32frombits(0x00000001) // smallest fp32 subnormal
	c.Seed, c.GenVersion = 0, 0
	if in == spec.FP32 {
		c.Data = &spec.Data{Tensors: map[string][]string{
			"x": {"7fc00001", "7f800001", "ffbfffff", "80000000", "00000000", "00000001", "807fffff", "7f7fffff"},
			"w": {"7f800000", "ff800000", "3f800000", "00400000"},
		}}
	} else {
		c.Data = &spec.Data{Tensors: map[string][]string{
			"x": {"7fc1", "7f81", "ffbf", "8000", "0000", "0001", "807f", "7f7f"},
			"w": {"7f80", "ff80", "3f80", "0040"},
		}}
	}
	return c
}

func sampleFinding(c spec.Case) *spec.Finding {
	fd := &spec.Finding{Case: c, Kind: "mismatch", Relation: c.Relation, TargetA: c.Targets[0],
		Row: 1, Col: 3, A: spec.Value{Hex: "7fc1", Dec: "NaN"}, B: spec.Value{Hex: "8000", Dec: "-0"},
		ULPs: 1, SignedZero: true, RowsDiffering: 2,
		DriftMap: &spec.DriftMap{Dim: "rows", Values: []int{928, 2274}, Kind: "periodic", Rule: "rows % 32 == 0 -> A, otherwise -> B",
			Classes: []spec.DriftClass{{Label: "A", Digest: "aa", Values: []int{928}}, {Label: "B", Digest: "bb", Values: []int{2274}}}},
		FoundAt: time.Date(2026, 12, 1, 3, 4, 5, 0, time.UTC)}
	fd.Signature = spec.Signature(*fd)
	return fd
}

func TestRoundTripBitExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    spec.Case
		fd   bool
	}{
		{"seeded", seedCase(42), false},
		{"seeded-finding", seedCase(7), true},
		{"bf16-explicit", explicitCase(spec.BF16), true},
		{"fp32-explicit", explicitCase(spec.FP32), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fd *spec.Finding
			if tc.fd {
				fd = sampleFinding(tc.c)
			}
			f := NewFile(tc.c, fd, spec.Env{Bitparity: "test", GPU: "NVIDIA H200", CC: "9.0", KernelHash: "abc"}, "test")
			g, _ := roundTrip(t, f)
			if math.Float32bits(g.Case.Eps) != math.Float32bits(tc.c.Eps) {
				t.Errorf("eps bits %08x, want %08x", math.Float32bits(g.Case.Eps), math.Float32bits(tc.c.Eps))
			}
			if tc.c.Data != nil {
				for name, want := range tc.c.Data.Tensors {
					got := g.Case.Data.Tensors[name]
					if strings.Join(got, ",") != strings.Join(want, ",") {
						t.Errorf("tensor %s: %v, want %v", name, got, want)
					}
				}
				// the bits reach the batch unchanged (NaN payloads, -0, subnormals)
				b, err := inputs.Of(g.Case)
				if err != nil {
					t.Fatal(err)
				}
				if tc.c.In == spec.FP32 {
					for i, h := range tc.c.Data.Tensors["x"] {
						if got := math.Float32bits(b.Input.(*oracle.RMSNormInput).X[i]); hex32(got) != h {
							t.Errorf("x[%d] reached the batch as %08x, want %s", i, got, h)
						}
					}
				}
			}
			if tc.fd {
				if g.Finding == nil || g.Finding.A != fd.A || g.Finding.B != fd.B || g.Signature != fd.Signature {
					t.Errorf("finding did not round-trip: %+v", g.Finding)
				}
				if g.Finding.DriftMap.Rule != fd.DriftMap.Rule {
					t.Errorf("drift rule %q, want %q", g.Finding.DriftMap.Rule, fd.DriftMap.Rule)
				}
			}
			if g.Env != f.Env {
				t.Errorf("env %+v, want %+v", g.Env, f.Env)
			}
		})
	}
}

func hex32(u uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[u&15]
		u >>= 4
	}
	return string(b[:])
}

func TestEpsRoundTrip(t *testing.T) {
	for _, bits := range []uint32{0, 0x80000000, 1, 0x007fffff, 0x00800000, 0x358637bd, 0x3727c5ac, 0x2edbe6ff, 0x7f7fffff, 0x3f800001} {
		c := seedCase(1)
		c.Eps = math.Float32frombits(bits)
		g, _ := roundTrip(t, NewFile(c, nil, spec.Env{}, ""))
		want := bits
		if bits == 0x80000000 {
			want = 0 // -0 is stored as +0 (canonicalCase)
		}
		if got := math.Float32bits(g.Case.Eps); got != want {
			t.Errorf("eps %08x came back as %08x", bits, got)
		}
	}
}

func TestCanonicalHex(t *testing.T) {
	a := explicitCase(spec.BF16)
	b := explicitCase(spec.BF16)
	b.Data.Tensors["x"] = []string{"0x7FC1", "7F81", "FFBF", "8000", "0", "1", "807f", "7f7f"}
	ha, err := CaseHash(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := CaseHash(b)
	if err != nil {
		t.Fatal(err)
	}
	if ha != hb {
		t.Errorf("the same bits spelled differently hash differently: %s vs %s", ha, hb)
	}
	c := explicitCase(spec.BF16)
	c.Data.Tensors["x"][0] = "7fc2" // another NaN payload is another case
	if hc, _ := CaseHash(c); hc == ha {
		t.Errorf("NaN payload 7fc1 vs 7fc2 hash the same")
	}
}

// encodeRaw marshals a valid file into a generic map that tests corrupt.
func encodeRaw(t *testing.T, f *File) map[string]any {
	t.Helper()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecodeRefuses(t *testing.T) {
	base := func() map[string]any { return encodeRaw(t, NewFile(seedCase(3), nil, spec.Env{}, "")) }
	caseOf := func(m map[string]any) map[string]any { return m["case"].(map[string]any) }
	shapeOf := func(m map[string]any) map[string]any { return caseOf(m)["shape"].(map[string]any) }
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]any)
		raw   []byte
		field string // must appear in the error
	}{
		{name: "not json", raw: []byte("{\"format\":"), field: "not a case file"},
		{name: "wrong format", edit: func(m map[string]any) { m["format"] = "other" }, field: "format"},
		{name: "version 2", edit: func(m map[string]any) { m["version"] = 2 }, field: "version: 2"},
		{name: "unknown top field", edit: func(m map[string]any) { m["bogus"] = 1 }, field: `unknown field "bogus"`},
		{name: "unknown case field", edit: func(m map[string]any) { caseOf(m)["tile"] = 64 }, field: `case: json: unknown field "tile"`},
		{name: "no case", edit: func(m map[string]any) { delete(m, "case") }, field: "case: missing"},
		{name: "case version", edit: func(m map[string]any) { caseOf(m)["version"] = 9 }, field: "case.version"},
		{name: "rows as string", edit: func(m map[string]any) { shapeOf(m)["rows"] = "many" }, field: "shape.rows"},
		{name: "negative rows", edit: func(m map[string]any) { shapeOf(m)["rows"] = -5 }, field: "case.shape.rows"},
		{name: "huge rows", edit: func(m map[string]any) { shapeOf(m)["rows"] = 1 << 40 }, field: "case.shape.rows"},
		{name: "rows x hidden", edit: func(m map[string]any) { shapeOf(m)["rows"] = 1 << 20; shapeOf(m)["hidden"] = 1 << 20 }, field: "case.shape"},
		{name: "pad too large", edit: func(m map[string]any) { caseOf(m)["rel"].(map[string]any)["pad"] = 1 << 27 }, field: "case.rel.pad"},
		{name: "mask out of range", edit: func(m map[string]any) { caseOf(m)["rel"].(map[string]any)["mask"] = []int{0, 5000} }, field: "case.rel.mask[1]"},
		{name: "unknown op", edit: func(m map[string]any) { caseOf(m)["op"] = "conv" }, field: "case.op"},
		{name: "unknown relation", edit: func(m map[string]any) { caseOf(m)["relation"] = "vibes" }, field: "case.relation"},
		{name: "no targets", edit: func(m map[string]any) { caseOf(m)["targets"] = []string{} }, field: "case.targets"},
		{name: "target with space", edit: func(m map[string]any) { caseOf(m)["targets"] = []string{"a b"} }, field: "case.targets[0]"},
		{name: "bad dtype", edit: func(m map[string]any) { caseOf(m)["in"] = "fp8" }, field: "case.in"},
		{name: "negative eps", edit: func(m map[string]any) { caseOf(m)["eps"] = -1 }, field: "case.eps"},
		{name: "bad dist", edit: func(m map[string]any) { caseOf(m)["dist"] = "cauchy" }, field: "case.dist"},
		{name: "bad status", edit: func(m map[string]any) { m["status"] = map[string]any{"state": "maybe"} }, field: "status.state"},
		{name: "fixed without time", edit: func(m map[string]any) { m["status"] = map[string]any{"state": "fixed"} }, field: "status.fixed_at"},
		{name: "bad hex", edit: func(m map[string]any) {
			caseOf(m)["shape"] = map[string]any{"rows": 1, "hidden": 2}
			delete(caseOf(m)["rel"].(map[string]any), "row") // row 0 of the one row
			caseOf(m)["data"] = map[string]any{"tensors": map[string]any{"x": []string{"3f80", "zz"}, "w": []string{"3f80", "3f80"}}}
		}, field: "case.data.tensors.x[1]"},
		{name: "hex too wide", edit: func(m map[string]any) {
			caseOf(m)["shape"] = map[string]any{"rows": 1, "hidden": 2}
			delete(caseOf(m)["rel"].(map[string]any), "row") // row 0 of the one row
			caseOf(m)["data"] = map[string]any{"tensors": map[string]any{"x": []string{"3f800000", "3f80"}, "w": []string{"3f80", "3f80"}}}
		}, field: "case.data.tensors.x[0]"},
		{name: "data count", edit: func(m map[string]any) {
			caseOf(m)["data"] = map[string]any{"tensors": map[string]any{"x": []string{"3f80"}, "w": []string{"3f80"}}}
		}, field: "case.data.tensors.w"},
		{name: "data huge shape", edit: func(m map[string]any) {
			shapeOf(m)["rows"] = 1 << 14
			shapeOf(m)["hidden"] = 1 << 14
			caseOf(m)["data"] = map[string]any{"tensors": map[string]any{"x": []string{"3f80"}, "w": []string{"3f80"}}}
		}, field: "case.shape"},
		{name: "trailing data", raw: nil, field: "after top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.raw
			if tc.name == "trailing data" {
				b, _ := Encode(NewFile(seedCase(3), nil, spec.Env{}, ""))
				data = append(b, []byte("{}")...)
			} else if data == nil {
				m := base()
				tc.edit(m)
				var err error
				if data, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Decode("dir/x.json", data)
			if err == nil {
				t.Fatalf("decoded a bad file")
			}
			if !strings.HasPrefix(err.Error(), "dir/x.json: ") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name the file and %q", err, tc.field)
			}
		})
	}
}

func TestDecodeTooLarge(t *testing.T) {
	big := make([]byte, spec.MaxFileBytes+1)
	if _, err := Decode("big.json", big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("decoded an oversized file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("read an oversized file: %v", err)
	}
}

func TestFindingCaseMustMatch(t *testing.T) {
	c := seedCase(5)
	fd := sampleFinding(c)
	f := NewFile(c, fd, spec.Env{}, "")
	f.Finding.Case.Seed = 6
	if _, err := Encode(f); err == nil || !strings.Contains(err.Error(), "finding.case") {
		t.Errorf("encoded a file whose finding holds another case: %v", err)
	}
}

// roundTrip encodes f, decodes that and encodes it again: it fails the
// test unless both encodings are the same bytes, and returns the decoded
// file and the encoding.
func roundTrip(t *testing.T, f *File) (*File, []byte) {
	t.Helper()
	b1, err := Encode(f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	g, err := Decode("mem", b1)
	if err != nil {
		t.Fatalf("cannot decode its own encoding: %v\n%s", err, b1)
	}
	b2, err := Encode(g)
	if err != nil {
		t.Fatalf("encode of the decoded file: %v", err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("encode(decode(encode(f))) differs:\n%s\n---\n%s", b1, b2)
	}
	return g, b1
}

// TestOpPackageCaseFile: a case of an op package's op (moe_route) is kept
// as a case file (Keeps) that round-trips; a file claiming a batch or
// sizes beyond the op's case contract (ops.CheckCase) is refused with
// the field named, before any input exists.
func TestOpPackageCaseFile(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, Op: "moe_route", Relation: spec.RelBatchInvariance,
		Targets: []string{"drift-moe-route-tie-high-128"}, Shape: spec.Shape{Rows: 128, Dims: map[string]int{"experts": 32, "top_k": 4}},
		In: "bf16", Out: "bf16", Dist: "ties", Seed: 3, GenVersion: spec.GeneratorVersion}
	if !Keeps(c.Op) || Keeps("nope") {
		t.Errorf("Keeps(moe_route) %v, Keeps(nope) %v: want true, false", Keeps(c.Op), Keeps("nope"))
	}
	roundTrip(t, NewFile(c, nil, spec.Env{}, ""))
	for _, tc := range []struct {
		field string
		edit  func(shape map[string]any)
	}{
		{"case.shape.rows: 1099511627776, want 1..65536", func(s map[string]any) { s["rows"] = 1 << 40 }},
		{"case.shape.dims: moe_route: experts = 1048576, want 1..65536", func(s map[string]any) { s["dims"].(map[string]any)["experts"] = 1 << 20 }},
		{"case.shape.dims.top_k: missing", func(s map[string]any) { delete(s["dims"].(map[string]any), "top_k") }},
	} {
		m := encodeRaw(t, NewFile(c, nil, spec.Env{}, ""))
		tc.edit(m["case"].(map[string]any)["shape"].(map[string]any))
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode("x.json", data); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("decode: %v, want %q", err, tc.field)
		}
	}
}
