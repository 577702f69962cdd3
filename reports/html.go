package reports

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// maxPlotted is the most findings that get their own drift map and heatmap
// on the HTML page; the others are listed in words only (the page says so).
const maxPlotted = 50

type htmlFinding struct {
	Entry
	Title  string
	Drift  template.URL
	Heat   template.URL
	Values [][2]string // drift classes: label, values
}

type htmlPage struct {
	R        *Report
	Tonight  Input
	Trend    template.URL
	ULP      template.URL
	ULPRows  int
	Findings []htmlFinding
	Omitted  int
	Failing  []Cell
	Passing  []Cell
}

// writeHTML writes one self-contained page: every plot is a PNG in a data:
// URI, the style sheet is inline, there is no script and no external URL.
// All text from result files goes through html/template escaping.
func writeHTML(w io.Writer, r *Report) error {
	pg := htmlPage{R: r}
	if n := len(r.Inputs); n > 0 {
		pg.Tonight = r.Inputs[n-1]
	}
	var err error
	if pg.Trend, err = render(trendPlot(r.Trend))(plotW, plotH); err != nil {
		return err
	}
	var active []Entry
	for _, e := range r.Findings {
		if e.Status == StatusNew || e.Status == StatusStillFailing {
			active = append(active, e)
		}
	}
	hist, n, err := ulpHistogram(active)
	if err != nil {
		return err
	}
	pg.ULPRows = n
	if pg.ULP, err = render(hist, nil)(plotW, plotH); err != nil {
		return err
	}
	for i, e := range r.Findings {
		hf := htmlFinding{Entry: e, Title: findingTitle(e.Finding)}
		if d := e.Finding.DriftMap; d != nil {
			for j, cl := range d.Classes {
				l := cl.Label
				if l == "" {
					l = classLetter(j)
				}
				hf.Values = append(hf.Values, [2]string{l, words.Ints(cl.Values, 40)})
			}
		}
		if i < maxPlotted {
			if e.Finding.DriftMap != nil && len(e.Finding.DriftMap.Classes) > 0 {
				if hf.Drift, err = render(driftPlot(e.Finding.DriftMap))(plotW, plotH); err != nil {
					return fmt.Errorf("finding %s: %w", e.Signature, err)
				}
			}
			if hf.Heat, err = render(heatmap(e.Finding.Mismatches))(plotW, heatH); err != nil {
				return fmt.Errorf("finding %s: %w", e.Signature, err)
			}
		} else {
			pg.Omitted++
		}
		pg.Findings = append(pg.Findings, hf)
	}
	for _, c := range r.Cells {
		if c.Status == CellPass {
			pg.Passing = append(pg.Passing, c)
		} else {
			pg.Failing = append(pg.Failing, c)
		}
	}
	return pageTemplate.Execute(w, pg)
}

// render turns a plot (or nil: no plot) into a data: URI.
func render(p *plot.Plot, err error) func(w, h vg.Length) (template.URL, error) {
	return func(w, h vg.Length) (template.URL, error) {
		if err != nil || p == nil {
			return "", err
		}
		uri, err := pngDataURI(p, w, h)
		// The URI is built here from our own PNG bytes, never from input.
		return template.URL(uri), err
	}
}

func findingTitle(f spec.Finding) string {
	t := fmt.Sprintf("%s · %s · %s", words.Dash(string(f.Case.Op)), words.Dash(f.Relation), words.Dash(f.TargetA))
	if f.TargetB != "" {
		t += " vs " + f.TargetB
	}
	return t
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"stamp":  stamp,
	"span":   span,
	"status": func(s string) string { return strings.ToLower(statusWords[s]) },
	"date":   func(e Entry) string { return e.FirstSeen.UTC().Format("2006-01-02") },
	"repro":  repro,
	"caseWords": func(c spec.Case) string {
		return words.Case(c)
	},
	"label":  targetLabel,
	"joined": func(s []string) string { return words.Dash(strings.Join(s, ", ")) },
	"dash":   func(v any) string { return words.Dash(fmt.Sprint(v)) },
	"value":  words.Value,
}).Parse(pageHTML))

