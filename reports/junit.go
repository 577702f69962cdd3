package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/bitparity/bitparity/reports/words"
)

// JUnit XML, in the shape Jenkins, GitLab and GitHub test reporters read:
// one <testsuite> per op, one <testcase> per op x relation x target of
// tonight's campaign. A failing cell carries a <failure> (mismatch, misuse)
// or an <error> (crash) whose text is each finding in words with its status
// across nights and its repro command; a target that ran no case is
// <skipped>. A cell whose findings are all expected (negative controls)
// passes and names them in <system-out>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(w io.Writer, r *Report) error {
	byID := map[string]Entry{}
	for _, e := range r.Findings {
		byID[e.Identity] = e
	}
	root := junitSuites{Name: "bitparity", Time: seconds(time.Duration(r.Summary.Duration))}
	var props []junitProperty
	if n := len(r.Inputs); n > 0 {
		in := r.Inputs[n-1]
		props = []junitProperty{
			{"result", in.Path},
			{"seed", strconv.FormatUint(in.Seed, 10)},
			{"cases", strconv.FormatInt(in.Cases, 10)},
			{"bitparity", in.Env.Bitparity},
			{"gpu", in.Env.GPU},
		}
		if in.Interrupted {
			props = append(props, junitProperty{"interrupted", "true"})
		}
	}
	suiteIdx := map[string]int{}
	for _, c := range r.Cells {
		op := string(c.Op)
		if op == "" {
			op = "unknown-op"
		}
		i, ok := suiteIdx[op]
		if !ok {
			i = len(root.Suites)
			suiteIdx[op] = i
			root.Suites = append(root.Suites, junitSuite{
				Name: "bitparity/" + op, Timestamp: stamp(r.Summary.Started), Properties: props,
			})
		}
		s := &root.Suites[i]
		tc := junitCase{Name: c.Relation + "/" + c.Target, Classname: "bitparity." + op}
		switch c.Status {
		case CellFail, CellCrash:
			p := &junitProblem{Type: "mismatch"}
			var texts, msgs []string
			for _, sig := range c.Findings {
				e := byID[sig]
				if e.Finding.Kind != "" {
					p.Type = string(e.Finding.Kind)
				}
				msgs = append(msgs, fmt.Sprintf("%s (%s)", problemLine(e), strings.ReplaceAll(e.Status, "_", " ")))
				texts = append(texts, fmt.Sprintf("%s [%s, first seen %s, signature %s]\n%s\nrepro: %s",
					statusWords[e.Status], e.Finding.Kind, stamp(e.FirstSeen), e.Signature, e.Words, repro(e.Finding.Repro)))
			}
			p.Message = strings.Join(msgs, "; ")
			p.Text = strings.Join(texts, "\n\n")
			if c.Status == CellCrash {
				p.Type = "crash"
				tc.Error = p
				s.Errors++
			} else {
				tc.Failure = p
				s.Failures++
			}
		case CellExpected:
			var texts []string
			for _, sig := range c.Findings {
				e := byID[sig]
				texts = append(texts, fmt.Sprintf("expected (negative control) %s [%s, signature %s]: %s",
					strings.ReplaceAll(e.Status, "_", " "), e.Finding.Kind, e.Signature, e.Words))
			}
			tc.SystemOut = strings.Join(texts, "\n")
		case CellNotRun:
			tc.Skipped = &junitSkipped{Message: "the target ran no case"}
			s.Skipped++
		case CellInterrupted:
			tc.Error = &junitProblem{Type: "interrupted", Message: fmt.Sprintf("the campaign was interrupted after %d case(s) of this target: not a pass", c.Cases),
				Text: "a signal stopped the campaign before its end; nothing was found in the cases it ran"}
			s.Errors++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	for _, s := range root.Suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	return encodeJUnit(w, root)
}

// problemLine is the short failure message: the first diverging element
// for a mismatch, the error for a crash.
func problemLine(e Entry) string {
	return words.Problem(e.Finding)
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// encodeJUnit writes root as an indented XML document after the XML
// header, ending in a newline.
func encodeJUnit(w io.Writer, root any) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
