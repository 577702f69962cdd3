package words

import (
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Env says an environment in words, its known fields in this order, each
// named except the platform: "bitparity V, go V, OS/ARCH, cpu C, gpu G,
// cc X, driver D, cuda V, kernel H"; "(unknown environment)" when none is
// known. Everything that prints an environment (a case's, a fix's, a
// certificate's) says it so.
func Env(e spec.Env) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	add("bitparity", e.Bitparity)
	add("go", e.GoVersion)
	if e.OS != "" || e.Arch != "" {
		parts = append(parts, e.OS+"/"+e.Arch)
	}
	add("cpu", e.CPU)
	add("gpu", e.GPU)
	add("cc", e.CC)
	add("driver", e.Driver)
	add("cuda", e.CUDA)
	add("kernel", e.KernelHash)
	if len(parts) == 0 {
		return "(unknown environment)"
	}
	return strings.Join(parts, ", ")
}
