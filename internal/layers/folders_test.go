package layers

import (
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// layer is each package's layer, the table of docs/architecture.md
// ("Packages, bottom up"): a package may import only packages of its own
// layer or below (TestLayers checks allowed against it).
var layer = map[string]int{
	"oracle": 0, "spec": 0,
	"internal/atomicfile": 0, "internal/gofuzzfile": 0, "internal/s3test": 0, "internal/pythontest": 0,
	"internal/cctest": 0, "internal/layers": 0, "internal/gogc": 0, "internal/npy": 0, "internal/lifecycle": 0, "internal/golden": 0,
	"scripts": 0,

	"target": 1, "reports/words": 1, "values": 1, "boundary": 1, "power": 1,
	"ops": 1, "ops/moeroute": 1, "ops/moerouter": 1, "ops/quantfp8": 1, "ops/all": 1,
	"ops/rmsnorm": 1, "ops/gemm": 1, "ops/logprob": 1, "ops/attention": 1,

	"gpu": 2, "profile": 2, "fuzz/gen": 2, "fuzz/shrink": 2, "fuzz/driftmap": 2, "fuzz/inputs": 2,

	"fuzz": 3, "fuzz/mapper": 3, "fuzz/relate": 3, "fuzz/internal/casecost": 3, "fuzz/internal/taps": 3, "fuzz/internal/skiptest": 3,

	"fuzz/native": 4, "fuzz/transformer": 4, "fuzz/transformer/internal/e2e": 4,
	"fuzz/detect": 4, "fuzz/external": 4, "fuzz/external/workers": 5, "explain": 4, "reports": 4,

	"scan": 5, "corpus": 5, "verdict": 5, "fuzztest": 5,

	"slurm": 6,

	"cmd/bitparity": 6,
}

// TestLayers fails on a package of the import rule without a layer (or a
// layer without a package) and on an allowed import of a higher layer.
func TestLayers(t *testing.T) {
	for pkg, deps := range allowed {
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer (internal/layers/folders_test.go, docs/architecture.md)", pkg)
			continue
		}
		for _, d := range deps {
			if d != "*" && layer[d] > l {
				t.Errorf("%s (layer %d) may import %s (layer %d): imports point down", pkg, l, d, layer[d])
			}
		}
	}
	for pkg := range layer {
		if _, ok := allowed[pkg]; !ok {
			t.Errorf("layer lists %s, which the import rule does not", pkg)
		}
	}
}

// TestFolders fails on a package whose folder lies inside the folder of a
// package P (an ancestor folder that is a package) without being one of:
//
//   - an extension of P: it imports P (fuzz/native, fuzz/external,
//     fuzz/transformer, fuzz/detect under fuzz);
//   - a part of P: its layer is at most P's, and every package outside
//     P's folder that imports it has P's layer or above, so it serves only
//     what may use P (fuzz/gen, fuzz/driftmap, fuzz/inputs under fuzz; reports/words
//     under reports).
//
// A package that a lower layer needs (gpu needs values and boundary) thus
// has a folder of its own, not one inside the engine's.
func TestFolders(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	imports := map[string][]string{} // package -> packages of ours it imports, both builds
	for _, build := range builds() {
		_, out := goList(t, build)
		for _, fields := range out {
			pkg := strings.TrimPrefix(fields[0], module)
			for _, imp := range fields[1:] {
				if dep, ours := strings.CutPrefix(imp, module); ours && !slices.Contains(imports[pkg], dep) {
					imports[pkg] = append(imports[pkg], dep)
				}
			}
			if _, ok := imports[pkg]; !ok {
				imports[pkg] = nil
			}
		}
	}
	for _, e := range folderErrors(imports, layer) {
		t.Error(e)
	}
}

// folderErrors returns TestFolders' complaints about the packages of
// imports (package -> the packages of ours it imports), each package
// checked against its nearest ancestor folder that is a package.
func folderErrors(imports map[string][]string, layer map[string]int) []string {
	var errs []string
	inside := func(pkg, folder string) bool { return strings.HasPrefix(pkg, folder+"/") }
	pkgs := make([]string, 0, len(imports))
	for pkg := range imports {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		dir := path.Dir(pkg)
		for ; dir != "."; dir = path.Dir(dir) {
			if _, isPkg := imports[dir]; isPkg {
				break
			}
		}
		if dir == "." || slices.Contains(imports[pkg], dir) {
			continue // at the top, or an extension of dir
		}
		if layer[pkg] > layer[dir] {
			errs = append(errs, fmt.Sprintf("%s (layer %d) lies inside %s (layer %d) and does not import it: give it a folder of its layer", pkg, layer[pkg], dir, layer[dir]))
			continue
		}
		for _, user := range pkgs {
			if slices.Contains(imports[user], pkg) && user != dir && !inside(user, dir) && layer[user] < layer[dir] {
				errs = append(errs, fmt.Sprintf("%s (layer %d) imports %s, which lies inside %s (layer %d): move %s to a folder of its layer", user, layer[user], pkg, dir, layer[dir], pkg))
			}
		}
	}
	return errs
}

// TestFolderErrors: the layout before values, boundary and detect had
// folders of their layers gives exactly the complaints TestFolders makes.
func TestFolderErrors(t *testing.T) {
	imports := map[string][]string{
		"spec":                 nil,
		"gpu":                  {"spec", "fuzz/values", "fuzz/boundary"},
		"fuzz":                 {"spec", "fuzz/values", "fuzz/boundary", "fuzz/gen"},
		"fuzz/gen":             {"spec"},
		"fuzz/values":          {"spec"},
		"fuzz/boundary":        {"spec"},
		"fuzz/boundary/detect": {"fuzz", "fuzz/gen"},
		"fuzz/native":          {"fuzz", "fuzz/gen"},
		"cmd/bitparity":        {"fuzz", "fuzz/boundary/detect", "gpu"},
	}
	layer := map[string]int{"spec": 0, "fuzz/values": 1, "fuzz/boundary": 1, "gpu": 2, "fuzz/gen": 2,
		"fuzz": 3, "fuzz/boundary/detect": 4, "fuzz/native": 4, "cmd/bitparity": 6}
	got := folderErrors(imports, layer)
	want := []string{
		"gpu (layer 2) imports fuzz/boundary, which lies inside fuzz (layer 3): move fuzz/boundary to a folder of its layer",
		"fuzz/boundary/detect (layer 4) lies inside fuzz/boundary (layer 1) and does not import it: give it a folder of its layer",
		"gpu (layer 2) imports fuzz/values, which lies inside fuzz (layer 3): move fuzz/values to a folder of its layer",
	}
	if !slices.Equal(got, want) {
		t.Errorf("folderErrors:\n got %q\nwant %q", got, want)
	}
}
