package corpus

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

func testCert() *spec.Certificate {
	return &spec.Certificate{Scan: spec.ScanSpec{Target: "oracle-rmsnorm", Op: spec.OpRMSNorm, Dim: spec.ScanItems,
		From: 1, To: 64, Shape: spec.Shape{Hidden: 256}, In: spec.BF16, Out: spec.BF16, Dists: []spec.Dist{spec.DistNormal}, GenVersion: 1},
		RowsCompared: 4224, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Status: spec.CertificateStatus{State: spec.CertValid}}
}

func TestCertificateRoundTrip(t *testing.T) {
	d := mustDir(t)
	c := testCert()
	name, err := d.PutCertificate(c)
	if err != nil {
		t.Fatal(err)
	}
	if !IsCertName(name) || IsName(name) {
		t.Fatalf("name %q: a certificate name, never a case name", name)
	}
	got, err := d.GetCertificate(name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != spec.CertificateFormat || got.RowsCompared != 4224 || got.Scan.To != 64 {
		t.Errorf("read back %+v", got)
	}
	// a second certificate of the same scan replaces the first
	c.RowsCompared = 1
	if name2, err := d.PutCertificate(c); err != nil || name2 != name {
		t.Fatalf("second put: %s %v", name2, err)
	}
	names, err := d.Certificates()
	if err != nil || len(names) != 1 {
		t.Fatalf("certificates %v %v", names, err)
	}
	if cases, _ := d.List(); len(cases) != 0 {
		t.Errorf("case listing shows certificates: %v", cases)
	}
}

func TestCertificateRefused(t *testing.T) {
	d := mustDir(t)
	name, err := d.PutCertificate(testCert())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(d.PathOf(name))
	tests := []struct{ name, content, want string }{
		{"not json", "{", "not a certificate"},
		{"other format", strings.Replace(string(data), spec.CertificateFormat, "bitparity-case", 1), "format"},
		{"unknown field", strings.Replace(string(data), `"batches"`, `"bogus": 1, "batches"`, 1), "unknown field"},
		{"edited scan", strings.Replace(string(data), `"to": 64`, `"to": 65`, 1), "hashes to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(d.PathOf(name), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := d.GetCertificate(name); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := d.GetCertificate("0123456789abcdef.json"); err == nil {
		t.Error("a case name read as a certificate")
	}
}

// TestCertificateAdapter: a certificate of an exec: target must name its
// adapter and hello, and a recorded adapter must be the scan's target.
func TestCertificateAdapter(t *testing.T) {
	exec := func() *spec.Certificate {
		c := testCert()
		c.Scan.Target = "exec:numpy.rmsnorm"
		c.Adapter = &spec.Adapter{Target: "exec:numpy.rmsnorm", Name: "numpy.rmsnorm", Exec: "python3 adapters/numpy_ops.py rmsnorm"}
		c.Hello = map[string]string{"name": "numpy.rmsnorm", "op": "rmsnorm", "versions": "python=3.11.2 numpy=1.24.2"}
		return c
	}
	tests := []struct {
		name string
		edit func(c *spec.Certificate)
		want string // "" when it reads
	}{
		{"complete", func(c *spec.Certificate) {}, ""},
		{"no hello", func(c *spec.Certificate) { c.Hello = nil }, "without the adapter and its hello"},
		{"no adapter", func(c *spec.Certificate) { c.Adapter = nil }, "without the adapter and its hello"},
		{"another adapter", func(c *spec.Certificate) { c.Adapter.Target = "exec:torch.rmsnorm" }, "records adapter exec:torch.rmsnorm"},
		{"another op", func(c *spec.Certificate) { c.Hello["op"] = "gemm" }, `op "gemm"`},
		{"a worker", func(c *spec.Certificate) {
			c.Scan.Target, c.Adapter.Target = "kernel:mine", "kernel:mine"
		}, ""},
		{"an adapter of another target", func(c *spec.Certificate) { c.Scan.Target = "oracle-rmsnorm" }, "records adapter exec:numpy.rmsnorm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := exec()
			tt.edit(c)
			b, err := EncodeCertificate(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeCertificate("c.json", b)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
