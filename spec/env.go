package spec

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Env is an environment fingerprint: where a finding, a result, a case
// file or a certificate was recorded, so that a replay elsewhere can say
// what differs (corpus.EnvDiff). HostEnv fills the host fields; the device
// fields are filled by the build that has a device (gpu.Fingerprint in the
// cuda build) and stay empty elsewhere.
type Env struct {
	// Host fields (HostEnv).
	Bitparity string `json:"bitparity"` // the version of bitparity (BuildVersion)
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPU       string `json:"cpu,omitempty"` // the CPU model, where the OS says it

	// Device fields (gpu.Fingerprint in the cuda build).
	GPU        string `json:"gpu,omitempty"`                // the device's name
	CC         string `json:"compute_capability,omitempty"` // e.g. "9.0"
	Driver     string `json:"driver,omitempty"`             // the NVIDIA driver's version, e.g. "550.54.15"
	CUDA       string `json:"cuda,omitempty"`               // the CUDA version the driver supports, e.g. "12.4"
	KernelHash string `json:"kernel_hash,omitempty"`        // the hash of the GPU code of this build
}

var (
	hostOnce sync.Once
	host     Env
)

// HostEnv is the host part of this process's fingerprint, the one function
// that fills it: the bitparity version (BuildVersion), the Go version, OS
// and architecture, and the CPU model (Linux: /proc/cpuinfo's model name).
// The device fields are empty. It reads the host once per process.
func HostEnv() Env {
	hostOnce.Do(func() {
		host = Env{Bitparity: BuildVersion(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel()}
	})
	return host
}

// Version, when set at link time (go build -ldflags "-X
// github.com/bitparity/bitparity/spec.Version=v1.2.0"), is the version
// BuildVersion reports.
var Version = ""

// BuildVersion is the version of this build of bitparity: Version when
// set at link time, else "dev-" and the first 12 digits of the VCS
// revision the binary was built from, else the main module's version,
// else "dev".
func BuildVersion() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return "dev"
}

// cpuModel is the "model name" of /proc/cpuinfo, "" where there is none.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
