package reports

import (
	"html"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/reports/words"
)

// TestExplanationReported: a finding's explanation (run --explain) is in
// the text, Markdown-facing words, JSON and HTML reports.
func TestExplanationReported(t *testing.T) {
	const ex = "rows % 32 == 0: threads=64 vec=8 warp=butterfly cross=sequential out=(x*rstd)*w; otherwise: threads=32 vec=4"
	srcs, err := Load(night1)
	if err != nil {
		t.Fatal(err)
	}
	fs := srcs[0].Result.Findings
	i := 0
	for i < len(fs) && fs[i].Kind != "mismatch" {
		i++
	}
	if i == len(fs) {
		t.Fatal("no mismatch finding in the fixture")
	}
	fs[i].Explanation = ex
	if w := words.Finding(fs[i]); !strings.Contains(w, "explained: "+ex) {
		t.Errorf("words lack the explanation: %s", w)
	}
	r, err := Build(srcs, generated)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "html"} {
		out := written(t, r, format)
		want := ex
		if format == "html" {
			want = html.EscapeString(ex)
		}
		if format == "json" {
			want = "threads=64 vec=8 warp=butterfly cross=sequential"
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s report lacks the explanation", format)
		}
	}
}
