package nslab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// AgentCommand is the command line that runs host h's agent inside its
// namespace: exe agent --listen MGMT_IP:PORT --data-ip DATA_IP
// --token-file STATE/token --allow DATA_SUBNET, through ip netns exec
// (which execs it: the PID is the agent's).
func (l *Lab) AgentCommand(h Host, exe string) []string {
	return []string{"ip", "netns", "exec", h.NS, exe, "agent",
		"--listen", h.AgentAddress(l.AgentPort),
		"--data-ip", h.DataIP.String(),
		"--token-file", filepath.Join(l.StateDir, TokenFile),
		"--allow", l.DataSubnet.String()}
}

// startAgents starts one agent per host, detached (a session of its own,
// output in the state directory), and waits until every one listens
// on its management port.
func (b *builder) startAgents(ctx context.Context) error {
	l := b.l
	exe := b.o.AgentExe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding the fabriclab binary for the agents: %w", err)
		}
	}
	exited := make([]chan error, len(l.Hosts))
	for i := range l.Hosts {
		h := &l.Hosts[i]
		argv := l.AgentCommand(*h, exe)
		logPath := agentLog(l.StateDir, h.Host)
		logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("agent log: %w", err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), b.o.AgentEnv...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err = cmd.Start()
		logf.Close()
		if err != nil {
			return fmt.Errorf("starting the agent of host %d: %w", h.Host, err)
		}
		fmt.Fprintf(b.log, "agent of host %d: pid %d, log %s\n", h.Host, cmd.Process.Pid, logPath)
		h.AgentPID, h.AgentLog = cmd.Process.Pid, logPath
		ch := make(chan error, 1)
		exited[i] = ch
		// Reap it when it ends (in a process that outlives Up, a test).
		go func() { ch <- cmd.Wait() }()
	}
	deadline := time.Now().Add(b.o.AgentWait)
	for i, h := range l.Hosts {
		if err := waitAgent(ctx, h, l.AgentPort, exited[i], deadline); err != nil {
			return err
		}
	}
	return nil
}

// waitAgent waits until h's agent listens on its port, exits, or the
// deadline passes. It looks at the agent's namespace's sockets
// (/proc/PID/net/tcp) rather than connecting, so that the agent logs no
// aborted handshake.
func waitAgent(ctx context.Context, h Host, port int, exited <-chan error, deadline time.Time) error {
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the agent of host %d exited (%v): see %s", h.Host, err, h.AgentLog)
		default:
		}
		if listening(h.AgentPID, port) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the agent of host %d does not listen on %s: see %s", h.Host, h.AgentAddress(port), h.AgentLog)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listening reports whether the network namespace of process pid has a
// TCP socket listening on port.
func listening(pid, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			// sl local_address rem_address st …; st 0A is LISTEN.
			w := strings.Fields(line)
			if len(w) > 3 && strings.HasSuffix(w[1], want) && w[3] == "0A" {
				return true
			}
		}
	}
	return false
}
