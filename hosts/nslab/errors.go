package nslab

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotRoot: network namespaces, veths and qdiscs need root.
var ErrNotRoot = errors.New("the namespace lab needs root (network namespaces, veth links, qdiscs): run it with sudo")

// ErrNoShaper: the kernel has neither tbf nor htb.
var ErrNoShaper = errors.New("the kernel has no tbf qdisc (sch_tbf) and no htb qdisc (sch_htb): lab up needs tbf or htb to shape links")

// MissingCommandError: ip, tc or sysctl is not installed.
type MissingCommandError struct{ Name string }

func (e *MissingCommandError) Error() string {
	pkg := "iproute2"
	if e.Name == "sysctl" {
		pkg = "procps"
	}
	return fmt.Sprintf("the %s command (%s) is not installed or not on PATH: the namespace lab needs ip, tc and sysctl", e.Name, pkg)
}

// ExistsError: a lab with the prefix (or state in the state directory)
// is already there.
type ExistsError struct {
	Prefix string // the prefix lab up was asked for
	// Found lists what is there: namespaces, interfaces, the state file.
	Found []string
	// Down is the command that removes it.
	Down string
}

func (e *ExistsError) Error() string {
	found := e.Found
	more := ""
	if len(found) > 4 {
		found, more = found[:4], fmt.Sprintf(" and %d more", len(e.Found)-4)
	}
	return fmt.Sprintf("a lab already exists here (%s%s): run '%s' first, or lab up --replace",
		strings.Join(found, ", "), more, e.Down)
}

// downCommand is the lab down command line for a lab of prefix with its
// state in dir.
func downCommand(prefix, dir string) string {
	c := "fabriclab lab down"
	if prefix != DefaultPrefix {
		c += " --prefix " + prefix
	}
	if dir != StateDir() {
		c += " --state-dir " + dir
	}
	return c
}

// unknownQdisc reports whether a tc failure says the qdisc kind does not
// exist (the kernel has no such scheduler and cannot load it).
func unknownQdisc(err error) bool {
	s := output(err)
	return strings.Contains(s, "qdisc kind is unknown") || strings.Contains(s, "Unknown qdisc") ||
		strings.Contains(s, "No such file or directory")
}
