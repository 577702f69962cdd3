package spec

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// shellWords are names a shell must get back unchanged: spaces, quotes of
// both kinds, $ and backquotes, backslashes, newlines, globs, a leading
// dash, the empty string.
var shellWords = []struct{ in, want string }{
	{"plain", "plain"},
	{"adapters/torch_ops.py", "adapters/torch_ops.py"},
	{"k=v,a:b+c@d%e", "k=v,a:b+c@d%e"},
	{"-n", "-n"},
	{"", "''"},
	{"two words", "'two words'"},
	{"it's", `'it'\''s'`},
	{"'", `''\'''`},
	{`say "hi"`, `'say "hi"'`},
	{"$HOME", "'$HOME'"},
	{"${x:-y} $(id) `id`", "'${x:-y} $(id) `id`'"},
	{`back\slash`, `'back\slash'`},
	{"line one\nline two", "'line one\nline two'"},
	{"*.go ?", "'*.go ?'"},
	{"~/x", "'~/x'"},
	{"a;b|c&d>e<f", "'a;b|c&d>e<f'"},
	{"tab\there", "'tab\there'"},
	{"ünïcode", "'ünïcode'"},
}

func TestShellQuote(t *testing.T) {
	for _, tc := range shellWords {
		if got := ShellQuote(tc.in); got != tc.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestShellQuoteRoundTrip: sh reads every quoted word back as the word,
// alone and joined with others.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	var all []string
	for _, tc := range shellWords {
		all = append(all, tc.in)
		out, err := exec.Command(sh, "-c", "printf %s "+ShellQuote(tc.in)).Output()
		if err != nil {
			t.Errorf("sh -c printf %%s %s: %v", ShellQuote(tc.in), err)
			continue
		}
		if string(out) != tc.in {
			t.Errorf("sh read %s as %q, want %q", ShellQuote(tc.in), out, tc.in)
		}
	}
	// one word per line, NUL-free: printf '%s\0' keeps words with newlines apart
	out, err := exec.Command(sh, "-c", `printf '%s\0' `+ShellJoin(all)).Output()
	if err != nil {
		t.Fatalf("sh -c printf ShellJoin: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(all, "|") || len(got) != len(all) {
		t.Errorf("sh split ShellJoin into %q, want %q", got, all)
	}
}

// TestReproLine: a repro line is bitparity run, an --exec per adapter and
// --case with the case as JSON, and sh splits it back into exactly those
// words (a target name with a quote, an adapter with spaces and $).
func TestReproLine(t *testing.T) {
	c := Case{Op: OpRMSNorm, Relation: RelBatchInvariance, Targets: []string{"exec:it's"}, Seed: 7,
		Shape: Shape{Rows: 3, Hidden: 64}, In: BF16, Out: BF16, Dist: "normal"}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	quoted := "'" + strings.ReplaceAll(string(js), "'", `'\''`) + "'"
	for _, tc := range []struct {
		execs []string
		want  string
	}{
		{nil, "bitparity run --case " + quoted},
		{[]string{"./adapter"}, "bitparity run --exec ./adapter --case " + quoted},
		{[]string{"python3 a.py $X", "b"}, "bitparity run --exec 'python3 a.py $X' --exec b --case " + quoted},
	} {
		got := ReproLine(c, tc.execs...)
		if got != tc.want {
			t.Errorf("ReproLine(%q) =\n%s\nwant\n%s", tc.execs, got, tc.want)
		}
		sh, err := exec.LookPath("sh")
		if err != nil {
			continue
		}
		out, err := exec.Command(sh, "-c", `bitparity() { printf '%s\0' "$@"; }; `+got).Output()
		if err != nil {
			t.Fatalf("sh -c %s: %v", got, err)
		}
		words := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		want := []string{"run"}
		for _, e := range tc.execs {
			want = append(want, "--exec", e)
		}
		want = append(want, "--case", string(js))
		if strings.Join(words, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("sh split %s into %q, want %q", got, words, want)
		}
	}
}

func TestReproFile(t *testing.T) {
	if got, want := ReproFile("cases/my case's.json"), `bitparity repro 'cases/my case'\''s.json'`; got != want {
		t.Errorf("ReproFile = %s, want %s", got, want)
	}
}
