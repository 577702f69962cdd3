package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// Input kinds (Kind): what a file given to `bitparity report` holds.
const (
	KindCampaign = "campaign" // a campaign result (spec.Result, bitparity run --json)
	KindScan     = "scan"     // scan results (spec.ScanResults, bitparity scan --json)
)

// Kind says what the JSON document data holds, by its top-level fields:
// KindScan when its "format" is spec.ScanResultsFormat, else KindCampaign
// (Load then checks it). A JSON list is the scan --json of builds before
// the scan results schema, which this build does not read.
func Kind(data []byte) (string, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		return "", errors.New("a JSON list: the scan --json of a build before scan results had a schema; scan again with this build")
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", err
	}
	if head.Format == spec.ScanResultsFormat {
		return KindScan, nil
	}
	return KindCampaign, nil
}

// KindOf reads the file at path and says what it holds (Kind).
func KindOf(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	k, err := Kind(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ScanReport is the report on scan results files (schema in
// docs/report-schema.md, "The scan report"): every scan of every file, in
// the order given.
type ScanReport struct {
	Version   int         `json:"version"`
	Kind      string      `json:"kind"` // KindScan
	Generated time.Time   `json:"generated"`
	Inputs    []ScanInput `json:"inputs"`
	Summary   ScanSummary `json:"summary"`
	Scans     []ScanEntry `json:"scans"`
}

// ScanInput describes one scan results file.
type ScanInput struct {
	Path     string        `json:"path"`
	Started  time.Time     `json:"started"`
	Duration spec.Duration `json:"duration"`
	Env      spec.Env      `json:"env"`
	Args     []string      `json:"args,omitempty"`
	Scans    int           `json:"scans"`
}

// ScanSummary counts the scans by verdict.
type ScanSummary struct {
	Scans     int `json:"scans"`
	Certified int `json:"certified"`
	Agree     int `json:"agree"`
	Drift     int `json:"drift"`
	Fault     int `json:"fault"`
}

// ScanEntry is one scan: its result as the file states it, the index of
// its input, and the scan and its map in words.
type ScanEntry struct {
	Input int `json:"input"`
	spec.ScanResult
	Words string `json:"words"`
	// MapWords is the drift map in words (words.Drift); empty for a fault.
	MapWords string `json:"map_words,omitempty"`
}

// ScanSource is one scan results file read from disk.
type ScanSource struct {
	Path    string
	Results spec.ScanResults
}

// LoadScans reads scan results files. It refuses another format, a
// version newer than spec.ScanResultsVersion and a scan with an unknown
// verdict; fields it does not know are ignored (they are only added
// within a version).
func LoadScans(paths ...string) ([]ScanSource, error) {
	return load("scan results", paths, func(p string, r *spec.ScanResults) (ScanSource, error) {
		if r.Format != spec.ScanResultsFormat || r.Version < 1 || r.Version > spec.ScanResultsVersion {
			return ScanSource{}, fmt.Errorf("format %q version %d, this build reads %q versions 1 to %d",
				r.Format, r.Version, spec.ScanResultsFormat, spec.ScanResultsVersion)
		}
		for i, s := range r.Scans {
			switch s.Verdict {
			case spec.ScanCertified, spec.ScanAgree, spec.ScanDrift, spec.ScanFault:
			default:
				return ScanSource{}, fmt.Errorf("scan %d: verdict %q, want certified, agree, drift or fault", i, s.Verdict)
			}
		}
		return ScanSource{Path: p, Results: *r}, nil
	})
}

// BuildScans makes the report of srcs, stamped with generated.
func BuildScans(srcs []ScanSource, generated time.Time) *ScanReport {
	r := &ScanReport{Version: Version, Kind: KindScan, Generated: generated.UTC(), Inputs: []ScanInput{}, Scans: []ScanEntry{}}
	for i, src := range srcs {
		res := src.Results
		r.Inputs = append(r.Inputs, ScanInput{Path: src.Path, Started: res.Started, Duration: res.Duration,
			Env: res.Env, Args: res.Args, Scans: len(res.Scans)})
		for _, s := range res.Scans {
			e := ScanEntry{Input: i, ScanResult: s, Words: ScanWords(s.Scan)}
			if s.Map != nil {
				e.MapWords = words.Drift(s.Map)
			}
			r.Scans = append(r.Scans, e)
			switch s.Verdict {
			case spec.ScanCertified:
				r.Summary.Certified++
			case spec.ScanAgree:
				r.Summary.Agree++
			case spec.ScanDrift:
				r.Summary.Drift++
			case spec.ScanFault:
				r.Summary.Fault++
			}
		}
	}
	r.Summary.Scans = len(r.Scans)
	return r
}

// Failing reports whether a scan of the report drifted or faulted.
func (r *ScanReport) Failing() bool { return r.Summary.Drift+r.Summary.Fault > 0 }

// verdictWords says a scan verdict for people.
var verdictWords = map[string]string{
	spec.ScanCertified: "CERTIFIED",
	spec.ScanAgree:     "AGREE",
	spec.ScanDrift:     "DRIFT",
	spec.ScanFault:     "FAULT",
}

// compared says how much a scan compared and how long it took:
// "1784 row comparisons in 462 batches, 15 differ, 0.038s".
func compared(s spec.ScanResult) string {
	row := words.Compared(s.Scan.Op)
	differ := fmt.Sprintf("%d differ", s.Differing)
	if s.Differ != nil || s.Verdict == spec.ScanAgree {
		differ = fmt.Sprintf("differ at %d value(s)", len(s.Differ))
	}
	where := ""
	if s.Resident {
		where = ", resident on the device"
	}
	return fmt.Sprintf("%d %s comparisons in %d batches, %s, %s%s", s.RowsCompared, row, s.Batches, differ, span(s.Elapsed), where)
}

// classValues lists a map's classes with their values in words, as the
// campaign report's HTML does: label, values.
func classValues(m *spec.DriftMap) [][2]string {
	if m == nil {
		return nil
	}
	var out [][2]string
	for j, cl := range m.Classes {
		l := cl.Label
		if l == "" {
			l = classLetter(j)
		}
		out = append(out, [2]string{l, words.Ints(cl.Values, 40)})
	}
	return out
}

// stored names the corpus file of a scan: its certificate or its drift.
func stored(s spec.ScanResult) string {
	switch {
	case s.CertificateFile != "":
		return "certificate " + s.CertificateFile
	case s.DriftFile != "":
		return "drift " + s.DriftFile + " (corpus recheck reruns it)"
	}
	return ""
}
