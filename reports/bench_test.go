package reports

import (
	"fmt"
	"io"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// manyFindings is the two fixture nights with tonight's findings copied to
// n distinct ones (a different target name each, so distinct signatures).
func manyFindings(b *testing.B, n int) []Source {
	srcs, err := Load(night1, night2)
	if err != nil {
		b.Fatal(err)
	}
	base := srcs[1].Result.Findings
	var fs []spec.Finding
	for i := 0; i < n; i++ {
		f := base[i%len(base)]
		f.TargetA = fmt.Sprintf("%s-%d", f.TargetA, i)
		f.Signature = spec.Signature(f)
		fs = append(fs, f)
	}
	srcs[1].Result.Findings = fs
	return srcs
}

// BenchmarkReport builds the report of n findings and writes one format;
// the html sub-benchmarks report the page size in bytes/op.
//
//	go test -run '^$' -bench Report -benchtime 3x ./reports
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		srcs := manyFindings(b, n)
		for _, format := range []string{"text", "json", "junit", "markdown", "html"} {
			b.Run(fmt.Sprintf("findings=%d/%s", n, format), func(b *testing.B) {
				var size int64
				for i := 0; i < b.N; i++ {
					r, err := Build(srcs, generated)
					if err != nil {
						b.Fatal(err)
					}
					cw := &countWriter{}
					if err := Write(cw, r, format); err != nil {
						b.Fatal(err)
					}
					size = cw.n
				}
				b.ReportMetric(float64(size), "bytes")
			})
		}
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
