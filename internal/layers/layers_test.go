package layers

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/bitparity/bitparity/"

// allowed lists, for every package of the module, the packages of the
// module it may import (besides the standard library and third-party
// modules). Imports point down: oracle and spec import nothing of ours;
// target (the vocabulary every target implements) only them; gpu, a
// target kind, only target, oracle, spec and what it computes exactly as
// the host does (values, boundary), never the engine; the engine (fuzz)
// sits above them; corpus, verdict (above corpus), reports and fuzztest
// above the engine; the command above everything. A new package must be
// added here, with its layer (layer, folders_test.go), and a row to
// docs/architecture.md's package table (its holds text; TestLayerTable's
// -update fills in the rest).
var allowed = map[string][]string{
	"oracle":                 {},
	"spec":                   {},
	"internal/atomicfile":    {},
	"internal/cctest":        {},
	"internal/layers":        {},
	"internal/gofuzzfile":    {"spec"},
	"internal/s3test":        {},
	"internal/pythontest":    {},
	"internal/gogc":          {},
	"internal/lifecycle":     {"internal/gogc"},
	"internal/npy":           {"internal/atomicfile"},
	"internal/golden":        {},
	"scripts":                {},
	"target":                 {"oracle", "spec", "ops", "ops/all", "ops/rmsnorm", "ops/gemm", "ops/logprob", "ops/attention"},
	"gpu":                    {"target", "oracle", "spec", "values", "boundary", "ops", "ops/all", "ops/moeroute", "ops/quantfp8", "ops/rmsnorm", "ops/gemm", "ops/logprob", "ops/attention"},
	"values":                 {"oracle", "spec"},
	"boundary":               {"oracle"},
	"power":                  {"oracle", "spec"},
	"ops":                    {"oracle", "spec", "values", "power"},
	"ops/moeroute":           {"ops", "oracle", "spec"},
	"ops/quantfp8":           {"ops", "oracle", "spec"},
	"ops/moerouter":          {"ops", "ops/moeroute", "oracle", "spec", "values"},
	"ops/rmsnorm":            {"ops", "oracle", "spec", "boundary", "values", "power"},
	"ops/gemm":               {"ops", "oracle", "spec", "boundary", "values", "power"},
	"ops/logprob":            {"ops", "oracle", "spec", "boundary", "values", "power"},
	"ops/attention":          {"ops", "oracle", "spec", "boundary", "values"},
	"ops/all":                {"ops", "ops/moeroute", "ops/moerouter", "ops/quantfp8", "ops/rmsnorm", "ops/gemm", "ops/logprob", "ops/attention", "spec"},
	"fuzz/driftmap":          {"spec"},
	"fuzz/gen":               {"spec", "ops", "ops/all"},
	"fuzz/shrink":            {"fuzz/gen", "spec"},
	"fuzz/internal/skiptest": {},
	"fuzz/internal/casecost": {"spec", "ops/all"},
	"fuzz/internal/taps":     {},
	"fuzz/external":          {"target", "oracle", "spec", "fuzz", "fuzz/transformer", "fuzz/driftmap", "ops", "ops/all", "ops/attention", "values"},
	"fuzz/external/workers":  {"fuzz/external", "gpu", "target", "spec"},
	"fuzz":                   {"fuzz/mapper", "fuzz/relate", "fuzz/inputs", "target", "spec", "fuzz/gen", "fuzz/shrink", "fuzz/internal/casecost", "fuzz/internal/taps"},
	"fuzz/mapper":            {"fuzz/relate", "fuzz/inputs", "fuzz/driftmap", "target", "oracle", "spec", "ops/all"},
	"fuzz/relate":            {"fuzz/inputs", "fuzz/internal/taps", "ops/all", "ops/logprob", "oracle", "spec", "target"},
	"fuzz/inputs":            {"ops", "ops/all", "ops/attention", "ops/gemm", "oracle", "power", "spec", "target", "values", "boundary", "fuzz/gen"},
	"fuzz/native":            {"fuzz/relate", "fuzz", "target", "spec", "ops/all", "fuzz/driftmap", "fuzz/gen", "fuzz/shrink", "internal/atomicfile", "internal/gofuzzfile", "reports/words"},
	"fuzz/transformer":       {"fuzz", "spec", "fuzz/transformer/internal/e2e"},
	"fuzz/detect":            {"fuzz/relate", "fuzz", "target", "oracle", "spec", "fuzz/gen", "fuzz/internal/casecost", "fuzz/internal/taps", "ops", "ops/all", "ops/logprob"},
	"explain":                {"fuzz", "fuzz/inputs", "fuzz/mapper", "target", "oracle", "spec", "fuzz/driftmap", "ops/all"},
	"profile":                {"spec", "ops", "ops/all"},
	"scan":                   {"corpus", "ops", "ops/all", "ops/attention", "ops/rmsnorm", "ops/gemm", "fuzz", "fuzz/inputs", "target", "oracle", "spec", "fuzz/driftmap", "power", "gpu", "fuzz/external", "profile", "reports", "reports/words", "internal/atomicfile", "internal/npy"},
	"reports/words":          {"spec"},
	"reports":                {"spec", "oracle", "internal/atomicfile", "reports/words"},
	"corpus":                 {"fuzz", "fuzz/external", "target", "spec", "fuzz/gen", "fuzz/native", "fuzz/shrink", "fuzz/driftmap", "internal/atomicfile", "internal/gofuzzfile", "reports/words", "ops", "ops/all"},
	"verdict":                {"corpus", "fuzz", "fuzz/external", "target", "spec", "internal/atomicfile", "reports/words"},
	"fuzztest": {"fuzz/relate", "corpus", "verdict", "fuzz", "target", "spec", "fuzz/external", "fuzz/gen", "fuzz/native", "fuzz/shrink",
		"internal/atomicfile", "internal/gofuzzfile", "reports/words"},
	"slurm":         {"verdict", "corpus", "fuzz", "spec", "internal/atomicfile"},
	"cmd/bitparity": {"*"},

	// The end-to-end transformer's internals, under fuzz/transformer.
	"fuzz/transformer/internal/e2e": {"fuzz", "target", "oracle", "spec", "fuzz/driftmap", "ops", "ops/moeroute", "ops/rmsnorm", "ops/gemm", "ops/attention"},
}

