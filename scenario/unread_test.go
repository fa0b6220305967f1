package scenario

import (
	"reflect"
	"testing"
)

// A topology or transport setting no variant's kind reads is named once;
// one some variant reads is not, though other variants inherit it.
func TestUnreadNotes(t *testing.T) {
	const work = "workload: {kind: alltoall, sizes: {list: [64KiB]}}\n"
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"leaf-spine keys on a fat-tree, DCQCN under TCP",
			"topology: {kind: fat-tree, k: 4, hosts_per_leaf: 2, spines: 5}\ntransport: {kind: tcp, dcqcn: {preset: tuned-final}}\n" + work +
				"variants:\n  - name: a\n  - name: b\n    transport: {dcqcn: {preset: \"off\"}}\n",
			[]string{
				"topology.hosts_per_leaf is given but no variant reads it (read by topology.kind leaf-spine only; the variants here: fat-tree): it changes nothing",
				"topology.spines is given but no variant reads it (read by topology.kind leaf-spine and rail only; the variants here: fat-tree): it changes nothing",
				"transport.dcqcn is given but no variant reads it (read by transport.kind roce with cc dcqcn only; the variants here: tcp): it changes nothing",
			}},
		{"oversubscription beside spines",
			"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2, oversubscription: 4}\n" + work,
			[]string{"topology.oversubscription is given but no variant reads it (read by topology.kind leaf-spine without spines only; the variants here: leaf-spine): it changes nothing"}},
		{"HPCC knobs under DCQCN",
			"topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4}\ntransport: {kind: roce, hpcc: {eta: 0.9}}\n" + work,
			[]string{"transport.hpcc is given but no variant reads it (read by transport.kind roce with cc hpcc only; the variants here: roce): it changes nothing"}},
		// Inherited by the TCP and rail-less variants, read by the others.
		{"read by some variant",
			"topology: {kind: rail, servers: 2, gpus_per_server: 4}\ntransport: {kind: roce, dcqcn: {preset: tuned-final}}\n" + work +
				"variants:\n  - name: rail\n  - name: clos\n    topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4}\n    transport: {kind: tcp}\n",
			nil},
		{"defaults", "topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4}\n" + work, nil},
	} {
		f, err := Parse("u.yaml", []byte(c.text))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := UnreadNotes(f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
