package nslab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// fakeSys stands in for ip and tc: it keeps the namespaces and root
// interfaces that the commands create and delete, and fails the commands
// fail picks.
type fakeSys struct {
	mu     sync.Mutex
	ns     map[string]bool
	links  map[string]bool
	routes string // what "ip -4 route show" prints
	fail   func(Cmd) error
	cmds   []Cmd
}

func newFakeSys() *fakeSys { return &fakeSys{ns: map[string]bool{}, links: map[string]bool{}} }

func (f *fakeSys) Run(_ context.Context, c Cmd) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c)
	if f.fail != nil {
		if err := f.fail(c); err != nil {
			return nil, err
		}
	}
	args := strings.Join(c.Args, " ")
	switch {
	case c.Name != "ip":
		return nil, nil
	case args == "netns list":
		return []byte(strings.Join(keys(f.ns), "\n")), nil
	case args == "-o link show":
		var b strings.Builder
		for i, l := range keys(f.links) {
			fmt.Fprintf(&b, "%d: %s: <BROADCAST,UP> mtu 1500\n", i+10, l)
		}
		return []byte(b.String()), nil
	case args == "-4 route show":
		return []byte(f.routes), nil
	case strings.Contains(args, "-batch -") && !strings.HasPrefix(args, "-n "):
		for _, line := range strings.Split(c.Stdin, "\n") {
			w := strings.Fields(line)
			switch {
			case len(w) >= 3 && w[0] == "netns" && w[1] == "add":
				f.ns[w[2]] = true
			case len(w) >= 3 && w[0] == "netns" && w[1] == "del":
				delete(f.ns, w[2])
			case len(w) >= 4 && w[0] == "link" && w[1] == "add" && w[4] != "netns" && w[4] != "mtu":
				f.links[w[3]] = true // made in the root namespace
			case len(w) >= 3 && w[0] == "link" && w[1] == "del":
				delete(f.links, w[2])
			}
		}
	}
	return nil, nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// empty reports whether nothing of a lab is left.
func (f *fakeSys) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ns)+len(f.links) == 0
}

// asRoot makes the lab believe it runs as root for one test.
func asRoot(t *testing.T, uid int) {
	old := geteuid
	geteuid = func() int { return uid }
	t.Cleanup(func() { geteuid = old })
}

func fakeUp(t *testing.T, sys *fakeSys) (*Lab, Options, error) {
	t.Helper()
	o := Options{Runner: sys, StateDir: filepath.Join(t.TempDir(), "lab"), Scale: 1.0 / 5000}
	l, err := Up(context.Background(), loadJob(t, "testdata/leafspine.yaml"), o)
	return l, o, err
}

// tcUnknown is what tc says for a qdisc the kernel does not have.
func tcUnknown(c Cmd, kinds ...string) error {
	if c.Name != "tc" {
		return nil
	}
	for _, k := range kinds {
		if strings.Contains(c.Stdin, " "+k+" ") {
			return &CmdError{Cmd: c, Output: []byte("Error: Specified qdisc kind is unknown.\nCommand failed -:1\n"), Err: errors.New("exit status 2")}
		}
	}
	return nil
}

func TestUpWithoutShaperSaysSoAndCleansUp(t *testing.T) {
	asRoot(t, 0)
	sys := newFakeSys()
	sys.fail = func(c Cmd) error { return tcUnknown(c, "tbf", "htb") }
	_, o, err := fakeUp(t, sys)
	if !errors.Is(err, ErrNoShaper) {
		t.Fatalf("lab up without tbf and htb: %v", err)
	}
	if want := "the kernel has no tbf qdisc (sch_tbf) and no htb qdisc (sch_htb): lab up needs tbf or htb to shape links"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if !sys.empty() {
		t.Errorf("left behind: %v %v", keys(sys.ns), keys(sys.links))
	}
	if _, err := os.Stat(o.StateDir); err == nil {
		t.Errorf("state directory left behind")
	}
}

func TestUpFallsBackToHTB(t *testing.T) {
	asRoot(t, 0)
	sys := newFakeSys()
	sys.fail = func(c Cmd) error { return tcUnknown(c, "tbf") }
	l, _, err := fakeUp(t, sys)
	if err != nil {
		t.Fatal(err)
	}
	if l.Qdisc != "htb" {
		t.Errorf("shaper %q, want htb", l.Qdisc)
	}
	htb := 0
	for _, c := range sys.cmds {
		if c.Name == "tc" && strings.Contains(c.Stdin, "htb rate 20000000bit ceil 20000000bit") && strings.Contains(c.Stdin, "bfifo limit ") {
			htb++
		}
	}
	// The probe shapes host 0's one link end, then one batch per other
	// namespace.
	if htb != len(l.Namespaces) {
		t.Errorf("%d tc batches with htb, want %d", htb, len(l.Namespaces))
	}
}

