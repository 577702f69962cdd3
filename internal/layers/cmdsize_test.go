package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxCmdFunc is the most lines a function of cmd/bitparity may span, from
// its func line to its closing brace: the command parses flags and prints;
// what takes longer belongs in the package that owns it.
const maxCmdFunc = 80

// maxCmdLines is the most lines cmd/bitparity's non-test Go files (any
// build tag) may hold together.
const maxCmdLines = 2500

// TestCmdFuncLength fails on every function of cmd/bitparity's non-test Go
// files (any build tag) longer than maxCmdFunc lines, listing them all.
func TestCmdFuncLength(t *testing.T) {
	long, err := longFuncs(filepath.Join("..", "..", "cmd", "bitparity"), maxCmdFunc)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > 0 {
		t.Errorf("cmd/bitparity: %d function(s) over %d lines; move their logic to the package that owns it:\n%s",
			len(long), maxCmdFunc, strings.Join(long, "\n"))
	}
}

// TestCmdLines fails when cmd/bitparity's non-test Go files hold more
// than maxCmdLines lines together.
func TestCmdLines(t *testing.T) {
	n, err := goLines(filepath.Join("..", "..", "cmd", "bitparity"))
	if err != nil {
		t.Fatal(err)
	}
	if n > maxCmdLines {
		t.Errorf("cmd/bitparity: %d lines of non-test Go, want at most %d; move logic to the package that owns it", n, maxCmdLines)
	}
}

// TestGoLines: goLines counts every line of a folder's non-test Go files,
// a last line without its newline included.
func TestGoLines(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package a\n\nvar x = 1\n",
		"b.go":      "//go:build cuda\n\npackage a",
		"a_test.go": "package a\n\n\n\n",
		"notes.txt": "one\ntwo\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := goLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("goLines = %d, want 6", n)
	}
}

// goLines is the number of lines in dir's non-test Go files, as wc -l
// counts them plus a last line that lacks its newline.
func goLines(dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		n += strings.Count(string(b), "\n")
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
	}
	return n, nil
}

// TestLongFuncs: longFuncs counts a function from its func line to its
// closing brace, methods and function literals' enclosing function
// included, and skips test files.
func TestLongFuncs(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, n int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 1\n", n-2) + "}\n"
	}
	for name, src := range map[string]string{
		"a.go":      "package a\n\n" + body("fits", 5) + body("over", 6) + "type T struct{}\n\nfunc (T) " + body("m", 7)[5:],
		"a_test.go": "package a\n\n" + body("ignored", 50),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := longFuncs(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.go:16: T.m: 7 lines", "a.go:8: over: 6 lines"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("longFuncs = %q, want %q", got, want)
	}
}

// longFuncs lists the functions of dir's non-test Go files over limit
// lines as "FILE:LINE: NAME: N lines", longest first.
func longFuncs(dir string, limit int) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	type fn struct {
		at    string
		lines int
	}
	var long []fn
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			n := end.Line - start.Line + 1
			if n <= limit {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				name = recvName(fd.Recv.List[0].Type) + "." + name
			}
			long = append(long, fn{fmt.Sprintf("%s:%d: %s: %d lines", filepath.Base(path), start.Line, name, n), n})
		}
	}
	sort.SliceStable(long, func(i, j int) bool { return long[i].lines > long[j].lines })
	out := make([]string, len(long))
	for i, f := range long {
		out[i] = f.at
	}
	return out, nil
}

// recvName is a method receiver's type name, without * or type parameters.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
