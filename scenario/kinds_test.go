package scenario

import (
	"slices"
	"strings"
	"testing"

	"fabriclab/units"

	"fabriclab/workload"
)

// The registry holds every collective of the catalogue and the patterns,
// each with the parts every engine calls.
func TestWorkloadKindsRegistry(t *testing.T) {
	names := WorkloadKinds()
	want := append(workload.Collectives(), "permutation", "incast", "flows", "uniform", "messages", "any-to-any")
	if !slices.Equal(names, want) {
		t.Fatalf("WorkloadKinds() = %v, want %v", names, want)
	}
	for _, n := range names {
		k, ok := LookupWorkloadKind(n)
		if !ok || k.Name != n || k.hosts == nil || k.build == nil {
			t.Errorf("%s: descriptor incomplete: %+v", n, k)
			continue
		}
		if k.Collective != (workload.Algorithms(n) != nil) {
			t.Errorf("%s: Collective = %v, but the catalogue says otherwise", n, k.Collective)
		}
		if k.Sized() == (n == "flows" || n == "messages") {
			t.Errorf("%s: Sized = %v", n, k.Sized())
		}
	}
	if _, ok := LookupWorkloadKind("torus"); ok {
		t.Error("an unknown kind was found")
	}
	if got := hostRangeKinds(); got != "permutation, uniform, messages and any-to-any" {
		t.Errorf("hostRangeKinds() = %q", got)
	}
}

// Hosts per kind, exactly: a collective's placement, a host range, a list,
// an incast's target first, nothing for a flow list.
func TestWorkloadKindHosts(t *testing.T) {
	topo := Topology{Kind: "leaf-spine", Hosts: 8, HostsPerLeaf: 4, GPUsPerServer: 1}
	cases := []struct {
		w    Workload
		want []int
	}{
		{Workload{Kind: "alltoall", Ranks: 4, HostOffset: 2, Placement: "packed"}, []int{2, 3, 4, 5}},
		{Workload{Kind: "permutation", Ranks: 3, HostOffset: 5}, []int{5, 6, 7}},
		{Workload{Kind: "uniform", Placement: "list", PlacementHosts: []int{7, 1}}, []int{7, 1}},
		{Workload{Kind: "incast", Senders: 3, Target: 6}, []int{6, 7, 0, 1}},
		{Workload{Kind: "flows"}, nil},
	}
	for _, c := range cases {
		hs, err := JobHosts(c.w, topo, 1)
		if err != nil || !slices.Equal(hs, c.want) {
			t.Errorf("%s: JobHosts = %v, %v; want %v", c.w.Kind, hs, err, c.want)
		}
	}
	if _, err := JobHosts(Workload{Kind: "permutation", Ranks: 4, HostOffset: 6}, topo, 1); err == nil {
		t.Error("a host range past the topology was accepted")
	}
	if _, err := JobHosts(Workload{Kind: "torus"}, topo, 1); err == nil {
		t.Error("an unknown kind got hosts")
	}
}

func TestTransportKinds(t *testing.T) {
	if got := TransportKinds(); !slices.Equal(got, []string{"roce", "homa", "uet", "dctcp", "tcp"}) {
		t.Fatalf("TransportKinds() = %v", got)
	}
	k, ok := LookupTransportKind("")
	if !ok || k.Name != "roce" {
		t.Errorf("the default transport is %v", k)
	}
	tcp, _ := LookupTransportKind("tcp")
	homa, _ := LookupTransportKind("homa")
	pool := Transport{TCP: TCP{Connections: "pool", PoolSize: 4}}
	if tcp.PoolSize(pool) != 4 || homa.PoolSize(pool) != 1 || tcp.PoolSize(Transport{}) != 1 {
		t.Errorf("pool sizes: tcp %d, homa %d, tcp default %d", tcp.PoolSize(pool), homa.PoolSize(pool), tcp.PoolSize(Transport{}))
	}
	if !homa.PerMessage || tcp.PerMessage {
		t.Error("only Homa is per message")
	}
}

func TestAnyToAnyValidation(t *testing.T) {
	const topo = "topology: {hosts: 12, hosts_per_leaf: 6, spines: 5}\nsim: {time_limit: 10ms}\n"
	const ok = "workload: {kind: any-to-any, clients: 5, servers: 5, depth: 4, duration: 3ms, sizes: {list: [64KiB]}}\n"
	f, err := Parse("a.yaml", []byte(topo+ok))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	w := f.Jobs()[0].Spec.Workload
	if w.Ranks != 10 || CheckpointInterval(w) != 300*units.Microsecond {
		t.Errorf("ranks %d, checkpoint %v", w.Ranks, CheckpointInterval(w))
	}
	hs, err := JobHosts(w, f.Base.Topology, 1)
	if err != nil || len(hs) != 10 || hs[9] != 9 {
		t.Errorf("hosts %v, %v", hs, err)
	}
	cases := []struct{ w, want string }{
		{"{kind: any-to-any, servers: 5, duration: 3ms, sizes: {list: [64KiB]}}", "workload.clients: any-to-any needs 1 to"},
		{"{kind: any-to-any, clients: 5, servers: 5, sizes: {list: [64KiB]}}", "workload.duration: any-to-any needs a duration"},
		{"{kind: any-to-any, clients: 5, servers: 5, duration: 30ms, sizes: {list: [64KiB]}}", "does not end before sim.time_limit"},
		{"{kind: any-to-any, clients: 5, servers: 5, duration: 10ms, sizes: {list: [64KiB]}}", "does not end before sim.time_limit"},
		{"{kind: any-to-any, clients: -1, servers: 5, duration: 3ms, sizes: {list: [64KiB]}}", "workload.clients: any-to-any needs 1 to"},
		{"{kind: any-to-any, clients: 5, servers: 9223372036854775807, duration: 3ms, sizes: {list: [64KiB]}}", "hosts from host_offset 0 do not fit the topology's 12 hosts"},
		{"{kind: any-to-any, clients: 5, servers: 5, duration: 10ps, sizes: {list: [64KiB]}}", "at least 1us"},
		{"{kind: any-to-any, clients: 5, servers: 5, duration: 3ms, checkpoint: 4ms, sizes: {list: [64KiB]}}", "workload.checkpoint: must be between 0"},
		{"{kind: any-to-any, clients: 5, servers: 5, depth: 2000, duration: 3ms, sizes: {list: [64KiB]}}", "workload.depth: must be between 1 and 1024"},
		{"{kind: any-to-any, clients: 5, servers: 5, load: 0.5, duration: 3ms, sizes: {list: [64KiB]}}", "workload.load: load is only read by kinds uniform and messages"},
		{"{kind: any-to-any, clients: 5, servers: 5, duration: 3ms, sizes: {list: [1B]}}", "more than the limit of"},
		{"{kind: any-to-any, clients: 8, servers: 5, duration: 3ms, sizes: {list: [64KiB]}}", "do not fit the topology's 12 hosts"},
		{"{kind: alltoall, clients: 5, sizes: {list: [64KiB]}}", "workload.clients: clients, servers, depth and checkpoint are only read by kind any-to-any"},
	}
	for _, c := range cases {
		f, err := Parse("a.yaml", []byte(topo+"workload: "+c.w+"\n"))
		if err == nil {
			err = f.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant …%s…", c.w, err, c.want)
		}
	}
}