func TestUpFailureHalfWayRemovesEverything(t *testing.T) {
	asRoot(t, 0)
	sys := newFakeSys()
	sys.fail = func(c Cmd) error {
		if strings.Contains(c.Stdin, "route replace") && strings.Contains(strings.Join(c.Args, " "), "fl-spine1") {
			return &CmdError{Cmd: c, Output: []byte("Error: Nexthop has invalid gateway.\n"), Err: errors.New("exit status 2")}
		}
		return nil
	}
	_, o, err := fakeUp(t, sys)
	if err == nil || !strings.Contains(err.Error(), "adding the routes of fl-spine1") || !strings.Contains(err.Error(), "invalid gateway") {
		t.Fatalf("lab up: %v", err)
	}
	if !sys.empty() {
		t.Errorf("left behind: %v %v", keys(sys.ns), keys(sys.links))
	}
	if ents, _ := os.ReadDir(o.StateDir); len(ents) > 0 {
		t.Errorf("state left behind: %v", ents)
	}
}

func TestUpPreflight(t *testing.T) {
	t.Run("not root", func(t *testing.T) {
		asRoot(t, 1000)
		sys := newFakeSys()
		if _, _, err := fakeUp(t, sys); !errors.Is(err, ErrNotRoot) {
			t.Errorf("as a user: %v", err)
		}
		if len(sys.cmds) > 0 {
			t.Errorf("ran %v", sys.cmds)
		}
	})
	t.Run("no ip command", func(t *testing.T) {
		asRoot(t, 0)
		sys := newFakeSys()
		sys.fail = func(c Cmd) error {
			if c.Name == "ip" {
				return &CmdError{Cmd: c, Err: exec.ErrNotFound}
			}
			return nil
		}
		_, _, err := fakeUp(t, sys)
		if err == nil || err.Error() != "the ip command (iproute2) is not installed or not on PATH: the namespace lab needs ip, tc and sysctl" {
			t.Errorf("without ip: %v", err)
		}
	})
	t.Run("management subnet taken", func(t *testing.T) {
		asRoot(t, 0)
		sys := newFakeSys()
		sys.routes = "default via 192.0.2.1 dev eth0\n10.254.3.0/24 dev docker0 proto kernel scope link src 10.254.3.1\n"
		_, _, err := fakeUp(t, sys)
		if err == nil || !strings.Contains(err.Error(), `overlaps this machine's route "10.254.3.0/24 dev docker0`) || !strings.Contains(err.Error(), "--mgmt-subnet") {
			t.Errorf("overlapping management subnet: %v", err)
		}
		if !sys.empty() {
			t.Errorf("made %v %v", keys(sys.ns), keys(sys.links))
		}
	})
	t.Run("a lab exists", func(t *testing.T) {
		asRoot(t, 0)
		sys := newFakeSys()
		sys.ns["fl-h0"], sys.ns["fl-spine3"], sys.ns["other"] = true, true, true
		_, o, err := fakeUp(t, sys)
		var ee *ExistsError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "(fl-h0, fl-spine3): run 'fabriclab lab down --state-dir "+o.StateDir+"' first, or lab up --replace") {
			t.Errorf("with a lab there: %v", err)
		}
		if !sys.ns["fl-h0"] || !sys.ns["other"] {
			t.Errorf("a refused lab up removed namespaces")
		}
	})
}

func TestUpReplace(t *testing.T) {
	asRoot(t, 0)
	sys := newFakeSys()
	sys.ns["fl-h0"], sys.ns["fl-h9"], sys.links["fl-mgmt"], sys.ns["other"] = true, true, true, true
	o := Options{Runner: sys, StateDir: filepath.Join(t.TempDir(), "lab"), Replace: true}
	l, err := Up(context.Background(), loadJob(t, "testdata/leafspine.yaml"), o)
	if err != nil {
		t.Fatal(err)
	}
	if sys.ns["fl-h9"] || !sys.ns["fl-h0"] || !sys.ns["other"] || len(sys.ns) != len(l.Namespaces)+1 {
		t.Errorf("namespaces after --replace: %v", keys(sys.ns))
	}
	if _, err := ReadLab(o.StateDir); err != nil {
		t.Error(err)
	}
	// Down with the prefix read from lab.json.
	rm, err := Down(context.Background(), Options{Runner: sys, StateDir: o.StateDir})
	if err != nil || rm.Prefix != "fl-" || len(rm.StateFiles) != 3 {
		t.Fatalf("down: %v %+v", err, rm)
	}
	if !sys.ns["other"] || len(sys.ns) != 1 || len(sys.links) != 0 {
		t.Errorf("after down: %v %v", keys(sys.ns), keys(sys.links))
	}
}
