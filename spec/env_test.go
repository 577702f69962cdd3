package spec

import (
	"runtime"
	"testing"
)

func TestHostEnv(t *testing.T) {
	e := HostEnv()
	if e.GoVersion != runtime.Version() || e.OS != runtime.GOOS || e.Arch != runtime.GOARCH || e.Bitparity != BuildVersion() || e.Bitparity == "" {
		t.Errorf("HostEnv = %+v: want this process's go, os, arch and BuildVersion %q", e, BuildVersion())
	}
	if e.GPU != "" || e.CC != "" || e.Driver != "" || e.CUDA != "" || e.KernelHash != "" {
		t.Errorf("HostEnv filled device fields: %+v", e)
	}
	if HostEnv() != e {
		t.Error("HostEnv changed between calls")
	}
}

func TestBuildVersionFromLinkTime(t *testing.T) {
	saved := Version
	defer func() { Version = saved }()
	Version = "v1.2.3"
	if got := BuildVersion(); got != "v1.2.3" {
		t.Errorf("BuildVersion with Version set = %q, want v1.2.3", got)
	}
}
