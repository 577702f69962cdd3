package oracle

import "testing"

// TestParseGEMMScheduleRoundTrip: every GEMM schedule String writes,
// tensor core and K tile included, parses back to itself; malformed fields
// are refused.
func TestParseGEMMScheduleRoundTrip(t *testing.T) {
	for _, s := range []GEMMSchedule{
		{SplitK: 1}, {SplitK: 4, Combine: CrossTree}, {SplitK: 2, MMA: MMABF16},
		{SplitK: 3, MMA: MMATF32, KTile: 128}, {SplitK: 5, KTile: 64},
	} {
		got, err := ParseGEMMSchedule(s.String())
		if err != nil || got != s {
			t.Errorf("%q: got %v, %v", s.String(), got, err)
		}
	}
	for _, bad := range []string{"splitk=1 combine=sequential mma=int8", "splitk=1 combine=sequential ktile=x",
		"splitk=1 combine=sequential wat=1", "splitk=1", "threads=32 vec=4"} {
		if _, err := ParseGEMMSchedule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestParseRoundTrip: the reduction and attention schedules parse back to
// themselves.
func TestParseRoundTrip(t *testing.T) {
	red := Reduction{Threads: 256, Vec: 4, Warp: WarpButterfly, Cross: CrossTree}
	rs := RMSNormSchedule{Reduce: red, Order: WeightedScale}
	if got, err := ParseRMSNormSchedule(rs.String()); err != nil || got != rs {
		t.Errorf("rmsnorm %q: got %v, %v", rs, got, err)
	}
	ls := LogProbSchedule{Reduce: red}
	if got, err := ParseLogProbSchedule(ls.String()); err != nil || got != ls {
		t.Errorf("logprob %q: got %v, %v", ls, got, err)
	}
	as := AttentionSchedule{Tile: 48, Splits: 3}
	if got, err := ParseAttentionSchedule(as.String()); err != nil || got != as {
		t.Errorf("attention %q: got %v, %v", as, got, err)
	}
	if _, err := ParseRMSNormSchedule("threads=32 vec=4 warp=butterfly cross=sequential"); err == nil {
		t.Error("an rmsnorm schedule without out= parsed")
	}
}
