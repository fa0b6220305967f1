package nslab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"fabriclab/scenario"
)

// geteuid is os.Geteuid; tests of the failure paths replace it.
var geteuid = os.Geteuid

// builder builds (and on failure removes) one lab.
type builder struct {
	o   Options
	r   Runner
	log io.Writer
	l   *Lab
}

// Up builds the lab of job's scenario (see Plan and the package doc),
// writes its state and, with Options.StartAgents, starts its agents. It
// refuses when a lab with the prefix exists (unless Options.Replace), and
// removes what it made when a step fails.
func Up(ctx context.Context, job scenario.Job, o Options) (*Lab, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := Plan(job, o)
	if err != nil {
		return nil, err
	}
	b := &builder{o: o, r: o.Runner, log: o.Log, l: l}
	if err := b.preflight(ctx); err != nil {
		return nil, err
	}
	if err := b.checkFree(ctx); err != nil {
		return nil, err
	}
	if err := b.checkMgmtSubnet(ctx); err != nil {
		return nil, err
	}
	l.Created = time.Now().UTC().Truncate(time.Second)
	if err := b.build(ctx); err != nil {
		return nil, b.undo(err)
	}
	if err := writeState(l); err != nil {
		return nil, b.undo(err)
	}
	if o.StartAgents {
		if err := b.startAgents(ctx); err != nil {
			return nil, b.undo(err)
		}
		if err := writeLabJSON(l); err != nil {
			return nil, b.undo(err)
		}
	}
	return l, nil
}

// undo removes the half-built lab after err and returns err (with what
// could not be removed, if anything).
func (b *builder) undo(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fmt.Fprintf(b.log, "removing the half-built lab: %v\n", err)
	if _, derr := down(ctx, b.o, b.o.Prefix, true); derr != nil {
		return fmt.Errorf("%w (and removing the half-built lab: %v)", err, derr)
	}
	return err
}

// preflight checks for root and for the commands, with one clear line
// each.
func (b *builder) preflight(ctx context.Context) error {
	if geteuid() != 0 {
		return ErrNotRoot
	}
	for _, name := range []string{"ip", "tc"} {
		if _, err := b.run(ctx, Cmd{Name: name, Args: []string{"-V"}}); err != nil {
			if notFound(err) {
				return &MissingCommandError{Name: name}
			}
			return err
		}
	}
	return nil
}

// checkFree refuses (or with Replace removes) an existing lab of the
// prefix, found by its namespaces and root interfaces, and state of any
// lab in the state directory.
func (b *builder) checkFree(ctx context.Context) error {
	var found []string
	nss, err := listNamespaces(ctx, b.r, b.o.Prefix)
	if err != nil {
		return err
	}
	found = append(found, nss...)
	links, err := listRootLinks(ctx, b.r, b.o.Prefix)
	if err != nil {
		return err
	}
	found = append(found, links...)
	downCmd := downCommand(b.o.Prefix, b.o.StateDir)
	old, oldErr := ReadLab(b.o.StateDir)
	switch {
	case oldErr == nil && old.Prefix != b.o.Prefix:
		found = append(found, fmt.Sprintf("the state of lab %s in %s", old.Prefix, b.o.StateDir))
		downCmd = downCommand(old.Prefix, b.o.StateDir)
	case oldErr == nil || !errors.Is(oldErr, os.ErrNotExist):
		found = append(found, labFile(b.o.StateDir))
	}
	if len(found) == 0 {
		return nil
	}
	if !b.o.Replace {
		return &ExistsError{Prefix: b.o.Prefix, Found: found, Down: downCmd}
	}
	if oldErr == nil && old.Prefix != b.o.Prefix {
		if _, err := down(ctx, b.o, old.Prefix, false); err != nil {
			return fmt.Errorf("removing the lab %s of %s: %w", old.Prefix, b.o.StateDir, err)
		}
	}
	_, err = down(ctx, b.o, b.o.Prefix, false)
	return err
}

// checkMgmtSubnet refuses a management subnet that overlaps a route of
// the root namespace: the lab's bridge would take traffic from it.
func (b *builder) checkMgmtSubnet(ctx context.Context) error {
	out, err := b.run(ctx, ipCmd("-4", "route", "show"))
	if err != nil {
		return fmt.Errorf("reading the routes of this machine: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		dst := f[0]
		if len(f) > 1 && (f[0] == "unicast" || f[0] == "blackhole" || f[0] == "unreachable" || f[0] == "prohibit") {
			dst = f[1]
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			a, aerr := netip.ParseAddr(dst)
			if aerr != nil {
				continue
			}
			p = hostPrefix(a)
		}
		if p.Overlaps(b.o.MgmtSubnet) {
			return fmt.Errorf("the management subnet %s overlaps this machine's route %q: choose another with --mgmt-subnet", b.o.MgmtSubnet, strings.TrimSpace(line))
		}
	}
	return nil
}
