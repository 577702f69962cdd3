package spec

import (
	"encoding/json"
	"strings"
)

// ShellQuote returns s as one word of a POSIX shell command line: s itself
// when it is non-empty and made only of characters no shell treats
// specially (letters, digits and -_./=:,+@%), else s in single quotes, each
// quote inside closed, escaped and reopened:
//
//	it's $HOME  ->  'it'\''s $HOME'
//
// Inside single quotes every byte is literal ($, `, \, " and newlines
// included), so sh -c "printf %s "+ShellQuote(s) prints s.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe are the bytes ShellQuote leaves unquoted.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%"

// ShellJoin quotes each of words with ShellQuote and joins them with spaces.
func ShellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}

// ReproLine is the one-line shell command that re-runs case c, the repro
// line every finding carries:
//
//	bitparity run [--exec ADAPTER]... --case 'CASE JSON'
//
// with one --exec for each adapter command line in execs (the adapters
// serving c's exec: targets, which must be started to run it), each word
// quoted by ShellQuote.
func ReproLine(c Case, execs ...string) string {
	var b strings.Builder
	b.WriteString("bitparity run")
	for _, e := range execs {
		b.WriteString(" --exec " + ShellQuote(e))
	}
	js, err := json.Marshal(c)
	if err != nil {
		b.WriteString(" --case <unencodable case: " + err.Error() + ">")
		return b.String()
	}
	b.WriteString(" --case " + ShellQuote(string(js)))
	return b.String()
}

// ReproFile is the one-line shell command that replays a stored case file:
// bitparity repro 'PATH'.
func ReproFile(path string) string { return "bitparity repro " + ShellQuote(path) }
