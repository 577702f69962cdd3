package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeSkip lists the README command lines this test does not run, and
// why: only the suite that runs this test.
var readmeSkip = map[string]string{
	"make test": "the suite this test is part of",
}

// readmeExit reads the exit code a README command line documents in its
// comment ("# ... (exit 1: ...)"); 0 when it names none.
var readmeExit = regexp.MustCompile(`\(exit (\d)`)

// readmeCommand is one indented command line of README.md.
type readmeCommand struct {
	line int
	cmd  string
	exit int
}

// readmeCommands extracts the command lines of README.md's indented code
// blocks: lines indented by four spaces after a blank line, up to the
// block's end, whose first word is bitparity, make, go, python3 or an
// environment assignment; the comment after "  #" is cut off (and read for
// "(exit N"). With section set, only the blocks under the heading
// "## "+section, up to the next heading of that level, count (a page of a
// doc whose other commands need a GPU).
func readmeCommands(path string, section ...string) ([]readmeCommand, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []readmeCommand
	sc := bufio.NewScanner(fh)
	prevBlank, inBlock := true, false
	inSection := len(section) == 0 || section[0] == ""
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if len(section) > 0 && section[0] != "" && strings.HasPrefix(l, "## ") {
			inSection = strings.TrimSpace(strings.TrimPrefix(l, "## ")) == section[0]
		}
		if !inSection {
			prevBlank = strings.TrimSpace(l) == ""
			continue
		}
		indented := strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != ""
		inBlock = indented && (inBlock || prevBlank)
		prevBlank = strings.TrimSpace(l) == ""
		if !inBlock {
			continue
		}
		cmd, comment := strings.TrimSpace(l), ""
		if i := strings.Index(cmd, "  #"); i >= 0 {
			cmd, comment = strings.TrimSpace(cmd[:i]), cmd[i:]
		}
		first, _, _ := strings.Cut(cmd, " ")
		if first != "bitparity" && first != "make" && first != "go" && first != "python3" && !strings.Contains(first, "=") {
			continue
		}
		c := readmeCommand{line: n, cmd: cmd}
		if m := readmeExit.FindStringSubmatch(comment); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// TestREADMECommands runs every command line of README.md's code blocks,
// verbatim and in order, in a fresh copy of the repository's tracked files
// with a fresh build of bitparity first on PATH, and checks each exits as
// its comment documents (0 unless it says "(exit N"). It takes minutes
// (make run alone is a 60 s campaign), so it runs when BITPARITY_README=1
// (make readme); BITPARITY_README_FILE names another README to check, and
// BITPARITY_README_SECTION one "## " section of it (docs/python.md's "A
// team's first hour").
func TestREADMECommands(t *testing.T) {
	if os.Getenv("BITPARITY_README") != "1" {
		t.Skip("runs every README command for minutes: BITPARITY_README=1 (make readme)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme := os.Getenv("BITPARITY_README_FILE")
	if readme == "" {
		readme = filepath.Join(root, "README.md")
	}
	cmds, err := readmeCommands(readme, os.Getenv("BITPARITY_README_SECTION"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 5 {
		t.Fatalf("%s: %d command lines found, the extraction is broken", readme, len(cmds))
	}
	// a fresh checkout: the tracked files of the working tree
	repo := filepath.Join(t.TempDir(), "bitparity")
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src, dst := filepath.Join(root, f), filepath.Join(repo, f)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link or submodule
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "bitparity"), "./cmd/bitparity")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, c := range cmds {
		if why, ok := readmeSkip[c.cmd]; ok {
			t.Logf("README:%d %s: not run (%s)", c.line, c.cmd, why)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", c.cmd)
		cmd.Dir, cmd.Env = repo, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Errorf("README:%d %s: %v", c.line, c.cmd, err)
			continue
		}
		t.Logf("README:%d %s: exit %d in %s", c.line, c.cmd, code, time.Since(start).Round(time.Millisecond))
		if code != c.exit {
			t.Errorf("README:%d %s: exit %d, the README says %d\n%s", c.line, c.cmd, code, c.exit, tail(string(out), 3000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("...%s", s[len(s)-n:])
}

// TestREADMEExtraction: the extraction finds the command lines of a code
// block, cuts comments, reads documented exit codes and leaves prose and
// other code alone.
func TestREADMEExtraction(t *testing.T) {
	doc := "intro\n\n    make run     # the main job\n    bitparity repro x.json   # replay (exit 1: REPRODUCED)\n    not a command\n\nprose\n    indented prose without a blank line before\n\n    func Fuzz(f *testing.F) {}\n"
	path := filepath.Join(t.TempDir(), "README.md")
	os.WriteFile(path, []byte(doc), 0o644)
	got, err := readmeCommands(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeCommand{{3, "make run", 0}, {4, "bitparity repro x.json", 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}

	doc = "# Page\n\n    bitparity list\n\n## First\n\n    python3 -c 'print(1)'   # the kit\n\n## Other\n\n    bitparity scan --exec gpu\n"
	os.WriteFile(path, []byte(doc), 0o644)
	got, err = readmeCommands(path, "First")
	if err != nil {
		t.Fatal(err)
	}
	want = []readmeCommand{{7, "python3 -c 'print(1)'", 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("section First: got %v, want %v", got, want)
	}
}
