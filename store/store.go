// Package store keeps the results of `fabriclab run` in a database: one row
// per run, its variants, and one row per variant × data size with the
// output contract's columns as real columns and the whole SizeResult as
// gzip-compressed JSON.
//
// Per-flow records (sim.record_flows) are not in that JSON: they go to
// their own table in chunks of 65,536 records, column by column as
// varint deltas and deflate-compressed (flowcodec.go), about 4 bytes per
// record instead of ~200 bytes of JSON.
//
// Open picks the backend from the DSN: a file path (SQLite via
// modernc.org/sqlite, pure Go, WAL) or a postgres:// URL (PostgreSQL via
// pgx). The SQL is portable: no backend-only functions, `?` placeholders
// rewritten by the dialect, column types from the dialect.
//
// Every error is one line.
package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"fabriclab/metrics"
	"fabriclab/report"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// ErrNotFound is returned (wrapped) for a run id that is not in the database.
var ErrNotFound = errors.New("no such run")

// dialect is what differs between backends.
type dialect struct {
	name       string
	driver     string
	autoID     string // column type of an auto-increment primary key
	blob       string // column type of binary data
	migrations []string
}

// rebind turns `?` placeholders into the dialect's. SQLite takes `?`
// as is; PostgreSQL numbers them ($1, $2, …). Queries hold no `?` inside
// string literals.
func (d *dialect) rebind(q string) string {
	if d.name != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

var sqliteDialect = &dialect{
	name:   "sqlite",
	driver: "sqlite",
	autoID: "INTEGER PRIMARY KEY AUTOINCREMENT",
	blob:   "BLOB",
}

var postgresDialect = &dialect{
	name:   "postgres",
	driver: "pgx",
	autoID: "BIGSERIAL PRIMARY KEY",
	blob:   "BYTEA",
}

// migrations are applied in order; schema_version holds how many ran. Never
// edit one that has shipped: append a new one.
func migrationsFor(d *dialect) []string {
	return []string{
		`CREATE TABLE runs (
			id ` + d.autoID + `,
			name TEXT NOT NULL,
			scenario_file TEXT NOT NULL,
			scenario_text TEXT NOT NULL,
			seed BIGINT NOT NULL,
			sets TEXT NOT NULL,
			sweeps TEXT NOT NULL,
			version TEXT NOT NULL,
			started TEXT NOT NULL,
			finished TEXT NOT NULL,
			status TEXT NOT NULL,
			tags TEXT NOT NULL,
			note TEXT NOT NULL,
			host TEXT NOT NULL,
			pid BIGINT NOT NULL
		);
		CREATE TABLE variants (
			run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			idx INTEGER NOT NULL,
			name TEXT NOT NULL,
			collective TEXT NOT NULL,
			parent TEXT NOT NULL,
			sweep TEXT NOT NULL,
			PRIMARY KEY (run_id, idx)
		);
		CREATE TABLE results (
			run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			variant_idx INTEGER NOT NULL,
			size_idx INTEGER NOT NULL,
			size_bytes BIGINT NOT NULL,
			ranks INTEGER NOT NULL,
			cct_s DOUBLE PRECISION NOT NULL,
			algbw_gbps DOUBLE PRECISION NOT NULL,
			busbw_gbps DOUBLE PRECISION NOT NULL,
			ideal_s DOUBLE PRECISION NOT NULL,
			ideal_pct DOUBLE PRECISION NOT NULL,
			pfc_pauses BIGINT NOT NULL,
			ecn_marks BIGINT NOT NULL,
			drops BIGINT NOT NULL,
			retransmits BIGINT NOT NULL,
			cnps BIGINT NOT NULL,
			timeouts BIGINT NOT NULL,
			complete BOOLEAN NOT NULL,
			routed_ideal_s DOUBLE PRECISION NOT NULL,
			routed_ideal_pct DOUBLE PRECISION NOT NULL,
			error TEXT NOT NULL,
			data ` + d.blob + ` NOT NULL,
			PRIMARY KEY (run_id, variant_idx, size_idx)
		);
		CREATE INDEX results_run ON results(run_id)`,
		// 2: per-flow records out of the result JSON, in compressed
		// columnar chunks (flowcodec.go).
		`CREATE TABLE flow_records (
			run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			variant_idx INTEGER NOT NULL,
			size_idx INTEGER NOT NULL,
			chunk INTEGER NOT NULL,
			records INTEGER NOT NULL,
			data ` + d.blob + ` NOT NULL,
			PRIMARY KEY (run_id, variant_idx, size_idx, chunk)
		)`,
	}
}

// SchemaVersion is the schema this build creates and understands.
var SchemaVersion = len(migrationsFor(sqliteDialect))

// Store is an open results database. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	d    *dialect
	name string // for messages
}

