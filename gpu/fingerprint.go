package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// KernelHash identifies the GPU code of this build: the sha256 of the
// embedded PTX modules, in Modules order, each as "name\n" + its PTX. A
// finding records it (spec.Env.KernelHash), so a recheck can say at which
// kernels a finding stopped reproducing. It needs no GPU.
func KernelHash() (string, error) {
	h := sha256.New()
	for _, mod := range Modules {
		src, err := PTX(mod)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n", mod)
		h.Write([]byte(src))
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
