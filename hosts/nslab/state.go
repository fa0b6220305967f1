package nslab

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"fabriclab/internal/inputfile"
)

// The files of the state directory.
const (
	LabFile    = "lab.json"
	TokenFile  = "token"
	AgentsFile = "agents.yaml"
)

// agentLogGlob matches the agents' logs (agent-h0.log, …).
const agentLogGlob = "agent-h*.log"

func labFile(dir string) string { return filepath.Join(dir, LabFile) }

// AgentsPath is the agents file of the lab in dir, for run --agents.
func AgentsPath(dir string) string { return filepath.Join(dir, AgentsFile) }

// agentLog is host h's agent log in dir.
func agentLog(dir string, h int) string { return filepath.Join(dir, "agent-h"+itoa(h)+".log") }

// ReadLab reads the lab.json of the lab whose state is in dir (an error
// wrapping os.ErrNotExist when there is none).
func ReadLab(dir string) (*Lab, error) {
	f, err := inputfile.Open(labFile(dir), 64<<20)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", labFile(dir), err)
	}
	var l Lab
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s is not a lab's state (%v)", labFile(dir), err)
	}
	return &l, nil
}

// writeState writes a new token, lab.json and agents.yaml into l's state
// directory (created if needed).
func writeState(l *Lab) error {
	if err := os.MkdirAll(l.StateDir, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return fmt.Errorf("making the agents' token: %w", err)
	}
	if err := writeFile(filepath.Join(l.StateDir, TokenFile), []byte(hex.EncodeToString(tok)+"\n"), 0o600); err != nil {
		return err
	}
	if err := writeFile(AgentsPath(l.StateDir), agentsYAML(l), 0o644); err != nil {
		return err
	}
	return writeLabJSON(l)
}

// writeLabJSON (re)writes lab.json.
func writeLabJSON(l *Lab) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(labFile(l.StateDir), append(data, '\n'), 0o644)
}

// agentsYAML is the agents file (hosts/inventory reads it): one agent
// per host, on its management address.
func agentsYAML(l *Lab) []byte {
	var sb strings.Builder
	sb.WriteString("# written by fabriclab lab up\n")
	fmt.Fprintf(&sb, "token_file: %s            # relative to this file\n", TokenFile)
	fmt.Fprintf(&sb, "scale: %s                # the lab's links run at this fraction of the scenario's rates\n", l.ScaleText)
	sb.WriteString("agents:\n")
	for _, h := range l.Hosts {
		fmt.Fprintf(&sb, "  - address: %s # %s\n", h.AgentAddress(l.AgentPort), h.NS)
		fmt.Fprintf(&sb, "    hosts:\n      - {host: %d, data_ip: %s}\n", h.Host, h.DataIP)
	}
	return []byte(sb.String())
}

// writeFile replaces path with data atomically (a reader never sees half
// a file), with mode perm.
func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// removeState removes the lab's files from dir (never anything else; the
// agents' logs unless keepLogs), and dir itself when that leaves it empty
// — unless dir's lab.json is another prefix's lab.
func removeState(dir, prefix string, keepLogs bool) ([]string, error) {
	if l, err := ReadLab(dir); err == nil && l.Prefix != prefix {
		return nil, nil
	}
	names := []string{labFile(dir), filepath.Join(dir, TokenFile), AgentsPath(dir)}
	if !keepLogs {
		logs, _ := filepath.Glob(filepath.Join(dir, agentLogGlob))
		names = append(names, logs...)
	}
	var removed []string
	var errs []error
	for _, n := range names {
		err := os.Remove(n)
		switch {
		case err == nil:
			removed = append(removed, n)
		case !errors.Is(err, os.ErrNotExist):
			errs = append(errs, err)
		}
	}
	_ = os.Remove(dir) // only if empty
	return removed, errors.Join(errs...)
}