// Meta describes a run (everything but its results).
type Meta struct {
	ID           int64
	Name         string
	ScenarioFile string
	ScenarioText string
	Seed         uint64
	Sets, Sweeps []string
	Version      string
	Started      string // RFC 3339, as in report.Output
	Finished     string // RFC 3339; empty while running
	Status       string
	Tags         []string
	Note         string
	Host         string // where it ran, and the process id, to spot stale "running" rows
	PID          int
	// Filled by Runs and Run:
	Variants, Rows int
}

// Stale reports whether a run still marked running was started by a
// process of this host that no longer exists (it was killed).
func (m Meta) Stale() bool {
	if m.Status != StatusRunning || m.PID <= 0 {
		return false
	}
	if h, _ := os.Hostname(); h != m.Host {
		return false // cannot tell
	}
	err := syscall.Kill(m.PID, 0)
	return errors.Is(err, syscall.ESRCH)
}

// Filter selects runs: Tag must be one of the run's tags, Name a substring
// of its name, and the run started at or after Since and before Until (all
// optional; zero times do not filter).
type Filter struct {
	Tag, Name    string
	Since, Until time.Time
}

func (f Filter) match(m Meta) bool {
	if f.Name != "" && !strings.Contains(m.Name, f.Name) {
		return false
	}
	if f.Tag != "" && !hasTag(m.Tags, f.Tag) {
		return false
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		t, err := time.Parse(time.RFC3339, m.Started)
		if err != nil {
			return false
		}
		if !f.Since.IsZero() && t.Before(f.Since) || !f.Until.IsZero() && !t.Before(f.Until) {
			return false
		}
	}
	return true
}

// Open opens (creating if needed) the database named by dsn: a file path,
// "sqlite:PATH", or a PostgreSQL URL (postgres://user:pass@host:port/db?…,
// the database must exist). The schema is migrated to the current version;
// a database from a newer fabriclab is refused. Open checks that the
// database can be written.
func Open(dsn string) (*Store, error) {
	switch {
	case IsPostgres(dsn):
		return openPostgres(dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		dsn = strings.TrimPrefix(dsn, "sqlite:")
	}
	if dsn == "" {
		return nil, errors.New("store: empty database path")
	}
	return openSQLite(dsn)
}

func openSQLite(path string) (*Store, error) {
	fail := func(err error) error {
		return fmt.Errorf("store: cannot open database %s: %s", path, oneLine(err.Error()))
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fail(err)
		}
	}
	q := "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open(sqliteDialect.driver, "file:"+path+q)
	if err != nil {
		return nil, fail(err)
	}
	// One connection: SQLite has one writer anyway, and this serializes
	// the writes of parallel jobs without SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, d: sqliteDialect, name: path}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// connectTimeout bounds how long Open waits for a PostgreSQL server.
const connectTimeout = 10 * time.Second

func openPostgres(dsn string) (*Store, error) {
	name := dsn
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, errors.New("store: cannot parse the PostgreSQL URL (postgres://user:password@host:port/database)")
	}
	name = u.Redacted() // never print a password
	fail := func(err error) error {
		return fmt.Errorf("store: cannot open database %s: %s", name, oneLine(err.Error()))
	}
	if u.Query().Get("connect_timeout") == "" {
		q := u.Query()
		q.Set("connect_timeout", strconv.Itoa(int(connectTimeout/time.Second)))
		u.RawQuery = q.Encode()
	}
	db, err := sql.Open(postgresDialect.driver, u.String())
	if err != nil {
		return nil, fail(err)
	}
	db.SetMaxOpenConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fail(err)
	}
	s := &Store{db: db, d: postgresDialect, name: name}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Name is the database's path, for messages.
func (s *Store) Name() string { return s.name }

