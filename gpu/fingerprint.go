package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// HereEnv is the environment fingerprint of this process, the one every
// command records and compares: the host's (spec.HostEnv) with the GPU's
// (Fingerprint).
func HereEnv() spec.Env {
	e := spec.HostEnv()
	Fingerprint(&e)
	return e
}

// Fingerprint fills the device fields of e (spec.HostEnv fills the host
// ones): in the cuda build, the name and compute capability of device 0
// (the device the GPU targets use), the NVIDIA driver's version, the CUDA
// version it supports and KernelHash; on a machine without a GPU only
// KernelHash. A build without cuda leaves e as it is. The command calls it
// once, explicitly, for the fingerprint it records everywhere.
func Fingerprint(e *spec.Env) {
	if !deviceFingerprint(e) {
		return
	}
	if e.GPU != "" {
		if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
			e.Driver = driverVersion(string(b))
		}
	}
	if h, err := KernelHash(); err == nil && e.KernelHash == "" {
		e.KernelHash = h
	}
}

// driverVersion reads the driver's version from the text of
// /proc/driver/nvidia/version, whose first line is
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
//
// (or "... Open Kernel Module for x86_64  ..."): the first word after
// "Module" that starts with a digit; "" when there is none.
func driverVersion(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	_, rest, ok := strings.Cut(line, "Module")
	if !ok {
		return ""
	}
	for _, w := range strings.Fields(rest) {
		if w[0] >= '0' && w[0] <= '9' {
			return w
		}
	}
	return ""
}

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
