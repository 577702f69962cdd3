package oracle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cublasShape is one GEMM the probe runs through cublasGemmEx (bf16 A and
// B, fp32 compute, fp32 and bf16 C), y = x·W with x M x K and W K x N.
type cublasShape struct{ M, K, N int }

func (s cublasShape) name() string { return fmt.Sprintf("gemm_%d_%d_%d", s.M, s.K, s.N) }

// cublasShapes cover the M classes the H200 showed (docs/findings.md:
// 1, 2-16, 17+) and the split-K range of small M at long K.
var cublasShapes = func() []cublasShape {
	var s []cublasShape
	for _, k := range []int{128, 4096} {
		for _, m := range []int{1, 2, 4, 8, 16, 17, 32, 64, 65, 128, 256, 1024} {
			s = append(s, cublasShape{m, k, 256})
		}
	}
	return s
}()

// cublasInputs draws x and W of s: bf16 normal values, seeded by the shape.
func cublasInputs(s cublasShape) (x, w []float32) {
	r := rand.New(rand.NewPCG(uint64(s.M)<<32|uint64(s.K), uint64(s.N)))
	return randVals(r, BF16, s.M*s.K, 1), randVals(r, BF16, s.K*s.N, 1)
}

func bf16Bytes(xs []float32) []byte {
	b := make([]byte, 0, 2*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint16(b, BF16FromF32(x))
	}
	return b
}

// cublasRecording is testdata/tensorcore/cublas.json: per shape, the
// output bits cublasGemmEx gave on the H200 for a few rows, and the GEMM
// schedules of the oracle that reproduce them.
type cublasRecording struct {
	Device string           `json:"device"`
	Note   string           `json:"note"`
	Shapes []cublasShapeRec `json:"shapes"`
}

type cublasShapeRec struct {
	M, K, N int
	Rows    []int  `json:"rows"`
	Y32     string `json:"y32"` // base64 of the rows' fp32 bits (u32 little-endian)
	Y16     string `json:"y16"` // base64 of the rows' bf16 bits (u16 little-endian)
	// Matches are the schedules whose fp32 outputs equal Y32 on the rows
	// (split-K 1..64, both combines, fma chain and bf16 tensor core, chunks
	// of ceil(K/SplitK) or in whole K tiles of 64 or 128).
	Matches   []string       `json:"matches"`
	Schedules []GEMMSchedule `json:"schedules"` // Matches as values
	// Bf16IsRN is true when Y16 is Y32 rounded to nearest even.
	Bf16IsRN bool `json:"bf16_is_rn"`
}

// cublasSpace is the GEMM schedule space searched against cuBLAS.
func cublasSpace() []GEMMSchedule {
	var s []GEMMSchedule
	for _, m := range []MMAFormat{MMABF16, MMANone} {
		for _, kt := range []int{0, 64, 128} {
			for k := 1; k <= 64; k++ {
				s = append(s, GEMMSchedule{SplitK: k, Combine: CrossSequential, MMA: m, KTile: kt})
				if k > 1 && k&(k-1) == 0 {
					s = append(s, GEMMSchedule{SplitK: k, Combine: CrossTree, MMA: m, KTile: kt})
				}
			}
		}
	}
	return s
}

// gunzip reads the gzip file at path, uncompressed, into memory.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return raw
}

// untar reads the files of a .tgz into memory.
func untar(t *testing.T, path string) map[string][]byte {
	tr := tar.NewReader(bytes.NewReader(gunzip(t, path)))
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(h.Name)] = b
	}
}

