package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// opSwitches lists the non-test files that may hold a `case spec.OpXxx`
// clause, each with why. What an op is (its batch dimension, the
// dimensions it reads, its element and work counts, compared columns,
// taps, fillers) is its record in spec's op table (spec/ops.go), read
// everywhere else; a switch on the op belongs only where the op's own
// work is done, and these are the places docs/architecture.md ("Where a
// new thing goes") lists for a new op.
var opSwitches = map[string]string{
	// the op's own work
	"power/family.go":          "its schedule family (power)",
}

// TestOpSwitches fails on a `case spec.OpXxx` clause (or `case OpXxx`
// inside spec) in a non-test file opSwitches does not list, and on a
// listed file that no longer has one (the list must stay the truth).
func TestOpSwitches(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		inSpec := f.Name.Name == "spec"
		ast.Inspect(f, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				if isOpConst(e, inSpec) {
					found[rel]++
					break
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no switch on an op at all: is the walk rooted at the module?")
	}
	var files []string
	for f := range found {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, ok := opSwitches[f]; !ok {
			t.Errorf("%s: %d case clause(s) on spec.Op: read the op table (spec.Op.Info) instead, or, where the op's own work is done, add the file to opSwitches and to docs/architecture.md's \"Where a new thing goes\"", f, found[f])
		}
	}
	for f, why := range opSwitches {
		if found[f] == 0 {
			t.Errorf("%s is listed (%s) but has no case clause on spec.Op: remove it from opSwitches", f, why)
		}
	}
}

// isOpConst reports whether e names an op constant: spec.OpXxx, or OpXxx
// in package spec itself.
func isOpConst(e ast.Expr, inSpec bool) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "spec" && strings.HasPrefix(x.Sel.Name, "Op")
	case *ast.Ident:
		return inSpec && strings.HasPrefix(x.Name, "Op")
	}
	return false
}
