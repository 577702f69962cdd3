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

// opNames lists the non-test files outside spec and ops/ that may name an
// op constant (spec.OpXxx), each with why: a composite op's own package
// naming its op once. An op's behaviour lives in its package under ops/
// (ops.CaseOp, ops.Op), listed in ops/all; everything else asks the op
// package or reads spec's op table, so adding an op touches its package
// and the lists (docs/architecture.md, "Where a new thing goes").
var opNames = map[string]string{
	"fuzz/external/modelcase.go":            "the model route's op (ModelOp), named once",
	"fuzz/transformer/internal/e2e/case.go": "the end-to-end transformer's op (CaseOp), named once",
}

// TestOpSwitches fails on any use of an op constant (spec.OpXxx: a case
// clause, a comparison, a map key, an argument) in a non-test file
// outside spec and ops/ that opNames does not list, and on a listed file
// that no longer names one (the list must stay the truth).
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
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "spec/") || strings.HasPrefix(rel, "ops/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok && isOpConst(e) {
				found[rel]++
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no op constant at all, not even opNames': is the walk rooted at the module?")
	}
	var files []string
	for f := range found {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, ok := opNames[f]; !ok {
			t.Errorf("%s: %d use(s) of an op constant (spec.OpXxx): ask the op's package (ops/all.Case(op), ops.CaseOp) or spec's op table (spec.Op.Info) instead", f, found[f])
		}
	}
	for f, why := range opNames {
		if found[f] == 0 {
			t.Errorf("%s is listed (%s) but names no op constant: remove it from opNames", f, why)
		}
	}
}

// isOpConst reports whether e names an op constant: spec.OpXxx.
func isOpConst(e ast.Expr) bool {
	x, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := x.X.(*ast.Ident)
	return ok && id.Name == "spec" && strings.HasPrefix(x.Sel.Name, "Op") && x.Sel.Name != "Op" && x.Sel.Name != "Ops"
}
