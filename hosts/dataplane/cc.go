package dataplane

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const ccFile = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// AvailableCC lists the TCP congestion controls this kernel offers (in
// this network namespace), as the kernel orders them.
func AvailableCC() ([]string, error) {
	b, err := os.ReadFile(ccFile)
	if err != nil {
		return nil, fmt.Errorf("dataplane: reading available congestion controls: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// checkCC is the pure half of the check New makes.
func checkCC(cc string, avail []string) error {
	if slices.Contains(avail, cc) {
		return nil
	}
	return fmt.Errorf("dataplane: congestion control %q not available (kernel offers: %s)", cc, strings.Join(avail, " "))
}

// probeCC sets cc on a socket that is never connected: the kernel lets an
// unprivileged process use only tcp_allowed_congestion_control, and a run
// should fail at New, not at its first dial.
func probeCC(cc string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("dataplane: probing congestion control: %w", err)
		}
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
		return fmt.Errorf("dataplane: congestion control %q offered but not settable here: %w", cc, err)
	}
	return nil
}

// ccControl sets TCP_CONGESTION on a socket before connect or listen, so
// the SYN already carries what the algorithm wants (dctcp's ECN).
func ccControl(cc string) func(network, address string, c syscall.RawConn) error {
	if cc == "" {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("setting congestion control %q: %w", cc, serr)
		}
		return nil
	}
}

// readCC reads a connection's congestion control back from the kernel.
func readCC(c *net.TCPConn) (string, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return "", err
	}
	var cc string
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cc, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return "", err
	}
	return cc, gerr
}
