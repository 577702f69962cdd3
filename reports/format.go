package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bitparity/bitparity/internal/atomicfile"
)

// Formats lists the output formats in the order WriteDir writes them, with
// the file name each gets there.
var Formats = []struct{ Name, File string }{
	{"text", "report.txt"},
	{"json", "report.json"},
	{"junit", "junit.xml"},
	{"markdown", "summary.md"},
	{"html", "report.html"},
}

// Write writes r to w in format: text, json, junit, markdown or html.
func Write(w io.Writer, r *Report, format string) error {
	return writers[*Report]{writeText, writeJUnit, writeMarkdown, writeHTML}.write(w, r, format)
}

// writers are the writers of a kind of report R, one a format of
// Formats but json, which is writeJSON for every report.
type writers[R any] struct{ text, junit, markdown, html func(io.Writer, R) error }

// write writes r to w in format (markdown also as md).
func (ws writers[R]) write(w io.Writer, r R, format string) error {
	switch format {
	case "text":
		return ws.text(w, r)
	case "json":
		return writeJSON(w, r)
	case "junit":
		return ws.junit(w, r)
	case "markdown", "md":
		return ws.markdown(w, r)
	case "html":
		return ws.html(w, r)
	}
	return fmt.Errorf("unknown report format %q (want text, json, junit, markdown or html)", format)
}

// WriteDir writes every format into dir (created if missing), each file
// atomically (a temporary file in dir, then rename), and returns the paths
// written in Formats order.
func WriteDir(dir string, r *Report) ([]string, error) {
	return writeDir(dir, func(w io.Writer, format string) error { return Write(w, r, format) })
}

// writeDir writes every format with write into dir, as WriteDir does.
func writeDir(dir string, write func(w io.Writer, format string) error) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report dir: %w", err)
	}
	var paths []string
	for _, f := range Formats {
		var buf bytes.Buffer
		if err := write(&buf, f.Name); err != nil {
			return paths, fmt.Errorf("%s report: %w", f.Name, err)
		}
		p := filepath.Join(dir, f.File)
		if err := atomicfile.Write(p, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// writeJSON writes a report (a *Report or a *ScanReport) as indented JSON
// (schema: docs/report-schema.md).
func writeJSON(w io.Writer, r any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
