package main

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fabriclab/scenario"
	"fabriclab/store"
	"fabriclab/units"
)

// TestWaitFailsARunRiverGaveUpOn: when River is done with a queued run's
// jobs and gave up on one (discarded: no worker marked the run), `run
// --queue --wait` marks the run failed, as serve --queue does, rather
// than leaving it queued for ever; `runs` and `export` then say failed.
func TestWaitFailsARunRiverGaveUpOn(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(scen, []byte(`name: g
topology: {kind: leaf-spine, hosts: 8, hosts_per_leaf: 4, spines: 2}
workload: {kind: alltoall, ranks: 8, sizes: {list: [64KiB, 1MiB]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "q.db")
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := cli("run", "--queue", "--wait", "-q", scen, "--db", db)
		done <- result{code, stdout, stderr}
	}()
	// Once the jobs are queued, play what no worker is left to tell: the
	// smaller job saved its row and completed, River discarded the other.
	var raw *sql.DB
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if raw == nil {
			if _, err := os.Stat(db); err == nil {
				raw = rawDB(t, db)
			}
		}
		var n int
		if raw != nil && raw.QueryRow(`SELECT COUNT(*) FROM river_job`).Scan(&n) == nil && n == 2 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the jobs were not queued")
		}
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j := scenario.Job{Variant: "base", Size: units.Size(64 << 10)}
	if _, _, err := st.AddQueuedResult(1, 0, 0, fakeResult(j)); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05.000")
	for _, q := range []string{
		`UPDATE river_job SET state = 'completed', attempt = 1, finalized_at = '` + now + `' WHERE json_extract(args, '$.size') = 0`,
		`UPDATE river_job SET state = 'discarded', attempt = 5, finalized_at = '` + now + `',
			errors = jsonb('[{"at":"2026-01-01T00:00:00Z","attempt":5,"error":"it ran longer than the job timeout","trace":""}]')
			WHERE json_extract(args, '$.size') = 1`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("run --queue --wait did not end")
	}
	if r.code != exitError || !strings.Contains(r.stderr, "run 1 failed: 1 of 2 jobs never ran: it ran longer than the job timeout") {
		t.Errorf("run --queue --wait: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	m, err := st.Meta(1)
	if err != nil || m.Status != store.StatusFailed || m.Missing() != 1 {
		t.Errorf("run 1: %s, %d missing (%v); want failed, 1 missing", m.Status, m.Missing(), err)
	}
	if code, stdout, _ := cli("runs", "--db", db); code != 0 || !strings.Contains(stdout, "failed (1 of 2 rows saved)") {
		t.Errorf("runs: exit %d\n%s", code, stdout)
	}
}

// TestWorkerFlagErrorsNameTheFlag: a bad --job-timeout names it alone
// (--poll is hidden), and --concurrency 0 is refused as -1 is.
func TestWorkerFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--job-timeout", "0s"}, "--job-timeout must be a positive duration, got 0s", "--poll"},
		{[]string{"--job-timeout", "-1m"}, "--job-timeout must be a positive duration", "--poll"},
		{[]string{"--concurrency", "0"}, "--concurrency must be at least 1, got 0", ""},
		{[]string{"-c", "-1"}, "--concurrency must be at least 1, got -1", ""},
	} {
		// A worker that accepts the flags runs until ctx ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stderr syncBuffer
		code := newApp(io.Discard, &stderr).execute(ctx, append([]string{"worker", "--db", filepath.Join(t.TempDir(), "none.db")}, c.args...))
		cancel()
		if msg := stderr.String(); code != exitUsage || !strings.Contains(msg, c.want) || (c.not != "" && strings.Contains(msg, c.not)) {
			t.Errorf("worker %v: exit %d, stderr %q; want %d and %q", c.args, code, msg, exitUsage, c.want)
		}
	}
}
