package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestStepsLines(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	s := newSteps(&buf, "scan", 100, clk, false)
	now = now.Add(time.Second)
	s.Update(10)
	if buf.Len() != 0 {
		t.Fatalf("a line before LineInterval: %q", buf.String())
	}
	now = now.Add(LineInterval)
	s.Update(25)
	want := "scan: 25 of 100 steps (25%), 0:06 elapsed, 0:18 left\n"
	if buf.String() != want {
		t.Errorf("line %q, want %q", buf.String(), want)
	}
	s.Finish()
	s.Update(50)
	if strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("a line after Finish: %q", buf.String())
	}
	var nilSteps *Steps
	nilSteps.Update(1)
	nilSteps.Finish()
}

// TestStepsRaisedTotal: steps added while running (a scan's power loop
// adds draws) raise the total the line states; it never reads "150%".
func TestStepsRaisedTotal(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	s := newSteps(&buf, "scan", 100, clk, false)
	now = now.Add(LineInterval)
	s.UpdateOf(150, 200)
	want := "scan: 150 of 200 steps (75%), 0:05 elapsed, 0:02 left\n"
	if buf.String() != want {
		t.Errorf("line %q, want %q", buf.String(), want)
	}
}
