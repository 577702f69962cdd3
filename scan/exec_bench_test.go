package scan

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// benchExec is the scan BenchmarkScanExec measures: the kit's exact NumPy
// RMSNorm (adapters/numpy_ops.py), rows 1..256 at hidden 256, bf16, one
// normal draw.
var benchExec = spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 256, Shape: spec.Shape{Hidden: 256},
	Dists: []spec.Dist{spec.DistNormal}, Seed: 1}

// rowsChecked is the rows a scan of items 1..n certifies on one draw
// (every row of every batch, and the reference batch's rows against the
// rows alone), as scripts/torch_scan.py and scripts/numpy_scan.py count
// them.
func rowsChecked(n int) int { return n*(n+1)/2 + n }

// BenchmarkScanExec measures a scan of a NumPy adapter against a plain
// NumPy loop making the same comparisons with the same op
// (scripts/numpy_scan.py): rows checked per second (rowsChecked) of
//
//	alone   the kit's default: steps compared with the items alone in
//	        the adapter, replies naming the rows that differ
//	digests BITPARITY_SCAN_AGAINST=none: every row's digest sent, as
//	        adapters before the against field answer
//	loop    the loop's own clock (inputs made before it starts)
//
// The adapter starts before the clock; each iteration is a whole scan.
//
//	go test -run '^$' -bench ScanExec -benchtime 3x ./scan/
func BenchmarkScanExec(b *testing.B) {
	py := pythontest.NumPy(b)
	for _, against := range []string{"alone", "none"} {
		name := map[string]string{"alone": "alone", "none": "digests"}[against]
		b.Run(name, func(b *testing.B) {
			target, _ := adapterTarget(b, adapter(py, "numpy_ops.py", "rmsnorm"), spec.OpRMSNorm, "BITPARITY_SCAN_AGAINST", against)
			s := benchExec
			s.Target = target
			loopScan(b, s, func(r *Result) error {
				if r.Certificate == nil {
					return fmt.Errorf("no certificate: %d rows differ", r.Differing)
				}
				return nil
			})
			b.ReportMetric(float64(rowsChecked(s.To))/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
		})
	}
	b.Run("loop", func(b *testing.B) {
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "scripts", "numpy_scan.py")
		var secs float64
		for b.Loop() {
			out, err := exec.Command(py, script, strconv.Itoa(benchExec.To), strconv.Itoa(benchExec.Shape.Hidden)).Output()
			if err != nil {
				b.Fatalf("%s: %v", script, err)
			}
			var res struct {
				Seconds float64 `json:"seconds"`
				Differ  []int   `json:"differ"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				b.Fatalf("%s printed %q: %v", script, out, err)
			}
			if len(res.Differ) > 0 {
				b.Fatalf("the loop found rows that differ at %v", res.Differ)
			}
			secs += res.Seconds
		}
		b.ReportMetric(float64(rowsChecked(benchExec.To))/(secs/float64(b.N)), "rows/s")
	})
}