// TestImportRule fails on an import the table above does not allow, in
// the CPU build and in the cuda build (go list reads build tags without
// compiling, so no CUDA is needed), and on a package the table lacks.
func TestImportRule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	for _, build := range builds() {
		tags, out := goList(t, build)
		for _, fields := range out {
			pkg := strings.TrimPrefix(fields[0], module)
			ok, known := allowed[pkg]
			if !known {
				t.Errorf("package %s is not in the import rule (internal/layers): give it a layer", pkg)
				continue
			}
			for _, imp := range fields[1:] {
				dep, ours := strings.CutPrefix(imp, module)
				if !ours || slices.Contains(ok, "*") || slices.Contains(ok, dep) {
					continue
				}
				t.Errorf("%s imports %s (tags %q): not allowed by the import rule (docs/architecture.md)", pkg, dep, tags)
			}
			if slices.Contains(fields[1:], module+"cmd/bitparity") {
				t.Errorf("%s imports the command", pkg)
			}
		}
	}
}

// builds are the two builds the import rules hold in: the CPU build and the
// cuda build. BITPARITY_BUILD_TAGS (make test-gpu sets it to GPUTAGS): tags
// other than cuda apply to both (nocloud, where the module copy has no
// cloud SDKs).
func builds() [][]string {
	var extra []string
	for _, tag := range strings.Split(os.Getenv("BITPARITY_BUILD_TAGS"), ",") {
		if tag = strings.TrimSpace(tag); tag != "" && tag != "cuda" {
			extra = append(extra, tag)
		}
	}
	return [][]string{extra, append([]string{"cuda"}, extra...)}
}

// goList lists every package of the module in the build with tags: one
// entry per package, its import path followed by its imports. go list
// reads build tags without compiling, so no CUDA is needed.
func goList(t *testing.T, tags []string) (string, [][]string) {
	t.Helper()
	joined := strings.Join(tags, ",")
	cmd := exec.Command("go", "list", "-tags", joined, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %q: %v\n%s", joined, err, stderr.String())
	}
	var pkgs [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkgs = append(pkgs, strings.Fields(line))
	}
	return joined, pkgs
}
