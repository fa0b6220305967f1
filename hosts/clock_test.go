package hosts

import "testing"

func TestEstimateOffset(t *testing.T) {
	// The agent runs 5,000 ns ahead. Round trips of 900, 300 and 2,000 ns:
	// the 300 ns one wins; the agent answered 100 ns after it was asked
	// (asymmetric), so the estimate is off by 50 ns, within its ±150 bound.
	samples := []ClockSample{
		{Sent: 1000, Agent: 1000 + 5000 + 450, Received: 1900},
		{Sent: 3000, Agent: 3000 + 5000 + 100, Received: 3300},
		{Sent: 5000, Agent: 5000 + 5000 + 1000, Received: 7000},
		{Sent: 9000, Agent: 0, Received: 8000}, // clock went backwards: ignored
	}
	o, err := EstimateOffset(samples)
	if err != nil {
		t.Fatal(err)
	}
	if o.Offset != 4950 || o.Error != 150 {
		t.Errorf("EstimateOffset = %+v, want offset 4950 error 150", o)
	}
	if got := o.ToController(3000 + 5000 + 150); got != 3200 {
		t.Errorf("ToController = %d, want 3200", got)
	}
	if got := o.ToAgent(3200); got != 8150 {
		t.Errorf("ToAgent = %d, want 8150", got)
	}
	if _, err := EstimateOffset([]ClockSample{{Sent: 2, Received: 1}}); err == nil {
		t.Error("no usable sample gave an offset")
	}
}

func TestMeasureOffsetSameClock(t *testing.T) {
	o, err := measureOffset(func() (int64, error) { return nowNano(), nil })
	if err != nil {
		t.Fatal(err)
	}
	// One clock: the true offset is 0, and the bound covers it.
	if abs(o.Offset) > o.Error+1 || o.Error > 1_000_000 {
		t.Errorf("offset %d ± %d on one clock", o.Offset, o.Error)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