func (s *Store) migrate() error {
	fail := func(err error) error {
		return fmt.Errorf("store: database %s: %s", s.name, oneLine(err.Error()))
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if s.d == postgresDialect {
		// Two processes opening a fresh database at once must not both
		// migrate it: the lock is held until this transaction ends.
		if _, err := tx.Exec(`SELECT pg_advisory_xact_lock(7243011)`); err != nil {
			return fail(err)
		}
	}
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fail(err)
	}
	var v int
	err = tx.QueryRow(`SELECT version FROM schema_version`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(`INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	}
	ms := migrationsFor(s.d)
	if v > len(ms) {
		return fmt.Errorf("store: database %s has schema %d, this fabriclab knows up to %d", s.name, v, len(ms))
	}
	for i := v; i < len(ms); i++ {
		for _, stmt := range strings.Split(ms[i], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.Exec(stmt); err != nil {
				return fail(fmt.Errorf("migration %d: %w", i+1, err))
			}
		}
	}
	// Also proves the database is writable (a read-only file fails here).
	if _, err := tx.Exec(s.d.rebind(`UPDATE schema_version SET version = ?`), len(ms)); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

func (s *Store) errf(format string, a ...any) error {
	return fmt.Errorf("store: %s", oneLine(fmt.Sprintf(format, a...)))
}

// BeginRun inserts a run with status running and its variants (their
// Results are ignored) and returns its id.
func (s *Store) BeginRun(m Meta, variants []report.VariantResult) (int64, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return 0, s.errf("begin run: %v", err)
	}
	defer tx.Rollback()
	if m.Host == "" {
		m.Host, _ = os.Hostname()
	}
	if m.PID == 0 {
		m.PID = os.Getpid()
	}
	if m.Started == "" {
		m.Started = time.Now().UTC().Format(time.RFC3339)
	}
	var id int64
	err = tx.QueryRow(s.d.rebind(`INSERT INTO runs (name, scenario_file, scenario_text, seed, sets, sweeps, version,
		started, finished, status, tags, note, host, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?) RETURNING id`),
		m.Name, m.ScenarioFile, m.ScenarioText, int64(m.Seed), jsonList(m.Sets), jsonList(m.Sweeps), m.Version,
		m.Started, StatusRunning, strings.Join(m.Tags, " "), m.Note, m.Host, m.PID).Scan(&id)
	if err != nil {
		return 0, s.errf("begin run: %v", err)
	}
	for i, v := range variants {
		sw, err := json.Marshal(v.Sweep)
		if err != nil {
			return 0, s.errf("begin run: %v", err)
		}
		if v.Sweep == nil {
			sw = []byte("null")
		}
		if _, err := tx.Exec(s.d.rebind(`INSERT INTO variants (run_id, idx, name, collective, parent, sweep) VALUES (?, ?, ?, ?, ?, ?)`),
			id, i, v.Name, v.Collective, v.Parent, string(sw)); err != nil {
			return 0, s.errf("begin run: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, s.errf("begin run: %v", err)
	}
	return id, nil
}

// AddResult stores one result of a run, variant variantIdx (the index in
// BeginRun's variants), size sizeIdx (results are read back in size index
// order), with its flow records in compressed chunks. It commits on its own
// (the row and its records together), so results survive a killed process.
func (s *Store) AddResult(runID int64, variantIdx, sizeIdx int, r metrics.SizeResult) error {
	fail := func(err error) error { return s.errf("run %d: saving a result: %v", runID, err) }
	recs := r.Records
	r.Records = nil
	blob, err := compress(r)
	if err != nil {
		return fail(err)
	}
	tx, err := s.db.Begin()
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	_, err = tx.Exec(s.d.rebind(`INSERT INTO results (run_id, variant_idx, size_idx, size_bytes, ranks, cct_s,
		algbw_gbps, busbw_gbps, ideal_s, ideal_pct, pfc_pauses, ecn_marks, drops, retransmits, cnps, timeouts,
		complete, routed_ideal_s, routed_ideal_pct, error, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		runID, variantIdx, sizeIdx, r.SizeBytes, r.Ranks, r.CCTS, r.AlgBWGBps, r.BusBWGBps, r.IdealS, r.IdealPct,
		r.PFCPauses, r.ECNMarks, r.Drops, r.Retransmits, r.CNPs, r.Timeouts, r.Complete,
		r.RoutedIdealS, r.RoutedIdealPct, r.Error, blob)
	if err != nil {
		return fail(err)
	}
	ins := s.d.rebind(`INSERT INTO flow_records (run_id, variant_idx, size_idx, chunk, records, data) VALUES (?, ?, ?, ?, ?, ?)`)
	for c, lo := 0, 0; lo < len(recs); c, lo = c+1, lo+flowChunk {
		hi := min(lo+flowChunk, len(recs))
		data, err := encodeFlows(recs[lo:hi])
		if err != nil {
			return fail(err)
		}
		if _, err := tx.Exec(ins, runID, variantIdx, sizeIdx, c, hi-lo, data); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// FinishRun sets a run's final status and finish time (RFC 3339).
func (s *Store) FinishRun(id int64, status, finished string) error {
	switch status {
	case StatusDone, StatusInterrupted, StatusFailed, StatusRunning:
	default:
		return s.errf("unknown run status %q", status)
	}
	res, err := s.db.Exec(s.d.rebind(`UPDATE runs SET status = ?, finished = ? WHERE id = ?`), status, finished, id)
	if err != nil {
		return s.errf("finishing run %d: %v", id, err)
	}
	return s.mustHit(res, id)
}

func (s *Store) mustHit(res sql.Result, id int64) error {
	n, err := res.RowsAffected()
	if err != nil {
		return s.errf("run %d: %v", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: run %d: %w in %s", id, ErrNotFound, s.name)
	}
	return nil
}

const metaCols = `r.id, r.name, r.scenario_file, r.scenario_text, r.seed, r.sets, r.sweeps, r.version, r.started,
	r.finished, r.status, r.tags, r.note, r.host, r.pid,
	(SELECT COUNT(*) FROM variants v WHERE v.run_id = r.id),
	(SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)`

func scanMeta(sc interface{ Scan(...any) error }) (Meta, error) {
	var m Meta
	var seed int64
	var sets, sweeps, tags string
	err := sc.Scan(&m.ID, &m.Name, &m.ScenarioFile, &m.ScenarioText, &seed, &sets, &sweeps, &m.Version, &m.Started,
		&m.Finished, &m.Status, &tags, &m.Note, &m.Host, &m.PID, &m.Variants, &m.Rows)
	if err != nil {
		return m, err
	}
	m.Seed = uint64(seed)
	_ = json.Unmarshal([]byte(sets), &m.Sets)
	_ = json.Unmarshal([]byte(sweeps), &m.Sweeps)
	m.Tags = strings.Fields(tags)
	return m, nil
}

// Runs lists the runs matching f, oldest first.
func (s *Store) Runs(f Filter) ([]Meta, error) {
	rows, err := s.db.Query(`SELECT ` + metaCols + ` FROM runs r ORDER BY r.id`)
	if err != nil {
		return nil, s.errf("listing runs: %v", err)
	}
	defer rows.Close()
	var out []Meta
	for rows.Next() {
		m, err := scanMeta(rows)
		if err != nil {
			return nil, s.errf("listing runs: %v", err)
		}
		if f.match(m) {
			out = append(out, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf("listing runs: %v", err)
	}
	return out, nil
}

func hasTag(tags []string, t string) bool {
	for _, x := range tags {
		if x == t {
			return true
		}
	}
	return false
}

// Meta returns one run's description.
func (s *Store) Meta(id int64) (Meta, error) {
	m, err := scanMeta(s.db.QueryRow(s.d.rebind(`SELECT `+metaCols+` FROM runs r WHERE r.id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("store: run %d: %w in %s", id, ErrNotFound, s.name)
	}
	if err != nil {
		return m, s.errf("run %d: %v", id, err)
	}
	return m, nil
}

// Run reads a run back as the report.Output that `run --json` wrote (for a
// run that finished; a killed run gives the rows it saved).
func (s *Store) Run(id int64) (report.Output, Meta, error) {
	m, err := s.Meta(id)
	if err != nil {
		return report.Output{}, m, err
	}
	out := report.Output{
		Scenario: m.Name, ScenarioFile: m.ScenarioFile, Seed: m.Seed, Sets: m.Sets, Sweeps: m.Sweeps,
		Version: m.Version, Started: m.Started, Finished: m.Finished,
		Interrupted: m.Status == StatusInterrupted,
		Variants:    []report.VariantResult{},
	}
	rows, err := s.db.Query(s.d.rebind(`SELECT name, collective, parent, sweep FROM variants WHERE run_id = ? ORDER BY idx`), id)
	if err != nil {
		return out, m, s.errf("run %d: %v", id, err)
	}
	for rows.Next() {
		var v report.VariantResult
		var sw string
		if err := rows.Scan(&v.Name, &v.Collective, &v.Parent, &sw); err != nil {
			rows.Close()
			return out, m, s.errf("run %d: %v", id, err)
		}
		if err := json.Unmarshal([]byte(sw), &v.Sweep); err != nil {
			rows.Close()
			return out, m, s.errf("run %d: variant %s: %v", id, v.Name, err)
		}
		v.Results = []metrics.SizeResult{}
		out.Variants = append(out.Variants, v)
	}
	rows.Close()
	rows, err = s.db.Query(s.d.rebind(`SELECT variant_idx, size_idx, data FROM results WHERE run_id = ? ORDER BY variant_idx, size_idx`), id)
	if err != nil {
		return out, m, s.errf("run %d: %v", id, err)
	}
	defer rows.Close()
	var sizeIdx [][2]int // each result's (variant, size index), in order
	for rows.Next() {
		var vi, si int
		var blob []byte
		if err := rows.Scan(&vi, &si, &blob); err != nil {
			return out, m, s.errf("run %d: %v", id, err)
		}
		r, err := decompress(blob)
		if err != nil {
			return out, m, s.errf("run %d: a result: %v", id, err)
		}
		if vi < 0 || vi >= len(out.Variants) {
			return out, m, s.errf("run %d: a result of unknown variant %d", id, vi)
		}
		out.Variants[vi].Results = append(out.Variants[vi].Results, r)
		sizeIdx = append(sizeIdx, [2]int{vi, si})
	}
	if err := rows.Err(); err != nil {
		return out, m, s.errf("run %d: %v", id, err)
	}
	rows.Close()
	if err := s.readFlows(id, out, sizeIdx); err != nil {
		return out, m, err
	}
	return out, m, nil
}

// readFlows attaches the stored flow records to their results.
func (s *Store) readFlows(id int64, out report.Output, sizeIdx [][2]int) error {
	where := map[[2]int]*metrics.SizeResult{}
	pos := map[int]int{}
	for _, k := range sizeIdx {
		vi := k[0]
		where[k] = &out.Variants[vi].Results[pos[vi]]
		pos[vi]++
	}
	rows, err := s.db.Query(s.d.rebind(`SELECT variant_idx, size_idx, records, data FROM flow_records
		WHERE run_id = ? ORDER BY variant_idx, size_idx, chunk`), id)
	if err != nil {
		return s.errf("run %d: flow records: %v", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]int
		var n int
		var data []byte
		if err := rows.Scan(&k[0], &k[1], &n, &data); err != nil {
			return s.errf("run %d: flow records: %v", id, err)
		}
		r := where[k]
		if r == nil {
			return s.errf("run %d: flow records of unknown result %d/%d", id, k[0], k[1])
		}
		recs, err := decodeFlows(data, r.Records)
		if err != nil || len(recs)-len(r.Records) != n {
			return s.errf("run %d: flow records of result %d/%d are damaged: %v", id, k[0], k[1], err)
		}
		r.Records = recs
	}
	if err := rows.Err(); err != nil {
		return s.errf("run %d: flow records: %v", id, err)
	}
	return nil
}

// Delete removes a run and everything stored with it.
func (s *Store) Delete(id int64) error {
	tx, err := s.db.Begin()
	if err != nil {
		return s.errf("deleting run %d: %v", id, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM flow_records WHERE run_id = ?`, `DELETE FROM results WHERE run_id = ?`,
		`DELETE FROM variants WHERE run_id = ?`} {
		if _, err := tx.Exec(s.d.rebind(q), id); err != nil {
			return s.errf("deleting run %d: %v", id, err)
		}
	}
	res, err := tx.Exec(s.d.rebind(`DELETE FROM runs WHERE id = ?`), id)
	if err != nil {
		return s.errf("deleting run %d: %v", id, err)
	}
	if err := s.mustHit(res, id); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.errf("deleting run %d: %v", id, err)
	}
	return nil
}

// Tag adds tags to a run (a tag is one word; duplicates are ignored).
func (s *Store) Tag(id int64, tags ...string) error {
	m, err := s.Meta(id)
	if err != nil {
		return err
	}
	all := m.Tags
	for _, t := range tags {
		if t == "" || strings.ContainsAny(t, " \t\n") {
			return s.errf("tag %q: a tag is one word", t)
		}
		if !hasTag(all, t) {
			all = append(all, t)
		}
	}
	res, err := s.db.Exec(s.d.rebind(`UPDATE runs SET tags = ? WHERE id = ?`), strings.Join(all, " "), id)
	if err != nil {
		return s.errf("tagging run %d: %v", id, err)
	}
	return s.mustHit(res, id)
}

// SetNote replaces a run's note (free text; "" clears it).
func (s *Store) SetNote(id int64, note string) error {
	res, err := s.db.Exec(s.d.rebind(`UPDATE runs SET note = ? WHERE id = ?`), note, id)
	if err != nil {
		return s.errf("noting run %d: %v", id, err)
	}
	return s.mustHit(res, id)
}

// ParseID parses a run id as given on the command line.
func ParseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("store: %q is not a run id (a positive number, see 'fabriclab runs')", s)
	}
	return id, nil
}

func jsonList(xs []string) string {
	if len(xs) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

func compress(r metrics.SizeResult) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decompress(blob []byte) (metrics.SizeResult, error) {
	var r metrics.SizeResult
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return r, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(data, &r)
	return r, err
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
