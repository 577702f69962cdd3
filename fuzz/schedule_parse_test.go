package fuzz

import (
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// TestParseGEMMScheduleRoundTrip: every GEMM schedule String writes,
// tensor core and K tile included, parses back to itself.
func TestParseGEMMScheduleRoundTrip(t *testing.T) {
	for _, s := range []oracle.GEMMSchedule{
		{SplitK: 1}, {SplitK: 4, Combine: oracle.CrossTree}, {SplitK: 2, MMA: oracle.MMABF16},
		{SplitK: 3, MMA: oracle.MMATF32, KTile: 128}, {SplitK: 5, KTile: 64},
	} {
		got, err := ParseSchedule(spec.OpGEMM, s.String())
		if err != nil || got != s {
			t.Errorf("%q: got %v, %v", s.String(), got, err)
		}
	}
	for _, bad := range []string{"splitk=1 combine=sequential mma=int8", "splitk=1 combine=sequential ktile=x", "splitk=1 combine=sequential wat=1"} {
		if _, err := ParseSchedule(spec.OpGEMM, bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
