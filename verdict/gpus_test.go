package verdict

import (
	"reflect"
	"testing"
)

// TestParseGPUs: --gpus all, N or a list of ids, mapped through the
// parent's CUDA_VISIBLE_DEVICES; a bad, repeated or absent id is an error.
func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		in, visible string
		count       int
		want        []string // nil: an error
	}{
		{"all", "", 4, []string{"0", "1", "2", "3"}},
		{"2", "", 4, []string{"0", "1"}},
		{"0,2,3", "", 4, []string{"0", "2", "3"}},
		{"3,", "", 4, []string{"3"}},
		{"all", "4,5,7", 3, []string{"4", "5", "7"}},
		{"1,2", "4,5,7", 3, []string{"5", "7"}},
		{"all", "", 0, nil},
		{"5", "", 4, nil},
		{"0", "", 4, nil},
		{"0,0", "", 4, nil},
		{"0,4", "", 4, nil},
		{"-1,", "", 4, nil},
		{"x", "", 4, nil},
		{"", "", 4, nil},
	} {
		got, err := ParseGPUs(tc.in, tc.count, tc.visible)
		if (err == nil) != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseGPUs(%q, %d, %q) = %q, %v; want %q", tc.in, tc.count, tc.visible, got, err, tc.want)
		}
	}
}
