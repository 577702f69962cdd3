package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// ScanWords describes what a scan covers in one line:
//
//	cuda-rmsnorm rmsnorm, items 1..8192, hidden 4096, bf16 -> bf16, draws normal, boundary, heavy (seed 1)
func ScanWords(s spec.ScanSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, %s %d..%d", s.Target, s.Op, s.Dim, s.From, s.To)
	switch s.Dim {
	case spec.ScanPad:
		fmt.Fprintf(&b, " (%d real)", s.Real)
	case spec.ScanPosition:
		fmt.Fprintf(&b, " (item %d moved)", s.Watch)
	case spec.ScanPrompt:
		fmt.Fprintf(&b, " (request %d's)", s.Watch)
	}
	sh := s.Shape
	rows, n := "rows", "n"
	if o, _ := s.Op.Info(); o.Composite { // a composite's (a model route's) shape: layers, the MLP width, requests decoded together
		rows, n = "layers", "ffn"
	}
	for _, f := range []struct {
		name string
		v    int
	}{{rows, sh.Rows}, {"hidden", sh.Hidden}, {n, sh.N}, {"vocab", sh.Vocab}, {"seq_len", sh.SeqLen}, {"kv", sh.KV},
		{"heads", sh.Heads}, {"kv_heads", sh.KVHeads}, {"head_dim", sh.HeadDim}, {"requests", sh.Seqs}} {
		if f.v != 0 {
			fmt.Fprintf(&b, ", %s %d", f.name, f.v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sh.Dims)) { // an op package's sizes
		fmt.Fprintf(&b, ", %s %d", k, sh.Dims[k])
	}
	ds := make([]string, len(s.Dists))
	for i, d := range s.Dists {
		ds[i] = string(d)
	}
	if s.Out == "" { // an op package's op declares its output columns
		fmt.Fprintf(&b, ", %s, draws %s (seed %d)", s.In, strings.Join(ds, ", "), s.Seed)
	} else {
		fmt.Fprintf(&b, ", %s -> %s, draws %s (seed %d)", s.In, s.Out, strings.Join(ds, ", "), s.Seed)
	}
	if s.NoTaps {
		b.WriteString(", outputs only")
	}
	return b.String()
}

// CertificateText writes a certificate in words:
//
//	certificate cert-0123456789abcdef.json: valid (checked 2026-12-03T08:00:00Z)
//	  scan     cuda-rmsnorm rmsnorm, items 1..8192, hidden 4096, bf16 -> bf16, draws normal, boundary (seed 1)
//	  compared 67125248 rows in 16386 batches: 0 differ (1.9s)
//	  target   schedule threads=32 vec=4 ..., kernel hash 1a2b...
//	  env      NVIDIA H200, cc 9.0, driver ..., go1.26
func CertificateText(w io.Writer, name string, c *spec.Certificate) {
	fmt.Fprintf(w, "certificate %s: %s", name, c.Status.State)
	if !c.Status.Checked.IsZero() {
		fmt.Fprintf(w, " (checked %s)", c.Status.Checked.Format("2006-01-02T15:04:05Z07:00"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  scan     %s\n", ScanWords(c.Scan))
	fmt.Fprintf(w, "  compared %d rows in %d batches: %d differ (%s)\n", c.RowsCompared, c.Batches, c.Differing, time.Duration(c.Elapsed).Round(time.Millisecond))
	fmt.Fprintf(w, "  target   schedule %s", orNone(c.Schedule))
	if c.KernelHash != "" {
		fmt.Fprintf(w, ", kernel hash %s", c.KernelHash)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  env      %s\n", words.Env(c.Env))
	if c.Status.State == spec.CertInvalid {
		fmt.Fprintf(w, "  invalid  since %s on %s: %s\n", c.Status.InvalidAt.Format("2006-01-02T15:04:05Z07:00"),
			words.Env(deref(c.Status.InvalidEnv)), c.Status.Reason)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none declared)"
	}
	return s
}

func deref(e *spec.Env) spec.Env {
	if e == nil {
		return spec.Env{}
	}
	return *e
}
