package nslab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Removed is what Down removed.
type Removed struct {
	Prefix     string
	Namespaces []string
	Links      []string // interfaces of the root namespace (the bridge, leftover veths)
	Processes  []int    // processes that were running in the namespaces (the agents)
	StateFiles []string
}

// Empty reports whether there was nothing to remove.
func (r *Removed) Empty() bool {
	return len(r.Namespaces)+len(r.Links)+len(r.Processes)+len(r.StateFiles) == 0
}

// Down removes the lab with Options.Prefix — or, when Prefix is empty, the
// prefix of the state directory's lab.json, else DefaultPrefix: it stops
// every process in its namespaces (the agents), deletes every namespace
// and root-namespace interface whose name starts with the prefix, and the
// state files. It finds them by name, so it cleans up after a crash that
// left lab.json missing or stale; with nothing there it does nothing.
func Down(ctx context.Context, o Options) (*Removed, error) {
	prefix := o.Prefix
	if prefix == "" {
		dir := o.StateDir
		if dir == "" {
			dir = StateDir()
		}
		if l, err := ReadLab(dir); err == nil && CheckPrefix(l.Prefix) == nil {
			prefix = l.Prefix
		}
	}
	o.Prefix = prefix
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if geteuid() != 0 {
		return nil, ErrNotRoot
	}
	return down(ctx, o, o.Prefix, false)
}

// down removes the lab of prefix, and the state directory's files unless
// its lab.json is another prefix's; keepLogs leaves the agents' logs (Up's
// undo: its error points at them).
func down(ctx context.Context, o Options, prefix string, keepLogs bool) (*Removed, error) {
	rm := &Removed{Prefix: prefix}
	if err := CheckPrefix(prefix); err != nil {
		return rm, err // never match more than the lab's own names
	}
	nss, err := listNamespaces(ctx, o.Runner, prefix)
	if err != nil {
		return rm, err
	}
	rm.Processes = stopProcesses(ctx, o, nss)
	var delErrs []error // said when something stays
	if len(nss) > 0 {
		var lines []string
		for _, ns := range nss {
			lines = append(lines, "netns del "+ns)
		}
		// -force: one namespace that cannot go does not keep the others.
		c := ipBatch("", lines)
		c.Args = append([]string{"-force"}, c.Args...)
		if _, err := o.Runner.Run(ctx, c); err != nil {
			delErrs = append(delErrs, err)
		}
	}
	// The root ends of the management veths go with their namespaces;
	// what is left is the bridge and whatever a crash left behind.
	links, err := listRootLinks(ctx, o.Runner, prefix)
	if err != nil {
		return rm, err
	}
	if len(links) > 0 {
		var lines []string
		for _, ln := range links {
			lines = append(lines, "link del "+ln)
		}
		c := ipBatch("", lines)
		c.Args = append([]string{"-force"}, c.Args...)
		if _, err := o.Runner.Run(ctx, c); err != nil {
			delErrs = append(delErrs, err)
		}
	}
	// What is still there could not be removed. The kernel dismantles a
	// namespace's interfaces after the namespace is gone, so give the
	// root ends of the management veths a moment.
	var leftNS, leftLinks []string
	for try := 0; ; try++ {
		if leftNS, err = listNamespaces(ctx, o.Runner, prefix); err != nil {
			return rm, err
		}
		if leftLinks, err = listRootLinks(ctx, o.Runner, prefix); err != nil {
			return rm, err
		}
		if len(leftNS)+len(leftLinks) == 0 || try == 20 || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	rm.Namespaces = subtract(nss, leftNS)
	rm.Links = subtract(links, leftLinks)
	if left := append(leftNS, leftLinks...); len(left) > 0 {
		return rm, fmt.Errorf("could not remove %s of the lab %s: %v", strings.Join(left, ", "), prefix, errors.Join(delErrs...))
	}
	rm.StateFiles, err = removeState(o.StateDir, prefix, keepLogs)
	return rm, err
}

// listNamespaces lists the namespaces whose name starts with prefix
// ("ip netns list" prints "NAME" or "NAME (id: N)").
func listNamespaces(ctx context.Context, r Runner, prefix string) ([]string, error) {
	out, err := r.Run(ctx, ipCmd("netns", "list"))
	if err != nil {
		if notFound(err) {
			return nil, &MissingCommandError{Name: "ip"}
		}
		return nil, fmt.Errorf("listing the network namespaces: %w", err)
	}
	var nss []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			nss = append(nss, f[0])
		}
	}
	sort.Strings(nss)
	return nss, nil
}

// listRootLinks lists the root namespace's interfaces whose name starts
// with prefix ("ip -o link show" prints "N: NAME[@PEER]: <FLAGS> …").
func listRootLinks(ctx context.Context, r Runner, prefix string) ([]string, error) {
	out, err := r.Run(ctx, ipCmd("-o", "link", "show"))
	if err != nil {
		if notFound(err) {
			return nil, &MissingCommandError{Name: "ip"}
		}
		return nil, fmt.Errorf("listing the interfaces: %w", err)
	}
	var links []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name := strings.TrimSuffix(f[1], ":")
		name, _, _ = strings.Cut(name, "@")
		if strings.HasPrefix(name, prefix) {
			links = append(links, name)
		}
	}
	sort.Strings(links)
	return links, nil
}

// stopProcesses stops every process in the namespaces nss — the agents,
// and anything else started in them — with SIGTERM, then SIGKILL after
// two seconds. The processes are found by namespace ("ip netns pids"),
// never from lab.json: a PID recorded before a reboot may be another
// process now.
func stopProcesses(ctx context.Context, o Options, nss []string) []int {
	var pids []int
	for _, ns := range nss {
		out, err := o.Runner.Run(ctx, ipCmd("netns", "pids", ns))
		if err != nil {
			fmt.Fprintf(o.Log, "listing the processes of %s: %v\n", ns, err)
			continue
		}
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) == 0 {
		return nil
	}
	signalAll(pids, syscall.SIGTERM)
	if !waitGone(ctx, pids, 2*time.Second) {
		signalAll(pids, syscall.SIGKILL)
		waitGone(ctx, pids, time.Second)
	}
	return pids
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// waitGone waits until none of pids is running (a zombie no longer has a
// network namespace, so it counts as gone).
func waitGone(ctx context.Context, pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		alive := false
		for _, pid := range pids {
			if _, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net"); err == nil {
				alive = true
				break
			}
		}
		if !alive {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func subtract(a, b []string) []string {
	drop := map[string]bool{}
	for _, s := range b {
		drop[s] = true
	}
	var out []string
	for _, s := range a {
		if !drop[s] {
			out = append(out, s)
		}
	}
	return out
}
