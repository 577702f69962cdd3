package oracle

import "testing"

func TestEnumNames(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{FP32, "fp32"}, {BF16, "bf16"}, {FP16, "fp16"}, {DType(3), "dtype(3)"},
		{MMANone, "none"}, {MMABF16, "bf16"}, {MMAFP16, "fp16"}, {MMATF32, "tf32"}, {MMAFormat(200), "mma(200)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.v, got, tc.want)
		}
	}
}
