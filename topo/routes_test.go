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

// Two pins of one (switch, destination) are refused with both lines, a
// different next hop or the same one again.
func TestParseRoutesConflictingPins(t *testing.T) {
	cases := []struct{ in, want string }{
		{"leaf0 9 spine3\n# c\nleaf0 9 spine1\n",
			`t.txt:3: switch "leaf0" destination 9 is pinned to "spine1" here and to "spine3" at line 1`},
		{"leaf0 9 spine3\nleaf0,9,spine3\n",
			`t.txt:2: switch "leaf0" destination 9 is pinned to "spine3" again (already at line 1); remove the duplicate`},
	}
	for _, c := range cases {
		_, err := ParseRoutes("t.txt", strings.NewReader(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
	// The same destination at two switches, or two destinations at one, is fine.
	if rs, err := ParseRoutes("t.txt", strings.NewReader("leaf0 9 spine3\nleaf1 9 spine3\nleaf0 10 spine1\n")); err != nil || len(rs) != 3 {
		t.Errorf("%v %v", rs, err)
	}
}

// Errors quote a short, escaped piece of a token, never a whole line.
func TestParseRoutesErrorsDoNotEchoLines(t *testing.T) {
	secret := "root:x:0:0:root:/root:/bin/bash"
	for _, in := range []string{secret + "\n", "leaf0 " + secret + " spine1\n", "a b c d " + secret + "\n", "leaf0 \x1b[2Jpassword=hunter2hunter2 spine1\n"} {
		_, err := ParseRoutes("t.txt", strings.NewReader(in))
		if err == nil {
			t.Fatalf("%q accepted", in)
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || strings.Contains(msg, "hunter2hunter2") || strings.ContainsAny(msg, "\x1b\r\n") || !strings.HasPrefix(msg, "t.txt:1: ") {
			t.Errorf("%q: %q", in, msg)
		}
	}
	_, err := ParseRoutes("t.txt", strings.NewReader("leaf0 1 spine0\n"+strings.Repeat("x", 2<<20)))
	if err == nil || err.Error() != "t.txt:2: line longer than 1 MiB" {
		t.Errorf("long line: %v", err)
	}
}

// Wire gives the names and links run resolves, without route tables; the
// failures and route checks work on it before a transport names the hosts.
func TestWireResolvesNamesWithoutTransport(t *testing.T) {
	s := spec("leaf-spine")
	s.Hosts, s.HostsPerLeaf = 16, 8
	tp, err := Wire(1, s)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Edge[0].Next != nil {
		t.Fatal("Wire filled route tables")
	}
	if got := tp.SwitchNames(); got != "leaf0…leaf1, spine0…spine7" {
		t.Errorf("SwitchNames = %q", got)
	}
	if pt, err := tp.SwitchLink("spine3", "leaf1"); err != nil || tp.NodeName(pt) != "spine3" || tp.NodeName(pt.Peer) != "leaf1" {
		t.Errorf("spine3–leaf1: %v", err)
	}
	for _, c := range []struct{ a, b, want string }{
		{"leaf0", "spine9", `there is no switch "spine9" in the topology (its switches: leaf0…leaf1, spine0…spine7)`},
		{"leaf0", "host3", `"leaf0"–"host3" is a host link; only links between switches can fail`},
		{"host3", "leaf0", `"host3"–"leaf0" is a host link`},
		{"leaf0", "leaf1", `there is no link between "leaf0" and "leaf1"`},
	} {
		if _, err := tp.SwitchLink(c.a, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s–%s: %v, want %q", c.a, c.b, err, c.want)
		}
	}
	ComputeRoutes(tp)
	// A host as next hop is named as the transport will name it.
	rs, err := ParseRoutes("t.txt", strings.NewReader("leaf0 3 host3\nspine0 3 leaf0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyRoutes(tp, "t.txt", rs, false); err != nil {
		t.Fatal(err)
	}
	rs, _ = ParseRoutes("t.txt", strings.NewReader("leaf0 3 host4\n"))
	if err := ApplyRoutes(tp, "t.txt", rs, false); err == nil || !strings.Contains(err.Error(), "end at another host") {
		t.Errorf("a wrong host: %v", err)
	}
	rs, _ = ParseRoutes("t.txt", strings.NewReader("leaf0 3 "+strings.Repeat("s", 40)+"\n"))
	if err := ApplyRoutes(tp, "t.txt", rs, false); err == nil || err.Error() != `t.txt:1: leaf0 has no working link to "ssssssssssssssss"…` {
		t.Errorf("a long name: %v", err)
	}
	if RouteTableBytes(s) != int64(NumSwitches(s))*16*(24+4) { // a slice header and a group number per host
		t.Error("RouteTableBytes")
	}
}
