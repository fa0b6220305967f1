package workload

import (
	"slices"
	"testing"

	"fabriclab/sim"
)

// 3 servers × 4 GPUs; hosts numbered server-major.
func servers34() (server, rail []int) {
	for h := 0; h < 12; h++ {
		server = append(server, h/4)
		rail = append(rail, h%4)
	}
	return
}

func TestPlacements(t *testing.T) {
	sv, rl := servers34()
	for _, tc := range []struct {
		policy    string
		ranks     int
		perServer int
		want      []int
	}{
		{"packed", 6, 0, []int{0, 1, 2, 3, 4, 5}},
		{"packed", 6, 2, []int{0, 1, 4, 5, 8, 9}},
		{"spread", 6, 0, []int{0, 4, 8, 1, 5, 9}},
		{"rail-aligned", 8, 0, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"list", 3, 0, []int{11, 0, 5}},
	} {
		var list []int
		if tc.policy == "list" {
			list = tc.want
		}
		got, err := Place(tc.policy, tc.ranks, sv, rl, tc.perServer, sim.NewRNG(1, "p"), list)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s %d/%d: %v %v, want %v", tc.policy, tc.ranks, tc.perServer, got, err, tc.want)
		}
	}
	// Random: a seeded permutation of the eligible GPUs, the same for the
	// same seed, and within ranks per server.
	a, _ := Place("random", 6, sv, rl, 2, sim.NewRNG(7, "p"), nil)
	b, _ := Place("random", 6, sv, rl, 2, sim.NewRNG(7, "p"), nil)
	if !slices.Equal(a, b) {
		t.Fatal("random placement not reproducible")
	}
	for _, h := range a {
		if rl[h] >= 2 {
			t.Fatalf("random placement used GPU %d beyond 2 per server: %v", rl[h], a)
		}
	}
	for _, bad := range []struct {
		policy string
		ranks  int
		list   []int
	}{
		{"packed", 13, nil},
		{"list", 2, []int{0}},
		{"list", 2, []int{0, 0}},
		{"list", 1, []int{12}},
		{"diagonal", 2, nil},
	} {
		if _, err := Place(bad.policy, bad.ranks, sv, rl, 0, sim.NewRNG(1, "p"), bad.list); err == nil {
			t.Errorf("%s %d %v accepted", bad.policy, bad.ranks, bad.list)
		}
	}
}
