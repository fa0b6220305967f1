package topo

import (
	"strings"
	"testing"

	"fabriclab/fabric"
	"fabriclab/sim"
)

func TestParseAndApplyRoutes(t *testing.T) {
	s := spec("leaf-spine")
	s.Hosts, s.HostsPerLeaf = 16, 8
	tp, err := Build(sim.NewScheduler(), 1, s)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseRoutes("t.txt", strings.NewReader("# pin host 9's traffic\nleaf0 9 spine3\nleaf0,10,spine3\n\n"))
	if err != nil || len(rs) != 2 {
		t.Fatalf("%v %v", rs, err)
	}
	if err := ApplyRoutes(tp, "t.txt", rs, false); err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{9, 10} {
		g := tp.Edge[0].Next[d]
		if len(g) != 1 || g[0].Peer.Owner.(*fabric.Switch).Name() != "spine3" {
			t.Fatalf("host %d: group %v", d, g)
		}
	}
	if len(tp.Edge[0].Next[11]) != 8 {
		t.Fatal("an unlisted destination lost its ECMP group")
	}
	for _, bad := range []string{"leaf0 9", "leaf0 x spine1", "leaf0 -1 spine1"} {
		if _, err := ParseRoutes("t.txt", strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "t.txt:1:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, bad := range []string{"leaf9 9 spine1", "leaf0 99 spine1", "leaf0 9 spine99",
		"leaf1 8 spine0\nspine0 8 leaf1", "leaf0 8 host1"} {
		tp, _ := Build(sim.NewScheduler(), 1, s)
		rs, _ := ParseRoutes("t.txt", strings.NewReader(bad))
		if err := ApplyRoutes(tp, "t.txt", rs, false); err == nil {
			t.Errorf("%q applied", bad)
		}
	}
}
