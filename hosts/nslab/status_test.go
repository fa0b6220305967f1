package nslab

import (
	"context"
	"testing"
)

// Status finds a lab by its names and its state, changes nothing, and
// finds nothing once it is down.
func TestLabStatus(t *testing.T) {
	asRoot(t, 0)
	sys := newFakeSys()
	l, o, err := fakeUp(t, sys)
	if err != nil {
		t.Fatal(err)
	}
	before := len(sys.cmds)
	st, err := LabStatus(context.Background(), Options{Runner: sys, StateDir: o.StateDir})
	if err != nil {
		t.Fatal(err)
	}
	if st.Prefix != l.Prefix || st.Lab == nil || st.Empty() {
		t.Fatalf("status %+v", st)
	}
	if up, want := st.Hosts(); up != len(l.Hosts) || want != len(l.Hosts) {
		t.Errorf("hosts up %d of %d, want all %d", up, want, len(l.Hosts))
	}
	if len(st.Namespaces) != len(l.Hosts)+len(l.Switches) {
		t.Errorf("%d namespaces, want %d hosts + %d switches", len(st.Namespaces), len(l.Hosts), len(l.Switches))
	}
	if st.Agents() != 0 {
		t.Errorf("%d agents on a fake system", st.Agents())
	}
	for _, c := range sys.cmds[before:] {
		if a := c.Args; c.Name != "ip" || len(a) < 2 || !(a[0] == "netns" && (a[1] == "list" || a[1] == "pids") || a[0] == "-o") {
			t.Errorf("status ran %s %v", c.Name, a)
		}
	}
	if _, err := Down(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	st, err = LabStatus(context.Background(), Options{Runner: sys, StateDir: o.StateDir})
	if err != nil || !st.Empty() {
		t.Errorf("after down: %+v, %v", st, err)
	}
}
