package workload

import (
	"testing"

	"fabriclab/units"
)

func TestMessagesDAG(t *testing.T) {
	d5, err := LoadSizeDist("w5", sdShared)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []int{3, 4, 5, 6, 7, 8}
	for _, pattern := range []string{"uniform", "permutation"} {
		spec := MessagesSpec{Hosts: hosts, Sizes: d5, Load: 0.5, Rate: 10 * units.Gbps, Payload: 1442, Header: 58,
			Duration: units.Millisecond * 20, Pattern: pattern, Seed: 3}
		d, err := Messages(spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Msgs) < 10 || d.Ranks != 6 || d.Size != int64(d5.Mean()+0.5) {
			t.Fatalf("%s: %d messages, %d ranks, size %d", pattern, len(d.Msgs), d.Ranks, d.Size)
		}
		dst := map[int32]int32{}
		for i, m := range d.Msgs {
			if m.Src == m.Dst || m.Src < 3 || m.Dst > 8 || m.At < 0 || m.At >= spec.Duration || d.DepCount[i] != 0 {
				t.Fatalf("%s: message %+v", pattern, m)
			}
			if pattern == "permutation" {
				if o, ok := dst[m.Src]; ok && o != m.Dst {
					t.Fatalf("permutation: host %d sends to %d and %d", m.Src, o, m.Dst)
				}
				dst[m.Src] = m.Dst
			}
		}
		again, _ := Messages(spec)
		if len(again.Msgs) != len(d.Msgs) || again.Msgs[len(d.Msgs)-1] != d.Msgs[len(d.Msgs)-1] {
			t.Errorf("%s: not deterministic", pattern)
		}
	}
}

func TestMessagesRPC(t *testing.T) {
	d5, err := LoadSizeDist("w5", sdShared)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Messages(MessagesSpec{Hosts: []int{0, 1, 2, 3}, Sizes: d5, Load: 0.5, Rate: 10 * units.Gbps, Payload: 1442,
		Header: 58, Duration: units.Millisecond * 20, Seed: 1, ResponseBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Msgs)%2 != 0 || len(d.Msgs) < 4 {
		t.Fatalf("%d messages", len(d.Msgs))
	}
	for i := 0; i < len(d.Msgs); i += 2 {
		req, resp := d.Msgs[i], d.Msgs[i+1]
		succ := d.Successors(int32(i))
		if resp.Src != req.Dst || resp.Dst != req.Src || resp.Bytes != 100 || d.DepCount[i+1] != 1 || len(succ) != 1 || succ[0] != int32(i+1) {
			t.Fatalf("request %+v, response %+v", req, resp)
		}
	}
}

// A window too short for one arrival is refused: it would run nothing and
// report an all-zero row.
func TestMessagesRefusesAnEmptyWindow(t *testing.T) {
	d5, err := LoadSizeDist("w5", sdShared)
	if err != nil {
		t.Fatal(err)
	}
	spec := MessagesSpec{Hosts: []int{0, 1}, Sizes: d5, Load: 0.01, Rate: 10 * units.Gbps, Payload: 1442, Header: 58,
		Duration: units.Nanosecond, Seed: 3}
	_, err = Messages(spec)
	want := "the messages workload yields no message in workload.duration=1ns at load 0.01 (about 9.6e-09 expected); raise duration or load"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}
}