// recordCublas writes testdata/tensorcore/cublas.json from gemm.tgz.
func recordCublas(t *testing.T, tgz, out string) {
	files := untar(t, tgz)
	rec := cublasRecording{Device: *tcDevice, Note: "cublasGemmEx(CUBLAS_OP_N, CUBLAS_OP_N, bf16 A and B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, alpha 1, beta 0) through CuPy, as gpu/cublas.go calls it; gpu/probes/tensorcore/cublas_gemmex.py"}
	for _, sh := range cublasShapes {
		y32, ok32 := files[sh.name()+".y32"]
		y16, ok16 := files[sh.name()+".y16"]
		if !ok32 || !ok16 {
			t.Logf("%s: not recorded", sh.name())
			continue
		}
		rows := []int{0}
		for _, r := range []int{sh.M / 2, sh.M - 1} {
			if r != rows[len(rows)-1] {
				rows = append(rows, r)
			}
		}
		r := cublasShapeRec{M: sh.M, K: sh.K, N: sh.N, Rows: rows, Bf16IsRN: true}
		var b32, b16 []byte
		for _, row := range rows {
			b32 = append(b32, y32[row*sh.N*4:(row+1)*sh.N*4]...)
			b16 = append(b16, y16[row*sh.N*2:(row+1)*sh.N*2]...)
		}
		for i := 0; i < len(y32)/4; i++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(y32[4*i:]))
			if BF16FromF32(f) != binary.LittleEndian.Uint16(y16[2*i:]) {
				r.Bf16IsRN = false
			}
		}
		r.Y32, r.Y16 = base64.StdEncoding.EncodeToString(b32), base64.StdEncoding.EncodeToString(b16)
		x, w := cublasInputs(sh)
		in := GEMMInput{X: x, W: w, M: sh.M, K: sh.K, N: sh.N, Out: FP32}
		for _, s := range cublasSpace() {
			y, err := GEMM(in, s, rows)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(u32Bytes(f32Bits(y)), b32) {
				r.Matches = append(r.Matches, s.String())
				r.Schedules = append(r.Schedules, s)
			}
		}
		t.Logf("%s: %s (bf16 output is RN of fp32: %v)", sh.name(), strings.Join(r.Matches, "; "), r.Bf16IsRN)
		rec.Shapes = append(rec.Shapes, r)
	}
	js, _ := json.MarshalIndent(rec, "", "\t")
	if err := os.WriteFile(out, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func f32Bits(xs []float32) []uint32 {
	u := make([]uint32, len(xs))
	for i, x := range xs {
		u[i] = math.Float32bits(x)
	}
	return u
}

// TestCuBLASGemmExH200 replays the recorded cuBLAS outputs: every shape's
// first matching schedule must give the H200's fp32 bits on the recorded
// rows, and the bf16 output must be those bits rounded to nearest even.
func TestCuBLASGemmExH200(t *testing.T) {
	js, err := os.ReadFile(filepath.Join("testdata", "tensorcore", "cublas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec cublasRecording
	if err := json.Unmarshal(js, &rec); err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, r := range rec.Shapes {
		sh := cublasShape{r.M, r.K, r.N}
		b32, _ := base64.StdEncoding.DecodeString(r.Y32)
		b16, _ := base64.StdEncoding.DecodeString(r.Y16)
		for i := 0; i < len(b16)/2; i++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(b32[4*i:]))
			if r.Bf16IsRN && BF16FromF32(f) != binary.LittleEndian.Uint16(b16[2*i:]) {
				t.Errorf("%s: bf16 output %d is not the fp32 output rounded to nearest even", sh.name(), i)
				break
			}
		}
		if len(r.Schedules) == 0 {
			t.Logf("%s: no schedule of the space reproduces cuBLAS", sh.name())
			continue
		}
		x, w := cublasInputs(sh)
		y, err := GEMM(GEMMInput{X: x, W: w, M: r.M, K: r.K, N: r.N, Out: FP32}, r.Schedules[0], r.Rows)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(u32Bytes(f32Bits(y)), b32) {
			t.Errorf("%s: %s does not give the recorded bits", sh.name(), r.Schedules[0])
			continue
		}
		matched++
		t.Logf("%s: %s reproduces cuBLAS bit for bit on rows %v", sh.name(), r.Matches[0], r.Rows)
	}
	t.Logf("%d of %d shapes reproduced", matched, len(rec.Shapes))
}
