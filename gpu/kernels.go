package gpu

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// kernelFS holds the CUDA sources, the PTX made from them and
// kernels.sha256.
//
//go:embed kernels
var kernelFS embed.FS

// Modules lists the PTX modules the package loads, one per kernels/*.cu.
var Modules = []string{"attention", "compare", "gemm", "gen", "logprob", "nudge", "probe", "rmsnorm"}

// PTX returns the embedded PTX of module name (kernels/name.ptx).
func PTX(name string) (string, error) {
	b, err := kernelFS.ReadFile("kernels/" + name + ".ptx")
	if err != nil {
		return "", fmt.Errorf("gpu: no PTX for module %s in this build (run make ptx where nvcc exists): %w", name, err)
	}
	return string(b), nil
}

// kernelFiles lists the embedded files of kernels/ whose names end in one
// of exts, sorted.
func kernelFiles(exts ...string) ([]string, error) {
	ents, err := fs.ReadDir(kernelFS, "kernels")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		for _, x := range exts {
			if strings.HasSuffix(e.Name(), x) {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names, nil
}
