package gofuzzfile

import (
	"math"
	"reflect"
	"testing"
)

func TestGoFuzzFile(t *testing.T) {
	vals := []any{[]byte("\x00\xff\"\n"), "str\u00e9", true, int(-3), int64(1 << 40), uint8(7), int32('x'),
		uint64(math.MaxUint64), float32(math.Float32frombits(0x7fc00001)), math.Float64frombits(0x8000000000000000)}
	b, err := Format(vals...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(got) != len(vals) {
		t.Fatalf("%d values, want %d", len(got), len(vals))
	}
	for i := range vals {
		if f, ok := vals[i].(float32); ok {
			if math.Float32bits(got[i].(float32)) != math.Float32bits(f) {
				t.Errorf("value %d: NaN payload lost", i)
			}
			continue
		}
		if f, ok := vals[i].(float64); ok {
			if math.Float64bits(got[i].(float64)) != math.Float64bits(f) {
				t.Errorf("value %d: -0 lost", i)
			}
			continue
		}
		if !reflect.DeepEqual(got[i], vals[i]) {
			t.Errorf("value %d: %#v, want %#v", i, got[i], vals[i])
		}
	}
	// as Go writes them
	got, err = Parse([]byte("go test fuzz v1\n[]byte(\"\\x01\\x02abc\")\nbyte('a')\nrune('\\n')\nfloat64(-1.5)\nint(-7)\nbool(false)\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{[]byte("\x01\x02abc"), byte('a'), int32('\n'), -1.5, -7, false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%#v, want %#v", got, want)
	}
	for _, bad := range []string{"", "go test fuzz v2\n[]byte(\"\")\n", "go test fuzz v1\n", "go test fuzz v1\nos.Exit(1)\n",
		"go test fuzz v1\n[]byte(x)\n", "go test fuzz v1\nfunc(){}()\n", "go test fuzz v1\n[]int(\"a\")\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}
