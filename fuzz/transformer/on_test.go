package transformer

import "testing"

// TestParseOn: one backend stands for both paths; a pair names train then
// inference; three names, or a backend this build lacks, are refused.
func TestParseOn(t *testing.T) {
	for _, tc := range []struct {
		in, train, infer string
		ok               bool
	}{
		{"cpu", "cpu", "cpu", true},
		{"cpu,cpu", "cpu", "cpu", true},
		{"cpu,cpu,cpu", "", "", false},
		{"cpu,no-such-backend", "", "", false},
		{"", "", "", false},
	} {
		train, infer, err := ParseOn(tc.in)
		if (err == nil) != tc.ok || train != tc.train || infer != tc.infer {
			t.Errorf("ParseOn(%q) = %q, %q, %v; want %q, %q, ok %v", tc.in, train, infer, err, tc.train, tc.infer, tc.ok)
		}
	}
	if on := DefaultOn(); on != CPU && on != "cpu,cuda" {
		t.Errorf("DefaultOn() = %q", on)
	}
}
