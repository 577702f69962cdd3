package reports

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// WriteScans writes scan report r to w in format: text, json, junit,
// markdown or html (the formats of Write).
func WriteScans(w io.Writer, r *ScanReport, format string) error {
	return writers[*ScanReport]{writeScanText, writeScanJUnit, writeScanMarkdown, writeScanHTML}.write(w, r, format)
}

// WriteScansDir writes every format of scan report r into dir, as
// WriteDir does for a campaign report (the same file names).
func WriteScansDir(dir string, r *ScanReport) ([]string, error) {
	return writeDir(dir, func(w io.Writer, format string) error { return WriteScans(w, r, format) })
}

// writeScanText writes the scans in words: the counts, then per scan its
// verdict and what it covers, what it compared, its drift map with the
// values of each class (or its fault), the first differing steps and
// where the corpus keeps it.
func writeScanText(w io.Writer, r *ScanReport) error {
	ew := &errWriter{w: w}
	s := r.Summary
	fmt.Fprintf(ew, "bitparity scan report (schema %d), generated %s\n", r.Version, stamp(r.Generated))
	for _, in := range r.Inputs {
		fmt.Fprintf(ew, "scan results %s: %s, %s, %d scan(s)\n", in.Path, stamp(in.Started), span(in.Duration), in.Scans)
	}
	fmt.Fprintf(ew, "scans: %d; %d certified, %d agree, %d drift, %d fault\n", s.Scans, s.Certified, s.Agree, s.Drift, s.Fault)
	for _, e := range r.Scans {
		fmt.Fprintf(ew, "\n%-9s  %s\n", verdictWords[e.Verdict], e.Words)
		if e.Fault != "" {
			fmt.Fprintf(ew, "    %s\n", e.Fault)
		} else {
			fmt.Fprintf(ew, "    %s\n", compared(e.ScanResult))
			fmt.Fprintf(ew, "    drift map: %s\n", e.MapWords)
			for _, cv := range classValues(e.Map) {
				fmt.Fprintf(ew, "      %s: %s\n", cv[0], cv[1])
			}
		}
		for i, d := range e.Diffs {
			if e.Map == nil {
				break
			}
			if i == 4 {
				fmt.Fprintf(ew, "    ... %d more differing steps\n", len(e.Diffs)-i)
				break
			}
			fmt.Fprintf(ew, "    draw %s, %s = %d: %d row(s) differ from the %s, first row %d\n", d.Draw, e.Map.Dim, d.Value, d.Rows, d.Against, d.FirstRow)
			if d.Words != "" {
				fmt.Fprintf(ew, "      %s\n", d.Words)
			}
		}
		if st := stored(e.ScanResult); st != "" {
			fmt.Fprintf(ew, "    stored: %s\n", st)
		}
	}
	return ew.err
}

// scanMark marks verdicts in Markdown.
var scanMark = map[string]string{
	spec.ScanCertified: "✅ certified",
	spec.ScanAgree:     "✅ agree",
	spec.ScanDrift:     "❌ drift",
	spec.ScanFault:     "💥 fault",
}

// writeScanMarkdown writes a Markdown summary: the counts, a table of the
// scans (verdict, target, op, range, compared, drift rule), and each map's
// classes in a details block.
func writeScanMarkdown(w io.Writer, r *ScanReport) error {
	ew := &errWriter{w: w}
	s := r.Summary
	fmt.Fprintf(ew, "## bitparity scans: %d drift, %d fault, %d certified, %d agree\n\n", s.Drift, s.Fault, s.Certified, s.Agree)
	if len(r.Scans) == 0 {
		fmt.Fprintf(ew, "No scans.\n")
		return ew.err
	}
	fmt.Fprintf(ew, "| verdict | target | op | swept | compared | drift |\n|---|---|---|---|---|---|\n")
	for _, e := range r.Scans {
		drift := ""
		switch {
		case e.Fault != "":
			drift = mdText(e.Fault)
		case e.Map != nil && e.Map.Rule != "":
			drift = mdCode(e.Map.Rule)
		}
		fmt.Fprintf(ew, "| %s | %s | %s | %s | %s | %s |\n", scanMark[e.Verdict], mdCode(e.Scan.Target), mdCode(string(e.Scan.Op)),
			mdCode(fmt.Sprintf("%s %d..%d", e.Scan.Dim, e.Scan.From, e.Scan.To)), mdText(compared(e.ScanResult)), drift)
	}
	fmt.Fprintf(ew, "\n<details><summary>Scans in words and their maps</summary>\n\n")
	for _, e := range r.Scans {
		fmt.Fprintf(ew, "- **%s** %s  \n", scanMark[e.Verdict], mdText(e.Words))
		if e.MapWords != "" {
			fmt.Fprintf(ew, "  drift map: %s  \n", mdCode(e.MapWords))
			for _, cv := range classValues(e.Map) {
				fmt.Fprintf(ew, "  %s: %s  \n", mdCode(cv[0]), mdText(cv[1]))
			}
		}
		if st := stored(e.ScanResult); st != "" {
			fmt.Fprintf(ew, "  stored: %s\n", mdText(st))
		}
	}
	fmt.Fprintf(ew, "\n</details>\n")
	return ew.err
}

