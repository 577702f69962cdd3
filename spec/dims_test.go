package spec

import (
	"reflect"
	"testing"
)

func TestParseDims(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    map[string]int
		wantErr bool
	}{
		{"", nil, false},
		{" , ", nil, false},
		{"experts=128,top_k=8", map[string]int{"experts": 128, "top_k": 8}, false},
		{" hidden = 2048", nil, true}, // the value must be an integer as written
		{"hidden=2048 ", map[string]int{"hidden": 2048}, false},
		{"hidden", nil, true},
		{"hidden=x", nil, true},
	} {
		got, err := ParseDims(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseDims(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
