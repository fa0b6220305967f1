package measure

import (
	"slices"
	"testing"

	"fabriclab/sim"
	"fabriclab/workload"
)

// A message starts no earlier than its own At and than what it waits for;
// only the range's messages count, and a range's first message keeps its
// At whatever comes before it.
func TestEarliestStarts(t *testing.T) {
	d := &workload.DAG{}
	a := d.Add(workload.Message{Bytes: 1, At: 5})    // 0: a request at 5
	b := d.Add(workload.Message{Bytes: 1}, a)        // 1: its reply, At 0
	c := d.Add(workload.Message{Bytes: 1, At: 2})    // 2: a request at 2
	m := d.Add(workload.Message{Marker: true}, b, c) // 3: a marker on both
	e := d.Add(workload.Message{Bytes: 1, At: 9}, m) // 4: later than what it waits for
	d.Add(workload.Message{Bytes: 1}, e)             // 5
	d.Finish()
	if got, want := earliestStarts(d, 0, 6), []sim.Time{5, 5, 2, 5, 9, 9}; !slices.Equal(got, want) {
		t.Fatalf("earliest starts %v, want %v", got, want)
	}
	if got, want := earliestStarts(d, 1, 4), []sim.Time{0, 2, 2}; !slices.Equal(got, want) {
		t.Fatalf("earliest starts of [1, 4) %v, want %v", got, want)
	}
}