// writeScanJUnit writes JUnit XML: one <testsuite> per op, one
// <testcase> per scan; a drift is a <failure> with the map in words, a
// fault an <error>.
func writeScanJUnit(w io.Writer, r *ScanReport) error {
	root := junitSuites{Name: "bitparity-scan"}
	var total time.Duration
	suiteIdx := map[string]int{}
	for _, e := range r.Scans {
		total += time.Duration(e.Elapsed)
		op := string(e.Scan.Op)
		i, ok := suiteIdx[op]
		if !ok {
			i = len(root.Suites)
			suiteIdx[op] = i
			root.Suites = append(root.Suites, junitSuite{Name: "bitparity-scan/" + op, Timestamp: stamp(r.Inputs[e.Input].Started)})
		}
		st := &root.Suites[i]
		tc := junitCase{Name: fmt.Sprintf("%s/%s %d..%d", e.Scan.Target, e.Scan.Dim, e.Scan.From, e.Scan.To), Classname: "bitparity.scan." + op,
			SystemOut: e.Words + "\n" + compared(e.ScanResult)}
		switch e.Verdict {
		case spec.ScanDrift:
			text := []string{e.Words, compared(e.ScanResult), "drift map: " + e.MapWords}
			for _, cv := range classValues(e.Map) {
				text = append(text, cv[0]+": "+cv[1])
			}
			if s := stored(e.ScanResult); s != "" {
				text = append(text, "stored: "+s)
			}
			tc.Failure = &junitProblem{Type: "drift", Message: e.MapWords, Text: strings.Join(text, "\n")}
			st.Failures++
		case spec.ScanFault:
			tc.Error = &junitProblem{Type: "fault", Message: e.Fault, Text: e.Words + "\n" + e.Fault}
			st.Errors++
		}
		st.Tests++
		st.Cases = append(st.Cases, tc)
	}
	root.Time = seconds(total)
	for _, s := range root.Suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
	}
	return encodeJUnit(w, root)
}

type htmlScan struct {
	ScanEntry
	Compared string
	Stored   string
	Values   [][2]string // drift classes: label, values
	Drift    template.URL
}

// writeScanHTML writes one self-contained page, as writeHTML does: per
// scan its verdict, its map in words, the values of each class and the
// map drawn as a campaign finding's is (driftPlot), the first 50 scans
// with plots.
func writeScanHTML(w io.Writer, r *ScanReport) error {
	pg := struct {
		R       *ScanReport
		Scans   []htmlScan
		Omitted int
	}{R: r}
	for i, e := range r.Scans {
		hs := htmlScan{ScanEntry: e, Compared: compared(e.ScanResult), Stored: stored(e.ScanResult), Values: classValues(e.Map)}
		if i < maxPlotted {
			if e.Map != nil && len(e.Map.Classes) > 0 {
				var err error
				if hs.Drift, err = render(driftPlot(e.Map))(plotW, plotH); err != nil {
					return fmt.Errorf("scan %s: %w", e.Words, err)
				}
			}
		} else {
			pg.Omitted++
		}
		pg.Scans = append(pg.Scans, hs)
	}
	return scanPageTemplate.Execute(w, pg)
}

var scanPageTemplate = template.Must(template.New("scans").Funcs(template.FuncMap{
	"stamp":   stamp,
	"span":    span,
	"verdict": func(v string) string { return strings.ToLower(verdictWords[v]) },
}).Parse(scanPageHTML))

const scanPageHTML = pageStart + `<title>bitparity scans: {{.R.Summary.Drift}} drift, {{.R.Summary.Fault}} fault, {{.R.Summary.Certified}} certified, {{.R.Summary.Agree}} agree</title>
<style>
` + pageCSS + `.status { font-size: 0.8em; font-weight: 700; padding: 0.1em 0.5em; border-radius: 0.6em; text-transform: uppercase; white-space: nowrap; }
.v-drift { background: #fbd5d5; color: #8a1010; }
.v-fault { background: #5c1010; color: #fff; }
.v-certified, .v-agree { background: #d3f2d3; color: #135c13; }
table { border-collapse: collapse; margin: 0.5em 0; }
td { overflow-wrap: anywhere; }
th, td { text-align: left; padding: 0.25em 0.6em; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f6f6f6; white-space: nowrap; }
.scan { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; margin: 1em 0; }
.scan h3 { margin: 0.2em 0; font-size: 1.1em; }
code { font-family: ui-monospace, monospace; font-size: 0.9em; }
img.plot { display: block; max-width: 100%; height: auto; margin: 0.5em 0; }
</style>
</head>
<body>
<h1>bitparity scan report</h1>
<p class="meta">Generated {{stamp .R.Generated}} · report schema {{.R.Version}} · {{.R.Summary.Scans}} scan(s): {{.R.Summary.Drift}} drift, {{.R.Summary.Fault}} fault, {{.R.Summary.Certified}} certified, {{.R.Summary.Agree}} agree</p>
<table><tr><th>scan results</th><th>started</th><th>duration</th><th>scans</th></tr>
{{range .R.Inputs}}<tr><td>{{.Path}}</td><td>{{stamp .Started}}</td><td>{{span .Duration}}</td><td>{{.Scans}}</td></tr>
{{end}}</table>
<h2 id="scans">Scans</h2>
{{range $i, $s := .Scans}}<div class="scan" id="s{{$i}}">
<h3><span class="status v-{{.Verdict}}">{{verdict .Verdict}}</span> {{.Words}}</h3>
{{if .Fault}}<p>{{.Fault}}</p>{{else}}<p class="meta">{{.Compared}}</p>
<p>Drift over <b>{{.Map.Dim}}</b> ({{.Map.Kind}}): <code>{{.MapWords}}</code></p>{{end}}
{{if .Values}}<table><tr><th>class</th><th>values</th></tr>{{range .Values}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{if .Drift}}<img class="plot" src="{{.Drift}}" alt="drift map: class of each value of the swept dimension">{{end}}
{{if .Stored}}<p class="meta">stored: {{.Stored}}</p>{{end}}
</div>
{{end}}{{if .Omitted}}<p>{{.Omitted}} scan(s) past the first 50 are shown without plots.</p>{{end}}
</body>
</html>
`
