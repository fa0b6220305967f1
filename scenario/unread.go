package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// unreadKey is a setting only some topology or transport kinds read.
type unreadKey struct {
	key   string
	set   func(s *Scenario) bool // given a value other than the default
	reads func(s *Scenario) bool // the variant's kind reads it
	who   string                 // the kinds that read it, for the note
}

// unreadKeys are the settings of one topology or transport kind (the
// workload's are refused at their key when its kind does not read them:
// a workload key cannot be inherited by a variant of another kind
// without meaning something there, a topology or transport key can).
var unreadKeys = []unreadKey{
	{"topology.hosts", func(s *Scenario) bool { return s.Topology.Hosts != 0 }, topologyIs("leaf-spine"), "topology.kind leaf-spine"},
	{"topology.hosts_per_leaf", func(s *Scenario) bool { return s.Topology.HostsPerLeaf != 0 }, topologyIs("leaf-spine"), "topology.kind leaf-spine"},
	{"topology.oversubscription", func(s *Scenario) bool { return s.Topology.Oversubscription != Defaults().Topology.Oversubscription },
		func(s *Scenario) bool { return s.Topology.Kind == "leaf-spine" && s.Topology.Spines == 0 }, "topology.kind leaf-spine without spines"},
	{"topology.spines", func(s *Scenario) bool { return s.Topology.Spines != 0 }, topologyIs("leaf-spine", "rail"), "topology.kind leaf-spine and rail"},
	{"topology.k", func(s *Scenario) bool { return s.Topology.K != 0 }, topologyIs("fat-tree"), "topology.kind fat-tree"},
	{"topology.servers", func(s *Scenario) bool { return s.Topology.Servers != 0 }, topologyIs("rail"), "topology.kind rail"},
	{"topology.servers_per_group", func(s *Scenario) bool { return s.Topology.ServersPerGroup != 0 }, topologyIs("rail"), "topology.kind rail"},
	{"topology.file", func(s *Scenario) bool { return s.Topology.File != "" }, topologyIs("custom", "ns3"), "topology.kind custom and ns3"},
	{"transport.cc", func(s *Scenario) bool { return s.Transport.CC != "" }, transportIs("roce"), "transport.kind roce"},
	{"transport.dcqcn", func(s *Scenario) bool { return !reflect.DeepEqual(s.Transport.DCQCN, Defaults().Transport.DCQCN) },
		func(s *Scenario) bool { return s.Transport.Kind == "roce" && s.Transport.CC != "hpcc" }, "transport.kind roce with cc dcqcn"},
	{"transport.hpcc", func(s *Scenario) bool { return !reflect.ValueOf(s.Transport.HPCC).IsZero() },
		func(s *Scenario) bool { return s.Transport.Kind == "roce" && s.Transport.CC == "hpcc" }, "transport.kind roce with cc hpcc"},
	{"transport.homa", func(s *Scenario) bool { return !reflect.ValueOf(s.Transport.Homa).IsZero() }, transportIs("homa"), "transport.kind homa"},
	{"transport.uet", func(s *Scenario) bool { return !reflect.ValueOf(s.Transport.UET).IsZero() }, transportIs("uet"), "transport.kind uet"},
	{"transport.tcp", func(s *Scenario) bool { return !reflect.ValueOf(s.Transport.TCP).IsZero() }, transportIs("tcp", "dctcp"), "transport.kind tcp and dctcp"},
}

func topologyIs(kinds ...string) func(*Scenario) bool {
	return func(s *Scenario) bool { return slices.Contains(kinds, s.Topology.Kind) }
}

func transportIs(kinds ...string) func(*Scenario) bool {
	return func(s *Scenario) bool { return slices.Contains(kinds, s.Transport.Kind) }
}

// UnreadNotes name the topology and transport settings of f that no
// variant reads: given, but only for kinds none of the variants has
// (topology.k on leaf-spines, transport.dcqcn under TCP). Such a setting
// changes nothing, so variants that differ only there run alike. A
// setting some variant reads is not named though others inherit it (a
// base's DCQCN preset beside a TCP variant).
func UnreadNotes(f *File) []string {
	var out []string
	for _, k := range unreadKeys {
		set, read := false, false
		var kinds []string
		for _, v := range f.Variants {
			if v.Spec == nil {
				continue
			}
			set = set || k.set(v.Spec)
			read = read || k.reads(v.Spec)
			kind := v.Spec.Topology.Kind
			if strings.HasPrefix(k.key, "transport.") {
				kind = v.Spec.Transport.Kind
				if kind == "roce" && v.Spec.Transport.CC != "" {
					kind += " with cc " + v.Spec.Transport.CC
				}
			}
			if !slices.Contains(kinds, kind) {
				kinds = append(kinds, kind)
			}
		}
		if set && !read {
			out = append(out, fmt.Sprintf("%s is given but no variant reads it (read by %s only; the variants here: %s): it changes nothing", k.key, k.who, strings.Join(kinds, ", ")))
		}
	}
	return out
}
