package nslab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Cmd is one command the lab runs: ip, tc or sysctl (the last through
// "ip netns exec"). Stdin feeds the batch forms (ip -batch -, tc -batch -).
type Cmd struct {
	Name  string
	Args  []string
	Stdin string
}

func (c Cmd) String() string { return c.Name + " " + strings.Join(c.Args, " ") }

// Runner runs a command and returns what it printed (stdout and stderr).
// The lab builds everything through one, so that a test can stand in for
// the system.
type Runner interface {
	Run(ctx context.Context, c Cmd) ([]byte, error)
}

// ExecRunner runs commands with os/exec.
type ExecRunner struct{}

// Run runs c and returns its combined output; a failure is a *CmdError.
func (ExecRunner) Run(ctx context.Context, c Cmd) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, &CmdError{Cmd: c, Output: out, Err: err}
	}
	return out, nil
}

// CmdError is a command that failed: the command, what it printed and how
// it ended (an *exec.ExitError, or exec.ErrNotFound when it is missing).
type CmdError struct {
	Cmd    Cmd
	Output []byte
	Err    error
}

func (e *CmdError) Error() string {
	msg := firstLines(e.Output, 2)
	if msg == "" {
		return fmt.Sprintf("%s: %v", e.Cmd, e.Err)
	}
	return fmt.Sprintf("%s: %s (%v)", e.Cmd, msg, e.Err)
}

func (e *CmdError) Unwrap() error { return e.Err }

// firstLines is the first n non-empty lines of out joined by "; ", each
// cut to 200 bytes (ip and tc say what went wrong in their first lines).
func firstLines(out []byte, n int) string {
	var parts []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if len(l) > 200 {
			l = l[:200]
		}
		parts = append(parts, string(l))
		if len(parts) == n {
			break
		}
	}
	return strings.Join(parts, "; ")
}

// output is the text of a failed command (its output and error), for
// matching the kernel's and iproute2's messages.
func output(err error) string {
	var ce *CmdError
	if errors.As(err, &ce) {
		return string(ce.Output) + " " + ce.Err.Error()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// notFound reports whether err is a command that is not installed.
func notFound(err error) bool { return errors.Is(err, exec.ErrNotFound) }

// run runs c through r, with c logged to log.
func (b *builder) run(ctx context.Context, c Cmd) ([]byte, error) {
	if b.log != nil {
		var sb strings.Builder
		fmt.Fprintf(&sb, "+ %s\n", c)
		for _, line := range strings.Split(strings.TrimSuffix(c.Stdin, "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(&sb, "    %s\n", line)
			}
		}
		io.WriteString(b.log, sb.String())
	}
	return b.r.Run(ctx, c)
}

func ipCmd(args ...string) Cmd { return Cmd{Name: "ip", Args: args} }

// ipBatch runs lines with "ip [-n ns] -batch -" (one process instead of
// one per line).
func ipBatch(ns string, lines []string) Cmd {
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	return Cmd{Name: "ip", Args: args, Stdin: strings.Join(lines, "\n") + "\n"}
}

// tcBatch runs lines with "tc -n ns -batch -".
func tcBatch(ns string, lines []string) Cmd {
	return Cmd{Name: "tc", Args: []string{"-n", ns, "-batch", "-"}, Stdin: strings.Join(lines, "\n") + "\n"}
}

// sysctlCmd sets kernel parameters inside ns. -e skips keys the kernel
// does not have (IPv6 ones on a kernel without IPv6).
func sysctlCmd(ns string, kv ...string) Cmd {
	return Cmd{Name: "ip", Args: append([]string{"netns", "exec", ns, "sysctl", "-q", "-e", "-w"}, kv...)}
}
