package words

import (
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestEnv(t *testing.T) {
	for _, tc := range []struct {
		e    spec.Env
		want string
	}{
		{spec.Env{}, "(unknown environment)"},
		{spec.Env{Bitparity: "v1", GoVersion: "go1.24", OS: "linux", Arch: "amd64", CPU: "EPYC"},
			"bitparity v1, go go1.24, linux/amd64, cpu EPYC"},
		{spec.Env{OS: "linux", Arch: "amd64", GPU: "NVIDIA H200", CC: "9.0", Driver: "580.65", CUDA: "13.0", KernelHash: "ab12"},
			"linux/amd64, gpu NVIDIA H200, cc 9.0, driver 580.65, cuda 13.0, kernel ab12"},
	} {
		if got := Env(tc.e); got != tc.want {
			t.Errorf("Env(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}
