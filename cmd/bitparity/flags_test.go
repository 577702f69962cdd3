package main

import (
	"flag"
	"slices"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args []string
		v    bool
		n    string
		pos  []string
	}{
		{[]string{"a.json"}, false, "", []string{"a.json"}},
		{[]string{"-v", "a.json"}, true, "", []string{"a.json"}},
		{[]string{"a.json", "-v"}, true, "", []string{"a.json"}},
		{[]string{"a", "-n", "x", "b", "-v"}, true, "x", []string{"a", "b"}},
		{[]string{"a", "--", "-v", "b"}, false, "", []string{"a", "-v", "b"}},
		{[]string{"--", "-n"}, false, "", []string{"-n"}},
		{nil, false, "", nil},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		v := fs.Bool("v", false, "")
		n := fs.String("n", "", "")
		if err := parseInterspersed(fs, tt.args); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if *v != tt.v || *n != tt.n || !slices.Equal(fs.Args(), tt.pos) && len(fs.Args())+len(tt.pos) > 0 {
			t.Errorf("%q: v=%v n=%q args %q; want %v %q %q", tt.args, *v, *n, fs.Args(), tt.v, tt.n, tt.pos)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(nopWriter{})
	if err := parseInterspersed(fs, []string{"a", "-nope"}); err == nil {
		t.Error("an unknown flag after a positional argument was accepted")
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