// pageStart and pageCSS begin every HTML page the reports write (the
// report's and the scan report's): the document's head up to its title,
// and the style of its body, headings and meta line.
const (
	pageStart = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
`
	pageCSS = `body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1000px; padding: 1em 1.5em; color: #1b1b1b; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
.meta { color: #555; }
`
)

const pageHTML = pageStart + `<title>bitparity: {{.R.Summary.Unexpected}} unexpected ({{.R.Summary.NewUnexpected}} new), {{.R.Summary.New}} new, {{.R.Summary.StillFailing}} still failing, {{.R.Summary.Fixed}} fixed</title>
<style>
` + pageCSS + `.counts span { display: inline-block; padding: 0.25em 0.7em; margin: 0.3em 0.4em 0.3em 0; border-radius: 1em; font-weight: 600; }
.b-new, .s-new, .c-fail { background: #fbd5d5; color: #8a1010; }
.b-still_failing, .s-still_failing { background: #ffe4c2; color: #7a4100; }
.b-fixed, .s-fixed, .c-pass { background: #d3f2d3; color: #135c13; }
.b-not_rerun, .s-not_rerun, .c-not_run { background: #e8e8e8; color: #444; }
.c-crash, .c-interrupted { background: #5c1010; color: #fff; }
.b-expected, .c-expected, .expected { background: #dde8f7; color: #1d3f6e; }
.status { font-size: 0.8em; font-weight: 700; padding: 0.1em 0.5em; border-radius: 0.6em; text-transform: uppercase; white-space: nowrap; }
table { border-collapse: collapse; margin: 0.5em 0; }
td { overflow-wrap: anywhere; }
th { white-space: nowrap; }
th, td { text-align: left; padding: 0.25em 0.6em; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.finding { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; margin: 1em 0; }
.finding h3 { margin: 0.2em 0; font-size: 1.1em; }
pre, code { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
img.plot { display: block; max-width: 100%; height: auto; margin: 0.5em 0; }
</style>
</head>
<body>
<h1>bitparity report</h1>
<p class="meta">Tonight: {{stamp .Tonight.Started}} · {{span .Tonight.Duration}} · {{.Tonight.Cases}} cases · seed {{.Tonight.Seed}} · {{.R.Summary.Targets}} targets · {{.Tonight.Path}}<br>
Generated {{stamp .R.Generated}} · report schema {{.R.Version}} · bitparity {{dash .Tonight.Env.Bitparity}} · {{dash .Tonight.Env.GPU}} {{.Tonight.Env.OS}}/{{.Tonight.Env.Arch}}</p>
{{if .R.Summary.Interrupted}}<p class="counts"><span class="b-new">interrupted: a signal stopped tonight's campaign before its end; its counts and findings cover the cases it ran, and it is not a pass</span></p>
{{end}}<p class="counts">{{if .R.Summary.Unexpected}}<span class="b-new">{{.R.Summary.Unexpected}} unexpected ({{.R.Summary.NewUnexpected}} new)</span>{{else}}<span class="b-fixed">nothing unexpected</span>{{end}}<span class="b-expected">{{.R.Summary.Expected}} expected on negative controls</span><span class="{{if .R.Summary.NewUnexpected}}b-new{{else}}b-expected{{end}}">{{.R.Summary.New}} new</span><span class="{{if .R.Summary.Unexpected}}b-still_failing{{else}}b-expected{{end}}">{{.R.Summary.StillFailing}} still failing</span><span class="b-fixed">{{.R.Summary.Fixed}} fixed</span>{{if .R.Summary.NotSeen}}<span class="b-not_rerun">{{.R.Summary.NotSeen}} not seen</span>{{end}}{{if .R.Summary.NotRerun}}<span class="b-not_rerun">{{.R.Summary.NotRerun}} not rerun</span>{{end}}<span class="{{if .R.Summary.CellsFailing}}b-new{{else}}b-fixed{{end}}">{{.R.Summary.CellsFailing}} of {{.R.Summary.Cells}} cells failing</span></p>

{{if .Trend}}<h2 id="trend">Trend over {{len .R.Trend}} nights</h2>
<img class="plot" id="plot-trend" src="{{.Trend}}" alt="new, still failing and fixed findings per night">
<table><tr><th>night</th><th>cases</th><th>findings</th><th>new</th><th>still failing</th><th>fixed</th></tr>
{{range .R.Trend}}<tr><td>{{stamp .Started}}</td><td class="num">{{.Cases}}</td><td class="num">{{.Findings}}</td><td class="num">{{.New}}</td><td class="num">{{.StillFailing}}</td><td class="num">{{.Fixed}}</td></tr>
{{end}}</table>{{end}}

<h2 id="findings">Findings</h2>
{{if not .Findings}}<p>No findings: every cell passed.</p>{{else}}
<table><tr><th>status</th><th>op · relation · target</th><th>first seen</th><th>nights</th><th>drift</th></tr>
{{range $i, $f := .Findings}}<tr><td><span class="status s-{{.Status}}">{{status .Status}}</span>{{if .Expected}} <span class="status expected">expected</span>{{end}}</td><td><a href="#f{{$i}}">{{.Title}}</a></td><td>{{date .Entry}}</td><td class="num">{{.Nights}}</td><td>{{with .Finding.DriftMap}}<code>{{.Rule}}</code>{{end}}</td></tr>
{{end}}</table>
{{if .ULP}}<img class="plot" id="plot-ulps" src="{{.ULP}}" alt="histogram of the largest ulp distance of {{.ULPRows}} differing rows">{{end}}
{{range $i, $f := .Findings}}<div class="finding" id="f{{$i}}">
<h3><span class="status s-{{.Status}}">{{status .Status}}</span>{{if .Expected}} <span class="status expected">expected: negative control</span>{{end}} {{.Title}}</h3>
<p class="meta">signature <code>{{.Signature}}</code> · {{.Finding.Kind}} · first seen {{stamp .FirstSeen}}, last seen {{stamp .LastSeen}}, on {{.Nights}} night(s){{if .Finding.ShrinkSteps}} · shrunk in {{.Finding.ShrinkSteps}} steps{{end}}</p>
<p>{{.Words}}</p>
{{if eq .Finding.Kind "mismatch"}}<table><tr><th></th><th>{{dash .Finding.TargetA}}</th><th>{{if .Finding.TargetB}}{{.Finding.TargetB}}{{else}}other run{{end}}</th></tr>
<tr><th>row {{.Finding.Row}}, col {{.Finding.Col}}</th><td><code>{{value .Finding.A}}</code></td><td><code>{{value .Finding.B}}</code></td></tr></table>{{end}}
{{if .Finding.Error}}<pre>{{.Finding.Error}}</pre>{{end}}
<p>Repro:</p><pre>{{repro .Finding.Repro}}</pre>
{{with .Finding.DriftMap}}<p>Drift over <b>{{.Dim}}</b> ({{.Kind}}): <code>{{dash .Rule}}</code></p>{{end}}
{{with .Finding.Explanation}}<p>Explained: <code>{{.}}</code></p>{{end}}
{{if .Values}}<table><tr><th>class</th><th>values</th></tr>{{range .Values}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{if .Drift}}<img class="plot" src="{{.Drift}}" alt="drift map: class of the watched row against the swept dimension">{{end}}
{{if .Heat}}<img class="plot" src="{{.Heat}}" alt="differing columns by row">{{end}}
</div>
{{end}}{{if .Omitted}}<p>{{.Omitted}} finding(s) past the first 50 are shown without plots.</p>{{end}}{{end}}

<h2 id="cells">Op × relation × target</h2>
{{if .Failing}}<table><tr><th>status</th><th>op</th><th>relation</th><th>target</th><th>cases</th><th>findings</th></tr>
{{range .Failing}}<tr><td><span class="status c-{{.Status}}">{{.Status}}</span></td><td>{{dash .Op}}</td><td>{{.Relation}}</td><td>{{label .Target .Invariant}}</td><td class="num">{{.Cases}}</td><td><code>{{joined .Findings}}</code></td></tr>
{{end}}</table>{{end}}
{{if .Passing}}<details><summary>{{len .Passing}} passing cell(s)</summary><table><tr><th>op</th><th>relation</th><th>target</th><th>cases</th></tr>
{{range .Passing}}<tr><td>{{dash .Op}}</td><td>{{.Relation}}</td><td>{{label .Target .Invariant}}</td><td class="num">{{.Cases}}</td></tr>
{{end}}</table></details>{{end}}

<h2 id="inputs">Result files</h2>
<table><tr><th>started</th><th>file</th><th>cases</th><th>findings</th><th>seed</th></tr>
{{range .R.Inputs}}<tr><td>{{stamp .Started}}</td><td>{{.Path}}</td><td class="num">{{.Cases}}</td><td class="num">{{.Findings}}</td><td class="num">{{.Seed}}</td></tr>
{{end}}</table>
</body>
</html>
`
