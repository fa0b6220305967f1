package nslab

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Status is what is on this machine of the lab with a prefix: its state
// (nil when the state directory has none of this prefix's), the namespaces
// and root interfaces named by the prefix, and the processes running in
// those namespaces (the agents) — found by name, as Down finds them, so
// a crashed lab shows up too.
type Status struct {
	Prefix     string
	Lab        *Lab // the state directory's lab.json, when it is this prefix's
	Namespaces []string
	Links      []string
	Processes  map[string][]int // namespace → PIDs
}

// Hosts and Switches count the lab's namespaces that are up, by the
// recorded lab (0, 0 without one).
func (s *Status) Hosts() (up, want int) {
	if s.Lab == nil {
		return 0, 0
	}
	for _, h := range s.Lab.Hosts {
		if s.has(h.NS) {
			up++
		}
	}
	return up, len(s.Lab.Hosts)
}

// Agents counts the recorded lab's host namespaces with a process in them.
func (s *Status) Agents() int {
	n := 0
	if s.Lab != nil {
		for _, h := range s.Lab.Hosts {
			if len(s.Processes[h.NS]) > 0 {
				n++
			}
		}
	}
	return n
}

func (s *Status) has(ns string) bool {
	for _, n := range s.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// Empty reports whether nothing of the lab is here.
func (s *Status) Empty() bool { return s.Lab == nil && len(s.Namespaces)+len(s.Links) == 0 }

// LabStatus reports the lab with Options.Prefix (or, when empty, the state
// directory's lab, else DefaultPrefix). It changes nothing. It needs
// root: only root sees the processes in the namespaces (a process there is
// taken for the host's agent).
func LabStatus(ctx context.Context, o Options) (*Status, error) {
	if geteuid() != 0 {
		return nil, ErrNotRoot
	}
	dir := o.StateDir
	if dir == "" {
		dir = StateDir()
	}
	l, lerr := ReadLab(dir)
	if lerr == nil && CheckPrefix(l.Prefix) != nil {
		l = nil
	}
	if o.Prefix == "" && l != nil {
		o.Prefix = l.Prefix
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	st := &Status{Prefix: o.Prefix, Processes: map[string][]int{}}
	if l != nil && l.Prefix == o.Prefix {
		st.Lab = l
	}
	if st.Namespaces, err = listNamespaces(ctx, o.Runner, o.Prefix); err != nil {
		return nil, err
	}
	if st.Links, err = listRootLinks(ctx, o.Runner, o.Prefix); err != nil {
		return nil, err
	}
	for _, ns := range st.Namespaces {
		out, err := o.Runner.Run(ctx, ipCmd("netns", "pids", ns))
		if err != nil {
			return nil, fmt.Errorf("listing the processes of %s: %w", ns, err)
		}
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				st.Processes[ns] = append(st.Processes[ns], pid)
			}
		}
	}
	return st, nil
}
