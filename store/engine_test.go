package store

import (
	"strings"
	"testing"
)

// A run's engine is saved with it (migration 6): "hosts" for a run on
// real hosts, whose failed rows do not say where they ran; "" for the
// simulator and for runs saved before the column (migrated in place).
// BeginRun refuses an engine it does not know.
func TestRunEngine(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		s := openT(t, dsn)
		o := testOutput()
		begin := func(engine string) (int64, error) {
			return s.BeginRun(Meta{Name: o.Scenario, ScenarioFile: o.ScenarioFile, ScenarioText: "name: rt\n", Version: o.Version,
				Started: o.Started, Engine: engine}, o.Variants)
		}
		hostsID, err := begin(EngineHosts)
		if err != nil {
			t.Fatal(err)
		}
		simID, err := begin("")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := begin("ssh"); err == nil || !strings.Contains(err.Error(), `unknown engine "ssh"`) {
			t.Errorf("an unknown engine: %v", err)
		}
		for id, want := range map[int64]string{hostsID: EngineHosts, simID: ""} {
			m, err := s.Meta(id)
			if err != nil || m.Engine != want {
				t.Errorf("run %d: engine %q (%v), want %q", id, m.Engine, err, want)
			}
			if _, m, err := s.Run(id); err != nil || m.Engine != want {
				t.Errorf("Run(%d): engine %q (%v), want %q", id, m.Engine, err, want)
			}
		}
		ms, err := s.Runs(Filter{})
		if err != nil || len(ms) != 2 || ms[0].Engine != EngineHosts || ms[1].Engine != "" {
			t.Errorf("Runs: %v %+v", err, ms)
		}

		// A database of schema 5 (no engine column) is migrated: its runs
		// have no engine, as the simulator's.
		if _, err := s.db.Exec(`ALTER TABLE runs DROP COLUMN engine`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(`UPDATE schema_version SET version = 5`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = openT(t, dsn)
		if m, err := s.Meta(hostsID); err != nil || m.Engine != "" {
			t.Errorf("after migration: engine %q (%v), want none", m.Engine, err)
		}
	})
}
