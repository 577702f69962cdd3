package layers

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's package table from go list (go test ./internal/layers -run TestLayerTable -update)")

// archDoc is the page whose package table TestLayerTable holds, between
// tableStart and tableEnd.
const (
	archDoc    = "../../docs/architecture.md"
	tableStart = "<!-- package table: go test ./internal/layers -run TestLayerTable -update rewrites it from go list; write only the holds column -->"
	tableEnd   = "<!-- end of the package table -->"
)

// TestLayerTable holds docs/architecture.md's package table to go list: one
// row per package of the module (CPU and cuda builds), ordered by layer
// (the layer map) then path, with the packages of the module it imports
// (either build, tests aside) ordered the same way. The holds column is
// prose kept from the page; a package without it fails. With -update the
// table is rewritten.
func TestLayerTable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	doc, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tableStart+"\n")
	table, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s: no package table between %q and %q", archDoc, tableStart, tableEnd)
	}
	holds, err := parseHolds(table)
	if err != nil {
		t.Fatalf("%s: %v", archDoc, err)
	}
	imports := map[string][]string{}
	for _, build := range builds() {
		_, pkgs := goList(t, build)
		for _, fields := range pkgs {
			pkg := strings.TrimPrefix(fields[0], module)
			if _, ok := imports[pkg]; !ok {
				imports[pkg] = []string{}
			}
			for _, imp := range fields[1:] {
				if dep, ours := strings.CutPrefix(imp, module); ours && !slices.Contains(imports[pkg], dep) {
					imports[pkg] = append(imports[pkg], dep)
				}
			}
		}
	}
	want, err := layerTable(imports, holds)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(archDoc, []byte(before+tableStart+"\n"+want+tableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if table != want {
		t.Errorf("%s: the package table differs from go list; run go test ./internal/layers -run TestLayerTable -update\n--- page\n%s--- go list\n%s", archDoc, table, want)
	}
}

// tableHeader is the package table's header and separator.
const tableHeader = "| layer | package | holds | imports (of ours) |\n|---|---|---|---|\n"

// layerTable renders the package table: a row per package of imports
// (package -> the module's packages it imports), by layer then path.
func layerTable(imports map[string][]string, holds map[string]string) (string, error) {
	byLayer := func(a, b string) int {
		if la, lb := layer[a], layer[b]; la != lb {
			return la - lb
		}
		return strings.Compare(a, b)
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, byLayer)
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, p := range pkgs {
		l, ok := layer[p]
		if !ok {
			return "", fmt.Errorf("package %s has no layer (internal/layers/folders_test.go)", p)
		}
		h := holds[p]
		if h == "" {
			return "", fmt.Errorf("package %s has no holds text in %s's package table: add its row by hand, then -update", p, archDoc)
		}
		deps := slices.Clone(imports[p])
		slices.SortFunc(deps, byLayer)
		said := "nothing"
		if len(deps) > 0 {
			said = "`" + strings.Join(deps, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s |\n", l, p, h, said)
	}
	return b.String(), nil
}

// parseHolds reads the holds column of a package table: package -> text.
func parseHolds(table string) (map[string]string, error) {
	body, ok := strings.CutPrefix(table, tableHeader)
	if !ok {
		return nil, fmt.Errorf("the package table does not start with %q", tableHeader)
	}
	holds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if line == "" {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		if len(cells) != 4 {
			return nil, fmt.Errorf("package table row %q: %d cells, want 4", line, len(cells))
		}
		holds[strings.Trim(cells[1], "`")] = cells[2]
	}
	return holds, nil
}
