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
// rewritten by the dialect, column types from the dialect. OpenReadOnly
// opens for the commands that only read: no migration, no writes.
//
// A database is input: every value read from it is checked (read.go), and
// what this build could not have written is a "damaged" error. Reading is
// bounded: a result's JSON is at most maxResultJSON bytes, its flow records
// at most maxResultRecords, checked before anything is allocated for them.
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
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"modernc.org/sqlite"               // the "sqlite" database/sql driver

	"fabriclab/internal/safetext"
	"fabriclab/metrics"
	"fabriclab/report"
	"fabriclab/scenario"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	// StatusIncomplete: the run ended but not every result could be saved
	// (a full disk, say).
	StatusIncomplete = "incomplete"
	// StatusQueued: the run's jobs are on a queue (Meta.Queue) for
	// `fabriclab worker` processes; the worker that saves the last row sets
	// done or failed (queued.go).
	StatusQueued = "queued"
)

// EngineHosts is Meta.Engine for a run on real hosts (run --engine
// hosts), as scenario.EngineHosts names it.
const EngineHosts = scenario.EngineHosts

func knownStatus(s string) bool {
	switch s {
	case StatusRunning, StatusDone, StatusInterrupted, StatusFailed, StatusIncomplete, StatusQueued:
		return true
	}
	return false
}

// Limits on what is saved and read back, so that a damaged row cannot make
// a reader allocate without bound (a 2 MB gzip row inflated to 4.6 GB).
// AddResult refuses a result over them, so what is saved reads back. They
// are variables for the tests.
var (
	// maxResultJSON bounds a result's JSON (the SizeResult without its flow
	// records). Without sim.record_flows it is kilobytes; with it,
	// fct_curve_s and rank_bw_gbps hold about 45 bytes per flow (some 45 MB
	// for a million flows).
	maxResultJSON int64 = 256 << 20
	// maxResultRecords bounds a result's flow records (96 bytes each in
	// memory): 2^24, a 4,096-rank all-to-all.
	maxResultRecords = 1 << 24
	// maxRunMemory bounds what reading one run may hold: the results'
	// decoded JSON (counted as its bytes plus 8 per array element, what
	// numbers cost once decoded) and their flow records (96 bytes each).
	// A run the simulator wrote is far below it unless it recorded
	// millions of flows at many sizes; a damaged one stops here instead
	// of eating the machine (a 250 MiB array of zeros decodes to 2 GB).
	maxRunMemory int64 = 2 << 30
)

// maxIndex bounds the integer columns that are indexes or counts (INTEGER
// in PostgreSQL).
const maxIndex = math.MaxInt32

// ErrNotFound is returned (wrapped) for a run id that is not in the database.
var ErrNotFound = errors.New("no such run")

// dialect is what differs between backends.
type dialect struct {
	name      string
	driver    string
	autoID    string // column type of an auto-increment primary key
	blob      string // column type of binary data
	hasSchema string // query: 1 if the schema_version table exists, else 0
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
	name:      "sqlite",
	driver:    "sqlite",
	autoID:    "INTEGER PRIMARY KEY AUTOINCREMENT",
	blob:      "BLOB",
	hasSchema: `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`,
}

var postgresDialect = &dialect{
	name:   "postgres",
	driver: "pgx",
	autoID: "BIGSERIAL PRIMARY KEY",
	blob:   "BYTEA",
	hasSchema: `SELECT COUNT(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name = 'schema_version'`,
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
		// 3: how many result rows a run expects (variants × sizes), so that
		// a run that could not save them all shows it even when its final
		// status could not be saved either; 0 = unknown (older runs).
		`ALTER TABLE runs ADD COLUMN expected_rows BIGINT NOT NULL DEFAULT 0`,
		// 4: the queue that runs a run's jobs on `fabriclab worker`
		// processes ('' = run by the process that started it), and with it
		// the status queued.
		`ALTER TABLE runs ADD COLUMN queue TEXT NOT NULL DEFAULT ''`,
		// 5: the directory the run was started from, against which its
		// scenario_file (as typed) and the files it names are found
		// again ('' = unknown, older runs).
		`ALTER TABLE runs ADD COLUMN work_dir TEXT NOT NULL DEFAULT ''`,
		// 6: the engine that ran the run's jobs when it is not the
		// simulator: 'hosts' for run --engine hosts ('' = the simulator
		// the scenario's sim.engine picks, or unknown: older runs).
		`ALTER TABLE runs ADD COLUMN engine TEXT NOT NULL DEFAULT ''`,
	}
}

// SchemaVersion is the schema this build creates and understands.
var SchemaVersion = len(migrationsFor(sqliteDialect))

// Store is an open results database. It is safe for concurrent use.
type Store struct {
	db       *sql.DB
	d        *dialect
	name     string // for messages
	readOnly bool   // OpenReadOnly: every write is refused
	// schema is the schema read as is when it is older than
	// SchemaVersion (OpenReadOnly of a schema from readableFrom on), else 0.
	schema int64
}

// readableFrom is the oldest schema OpenReadOnly reads without a
// migration: migration 6 only adds runs.engine, read as empty before it
// (what the migration gives those runs), so a fabriclab that adds it
// still shows, exports and reports a database an older one wrote.
const readableFrom = 5

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
	// Expected is how many result rows the run should save (variants ×
	// sizes), given to BeginRun; 0 when unknown (runs saved before it was
	// recorded).
	Expected int
	// Queue is the job queue that runs the run's jobs on workers
	// (`run --queue`), "" for a run its own process ran. BeginRun gives a
	// run with a queue the status queued.
	Queue string
	// WorkDir is the directory the run was started from (absolute), where
	// a relative ScenarioFile was found; "" for runs saved before it was
	// recorded. See ScenarioPath.
	WorkDir string
	// Engine is what ran the run's jobs when it was not the simulator:
	// EngineHosts for real hosts (run --engine hosts), whose rows say so
	// only when an agent measured them (a row that failed before does
	// not); "" for the simulator the scenario's sim.engine picks (--engine
	// packet|flow|auto is saved as --set sim.engine=…), and for runs saved
	// before it was recorded.
	Engine string
	// Filled by Runs and Run:
	Variants, Rows int
	// Saved is filled by Run: the variant and size index of each result
	// row it read, in order (see Unsaved).
	Saved []ResultKey
}

// ScenarioPath is where the run's scenario file was, for reading it and
// the files it names again from any directory: ScenarioFile under WorkDir
// when it is relative (as typed; from the current directory when WorkDir
// is unknown, or for a name that is no file's, such as nccl's
// "nccl:all_reduce"). The directory may have moved since: ScenarioPaths.
func (m Meta) ScenarioPath() string {
	if m.WorkDir == "" || m.ScenarioFile == "" || filepath.IsAbs(m.ScenarioFile) || strings.Contains(m.ScenarioFile, ":") {
		return m.ScenarioFile
	}
	return filepath.Join(m.WorkDir, m.ScenarioFile)
}

// ScenarioPaths are the places the run's scenario may be read from: where
// it was (ScenarioPath), then ScenarioFile from the current directory
// (the directory it ran in may have moved, or be another machine's).
func (m Meta) ScenarioPaths() []string {
	if p := m.ScenarioPath(); p != m.ScenarioFile {
		return []string{p, m.ScenarioFile}
	}
	return []string{m.ScenarioFile}
}

// Missing is how many of the Expected result rows were not saved, for a
// run that ended (done, failed, incomplete) or whose process is gone (a
// Stale "running" run: killed, or its final status could not be saved,
// e.g. on a full disk). A failed run short of rows may have stopped at a
// job every later one would fail alike (a wrong agent token), or its
// queue may have given up on jobs: either way the rows are not there. It
// is 0 for a run still running or interrupted (Ctrl-C stops it short by
// design), and when Expected is 0 (unknown).
func (m Meta) Missing() int {
	if m.Expected <= 0 || m.Rows >= m.Expected {
		return 0
	}
	switch m.Status {
	case StatusInterrupted, StatusQueued:
		return 0
	case StatusRunning:
		if !m.Stale() {
			return 0
		}
	}
	return m.Expected - m.Rows
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
// the database must exist). A path is a path, never a URI: the file opened
// (or created) is exactly the one named, and one that exists but is not a
// regular file (a device such as /dev/null, a FIFO, a socket, a directory)
// is refused, as is "". The schema is migrated to the current version; a
// database from a newer fabriclab is refused. Open checks that the
// database can be written.
func Open(dsn string) (*Store, error) { return open(dsn, false) }

// OpenReadOnly opens an existing database for reading only: it never
// migrates and never writes (every writing method returns an error).
// SQLite opens the file read-only, and reads a database on a read-only
// file system too (one without write-ahead log is then opened immutable;
// one with a -wal file needs its -shm index next to it). PostgreSQL
// sessions are in read-only transaction mode. A database whose schema is
// older than SchemaVersion, or that has no tables yet, is an error wrapping
// ErrMigrationNeeded that says how to migrate it (open it once with a
// command that writes); a newer one is refused as by Open; a missing file
// is an error wrapping fs.ErrNotExist. Paths are as for Open.
func OpenReadOnly(dsn string) (*Store, error) { return open(dsn, true) }

func open(dsn string, readOnly bool) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(dsn, readOnly)
	}
	path, ok := SQLitePath(dsn)
	if !ok {
		return nil, errors.New("store: empty database path")
	}
	return openSQLite(path, readOnly)
}

// SQLite connection parameters: writers take the write lock when a
// transaction begins (no SQLITE_BUSY halfway), WAL so that readers read
// while a run writes.
const (
	sqliteWrite = "_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	sqliteRead  = "mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)"
)

func openSQLite(path string, readOnly bool) (*Store, error) {
	fail := func(err error) error {
		return fmt.Errorf("store: cannot open database %s: %s", path, oneLine(err.Error()))
	}
	exists, err := checkSQLitePath(path)
	if err != nil {
		return nil, fail(err)
	}
	switch {
	case !exists && readOnly:
		return nil, &wrapped{fmt.Sprintf("store: no database at %s (fabriclab run creates it)", path), fs.ErrNotExist}
	case !exists:
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fail(err)
		}
	}
	params := sqliteWrite
	if readOnly {
		params = sqliteRead
	}
	s, err := connectSQLite(path, params, readOnly)
	if err != nil {
		return nil, fail(err)
	}
	if !readOnly {
		if err := s.migrate(); err != nil {
			s.db.Close()
			return nil, err
		}
		return s, nil
	}
	err = s.checkSchema()
	if isCantOpen(err) {
		// A read-only connection to a WAL database needs its -shm index,
		// which SQLite creates next to it: on a read-only file system it
		// cannot. Without a write-ahead log (or hot journal) to read, the
		// file alone is the database, and is opened immutable: SQLite then
		// takes no locks, which is safe as long as nobody writes it
		// meanwhile — where no -shm can be created next to it, a writer
		// (who would have to create a -wal there) usually cannot either.
		s.db.Close()
		for _, f := range []struct{ suffix, why string }{
			{"-wal", "its write-ahead log (the -wal file) can only be read with a -shm file next to it, which cannot be created there"},
			{"-journal", "its -journal file (an unfinished write) must be rolled back first"},
		} {
			if fi, err := os.Stat(path + f.suffix); err == nil && fi.Size() > 0 {
				return nil, fmt.Errorf("store: cannot open database %s read-only: %s; open it once where it can be written", path, f.why)
			}
		}
		if s, err = connectSQLite(path, params+"&immutable=1", true); err != nil {
			return nil, fail(err)
		}
		if err = s.checkSchema(); isCantOpen(err) {
			err = fail(err)
		}
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

func connectSQLite(path, params string, readOnly bool) (*Store, error) {
	uri, err := sqliteURI(path, params)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(sqliteDialect.driver, uri)
	if err != nil {
		return nil, err
	}
	// One connection: SQLite has one writer anyway, and this serializes
	// the writes of parallel jobs without SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	return &Store{db: db, d: sqliteDialect, name: path, readOnly: readOnly}, nil
}

// isCantOpen reports whether err is how SQLite says it could not open a
// file next to the database: SQLITE_CANTOPEN (on a read-only file system)
// or SQLITE_READONLY_DIRECTORY (in a directory this user cannot write).
func isCantOpen(err error) bool {
	const cantOpen, readOnlyDirectory = 14, 8 | 6<<8
	var e *sqlite.Error
	return errors.As(err, &e) && (e.Code()&0xff == cantOpen || e.Code() == readOnlyDirectory)
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	l := strings.ToLower(dsn)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// connectTimeout bounds how long Open waits for a PostgreSQL server.
const connectTimeout = 10 * time.Second

func openPostgres(dsn string, readOnly bool) (*Store, error) {
	name := dsn
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, errors.New("store: cannot parse the PostgreSQL URL (postgres://user:password@host:port/database)")
	}
	// Never print a password: the one in the user info, nor one given as a
	// password= parameter, nor either inside the driver's own errors.
	var secrets []string
	if p, ok := u.User.Password(); ok && p != "" {
		secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
	}
	shown := *u
	if q := shown.Query(); q.Has("password") {
		for _, p := range q["password"] {
			if p != "" {
				secrets = append(secrets, p, url.QueryEscape(p))
			}
		}
		q.Set("password", "xxxxx")
		shown.RawQuery = q.Encode()
	}
	name = shown.Redacted()
	hide := func(msg string) string {
		for _, p := range secrets {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
		return msg
	}
	fail := func(err error) error {
		return fmt.Errorf("store: cannot open database %s: %s", name, hide(oneLine(err.Error())))
	}
	if u.Query().Get("connect_timeout") == "" {
		q := u.Query()
		q.Set("connect_timeout", strconv.Itoa(int(connectTimeout/time.Second)))
		u.RawQuery = q.Encode()
	}
	if readOnly {
		// A run-time parameter of the session: every transaction is
		// read-only, so that not even a bug can write.
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
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
	s := &Store{db: db, d: postgresDialect, name: name, readOnly: readOnly}
	check := s.migrate
	if readOnly {
		check = s.checkSchema
	}
	if err := check(); err != nil {
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
	v, present, err := s.schemaVersion(tx)
	if err != nil {
		return err
	}
	if !present {
		if _, err := tx.Exec(`INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fail(err)
		}
	}
	ms := migrationsFor(s.d)
	if v > int64(len(ms)) {
		return s.newerSchema(v)
	}
	for i := int(v); i < len(ms); i++ {
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

func (s *Store) newerSchema(v int64) error {
	return fmt.Errorf("store: database %s has schema %d, this fabriclab knows up to %d", s.name, v, SchemaVersion)
}

// checkSchema is OpenReadOnly's check that the database has this build's
// schema (it cannot migrate it).
func (s *Store) checkSchema() error {
	fail := func(err error) error {
		return fmt.Errorf("store: cannot open database %s: %s", s.name, oneLine(err.Error()))
	}
	var raw any
	if err := s.db.QueryRow(s.d.hasSchema).Scan(&raw); err != nil {
		if isCantOpen(err) {
			return err // openSQLite tries again
		}
		return fail(err)
	}
	var v int64
	if n, _ := raw.(int64); n > 0 {
		var present bool
		var err error
		if v, present, err = s.schemaVersion(s.db); err != nil {
			return err
		}
		if !present {
			return s.damaged("schema_version has no row")
		}
	}
	switch {
	case v == 0:
		return &wrapped{fmt.Sprintf("store: database %s has no fabriclab tables yet (%s creates them)", s.name, "`fabriclab run`"),
			ErrMigrationNeeded}
	case v >= readableFrom && v < int64(SchemaVersion):
		s.schema = v
	case v < int64(SchemaVersion):
		return &wrapped{fmt.Sprintf("store: database %s has schema %d, this fabriclab needs %d: a migration is needed, "+
			"and this command only reads; migrate it by opening it once with a command that writes, "+
			"such as `fabriclab tag RUN TAG` or `fabriclab run`", s.name, v, SchemaVersion), ErrMigrationNeeded}
	case v > int64(SchemaVersion):
		return s.newerSchema(v)
	}
	return nil
}

// writable refuses writes to a store opened with OpenReadOnly.
func (s *Store) writable(what string) error {
	if s.readOnly {
		return fmt.Errorf("store: %s: database %s is open read-only", what, s.name)
	}
	return nil
}

func (s *Store) errf(format string, a ...any) error {
	return fmt.Errorf("store: %s", oneLine(fmt.Sprintf(format, a...)))
}

// BeginRun inserts a run with status running (queued when m.Queue is set)
// and its variants (their Results are ignored) and returns its id. m.Expected (the result rows the
// run will save, 0 if unknown) is saved with it; see Meta.Missing. An
// empty m.WorkDir is the current directory.
func (s *Store) BeginRun(m Meta, variants []report.VariantResult) (int64, error) {
	if err := s.writable("begin run"); err != nil {
		return 0, err
	}
	if m.WorkDir == "" {
		m.WorkDir, _ = os.Getwd() // "" when it is gone: read from wherever show runs
	}
	if m.Expected < 0 || m.Expected > maxIndex {
		return 0, s.errf("begin run: expected rows %d out of range (0 to %d)", m.Expected, maxIndex)
	}
	if m.PID < 0 || m.PID > maxIndex {
		return 0, s.errf("begin run: process id %d out of range", m.PID)
	}
	if m.Engine != "" && m.Engine != EngineHosts {
		return 0, s.errf("begin run: unknown engine %q (%q or empty)", m.Engine, EngineHosts)
	}
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
	status := StatusRunning
	if m.Queue != "" {
		status = StatusQueued
	}
	var id int64
	err = tx.QueryRow(s.d.rebind(`INSERT INTO runs (name, scenario_file, scenario_text, seed, sets, sweeps, version,
		started, finished, status, tags, note, host, pid, expected_rows, queue, work_dir, engine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		m.Name, m.ScenarioFile, m.ScenarioText, int64(m.Seed), jsonList(m.Sets), jsonList(m.Sweeps), m.Version,
		m.Started, status, strings.Join(m.Tags, " "), m.Note, m.Host, m.PID, m.Expected, m.Queue, m.WorkDir, m.Engine).Scan(&id)
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

// resultColumns are the results table's value columns: report.ResultColumns
// with a SQL type, in that order (migration 1 created them; a new one needs
// a new migration).
var resultColumns = func() []report.ResultColumn {
	var cs []report.ResultColumn
	for _, c := range report.ResultColumns {
		if c.SQL != "" {
			cs = append(cs, c)
		}
	}
	return cs
}()

// insertResult inserts a result row: its keys, resultColumns, and the
// compressed JSON.
var insertResult = func() string {
	names := []string{"run_id", "variant_idx", "size_idx"}
	for _, c := range resultColumns {
		names = append(names, c.Name)
	}
	names = append(names, "data")
	return `INSERT INTO results (` + strings.Join(names, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(names)-1) + `)`
}()

// AddResult stores one result of a run, variant variantIdx (the index in
// BeginRun's variants), size sizeIdx (results are read back in size index
// order), with its flow records in compressed chunks. It commits on its own
// (the row and its records together), so results survive a killed process.
func (s *Store) AddResult(runID int64, variantIdx, sizeIdx int, r metrics.SizeResult) error {
	_, _, err := s.addResult(runID, variantIdx, sizeIdx, r, nil)
	return err
}

// addResult is AddResult. With queued set (AddQueuedResult) the row is
// inserted only if the run has none for its variant and size (saved is
// false when it had one: nothing is written), and queued runs in the same
// transaction after the insert (it may end the run).
func (s *Store) addResult(runID int64, variantIdx, sizeIdx int, r metrics.SizeResult, queued func(tx *sql.Tx) (bool, error)) (saved, ended bool, err error) {
	fail := func(err error) error { return s.errf("run %d: saving a result: %v", runID, err) }
	if err := s.writable(fmt.Sprintf("run %d: saving a result", runID)); err != nil {
		return false, false, err
	}
	if variantIdx < 0 || variantIdx > maxIndex || sizeIdx < 0 || sizeIdx > maxIndex {
		return false, false, fail(fmt.Errorf("variant %d, size %d: index out of range", variantIdx, sizeIdx))
	}
	if len(r.Records) > maxResultRecords {
		return false, false, fail(fmt.Errorf("%d flow records, the store keeps at most %d per result", len(r.Records), maxResultRecords))
	}
	recs := r.Records
	r.Records = nil
	blob, err := compress(r)
	if err != nil {
		return false, false, fail(err)
	}
	tx, err := s.db.Begin()
	if err != nil {
		return false, false, fail(err)
	}
	defer tx.Rollback()
	args := make([]any, 0, 4+len(resultColumns))
	args = append(args, runID, variantIdx, sizeIdx)
	for _, c := range resultColumns {
		args = append(args, c.Row(nil, &r))
	}
	args = append(args, blob)
	q := insertResult
	if queued != nil {
		// Serialize the run's writers on its row (PostgreSQL holds the
		// lock to the end of the transaction, SQLite has one writer), so
		// that the count below sees every other worker's committed row.
		res, err := tx.Exec(s.d.rebind(`UPDATE runs SET expected_rows = expected_rows WHERE id = ?`), runID)
		if err != nil {
			return false, false, fail(err)
		}
		if err := s.mustHit(res, runID); err != nil {
			return false, false, err
		}
		q += ` ON CONFLICT (run_id, variant_idx, size_idx) DO NOTHING`
	}
	res, err := tx.Exec(s.d.rebind(q), args...)
	if err != nil {
		return false, false, fail(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, false, fail(err)
	} else if n == 0 {
		return false, false, nil // queued: the row was there already
	}
	ins := s.d.rebind(`INSERT INTO flow_records (run_id, variant_idx, size_idx, chunk, records, data) VALUES (?, ?, ?, ?, ?, ?)`)
	for c, lo := 0, 0; lo < len(recs); c, lo = c+1, lo+flowChunk {
		hi := min(lo+flowChunk, len(recs))
		data, err := encodeFlows(recs[lo:hi])
		if err != nil {
			return false, false, fail(err)
		}
		if _, err := tx.Exec(ins, runID, variantIdx, sizeIdx, c, hi-lo, data); err != nil {
			return false, false, fail(err)
		}
	}
	if queued != nil {
		if ended, err = queued(tx); err != nil {
			return false, false, fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, false, fail(err)
	}
	return true, ended, nil
}

// FinishRun sets a run's final status (StatusDone, StatusFailed,
// StatusInterrupted or StatusIncomplete — or StatusRunning) and finish time
// (RFC 3339).
func (s *Store) FinishRun(id int64, status, finished string) error {
	if !knownStatus(status) {
		return s.errf("unknown run status %q", status)
	}
	if err := s.writable(fmt.Sprintf("finishing run %d", id)); err != nil {
		return err
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

// metaCols is the runs' columns scanMeta reads, from schema 6 (metaCols
// of Store is the same of the schema it reads).
const metaCols = `r.id, r.name, r.scenario_file, r.scenario_text, r.seed, r.sets, r.sweeps, r.version, r.started,
	r.finished, r.status, r.tags, r.note, r.host, r.pid, r.expected_rows, r.queue, r.work_dir, r.engine,
	(SELECT COUNT(*) FROM variants v WHERE v.run_id = r.id),
	(SELECT COUNT(*) FROM results x WHERE x.run_id = r.id)`

// metaCols is the package's metaCols, with the engine as ” on a schema
// before 6 (read as is by OpenReadOnly).
func (s *Store) metaCols() string {
	if s.schema != 0 && s.schema < 6 {
		return strings.Replace(metaCols, "r.engine,", "'' AS engine,", 1)
	}
	return metaCols
}

// scanMeta reads a row of metaCols. A driver error is returned as is; a
// value this build could not have written is a damaged error.
func (s *Store) scanMeta(sc scanner) (Meta, error) {
	vals, err := scanRaw(sc, 21)
	if err != nil {
		return Meta{}, err
	}
	c := checker{vals: vals}
	var m Meta
	m.ID = c.int(0, "id", 1, math.MaxInt64)
	m.Name = c.text(1, "name")
	m.ScenarioFile = c.text(2, "scenario_file")
	m.ScenarioText = c.text(3, "scenario_text")
	m.Seed = uint64(c.int(4, "seed", math.MinInt64, math.MaxInt64)) // saved as int64(seed)
	sets, sweeps := c.text(5, "sets"), c.text(6, "sweeps")
	m.Version = c.text(7, "version")
	m.Started = c.text(8, "started")
	m.Finished = c.text(9, "finished")
	m.Status = c.text(10, "status")
	tags := c.text(11, "tags")
	m.Note = c.text(12, "note")
	m.Host = c.text(13, "host")
	m.PID = int(c.int(14, "pid", 0, maxIndex))
	m.Expected = int(c.int(15, "expected_rows", 0, maxIndex))
	m.Queue = c.text(16, "queue")
	m.WorkDir = c.text(17, "work_dir")
	m.Engine = c.text(18, "engine")
	m.Variants = int(c.int(19, "the variant count", 0, math.MaxInt64))
	m.Rows = int(c.int(20, "the result count", 0, math.MaxInt64))
	if c.bad == "" && !knownStatus(m.Status) {
		c.fail("status is not one of %s, %s, %s, %s, %s, %s", StatusRunning, StatusDone, StatusIncomplete, StatusFailed, StatusInterrupted, StatusQueued)
	}
	if c.bad == "" && m.Engine != "" && m.Engine != EngineHosts {
		c.fail("engine is neither %s nor empty", EngineHosts)
	}
	if c.bad == "" && json.Unmarshal([]byte(sets), &m.Sets) != nil {
		c.fail("sets is not a JSON list of strings")
	}
	if c.bad == "" && json.Unmarshal([]byte(sweeps), &m.Sweeps) != nil {
		c.fail("sweeps is not a JSON list of strings")
	}
	if c.bad != "" {
		where := "a run"
		if m.ID > 0 {
			where = fmt.Sprintf("run %d", m.ID)
		}
		return Meta{}, s.damaged("%s: %s", where, c.bad)
	}
	m.Tags = strings.Fields(tags)
	return m, nil
}

// Runs lists the runs matching f, oldest first.
func (s *Store) Runs(f Filter) ([]Meta, error) {
	rows, err := s.db.Query(`SELECT ` + s.metaCols() + ` FROM runs r ORDER BY r.id`)
	if err != nil {
		return nil, s.errf("listing runs: %v", err)
	}
	defer rows.Close()
	var out []Meta
	for rows.Next() {
		m, err := s.scanMeta(rows)
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
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
	m, err := s.scanMeta(s.db.QueryRow(s.d.rebind(`SELECT `+s.metaCols()+` FROM runs r WHERE r.id = ?`), id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return m, fmt.Errorf("store: run %d: %w in %s", id, ErrNotFound, s.name)
	case errors.Is(err, ErrDamaged):
		return m, err
	case err == nil && m.ID != id:
		return Meta{}, s.damaged("run %d read back as run %d", id, m.ID)
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
		MissingRows: m.Missing(),
		Variants:    []report.VariantResult{},
	}
	if err := s.readVariants(id, &out); err != nil {
		return out, m, err
	}
	sizeIdx, err := s.readResults(id, &out)
	if err != nil {
		return out, m, err
	}
	m.Saved = make([]ResultKey, len(sizeIdx))
	for i, k := range sizeIdx {
		m.Saved[i] = ResultKey{Variant: int(k[0]), Size: int(k[1])}
	}
	if err := s.readFlows(id, out, sizeIdx); err != nil {
		return out, m, err
	}
	return out, m, nil
}

// readVariants reads a run's variants (numbered from 0 without gaps).
func (s *Store) readVariants(id int64, out *report.Output) error {
	rows, err := s.db.Query(s.d.rebind(`SELECT idx, name, collective, parent, sweep FROM variants WHERE run_id = ? ORDER BY idx`), id)
	if err != nil {
		return s.errf("run %d: %v", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := scanRaw(rows, 5)
		if err != nil {
			return s.errf("run %d: %v", id, err)
		}
		c := checker{vals: vals}
		var v report.VariantResult
		idx := c.int(0, "idx", 0, maxIndex)
		v.Name, v.Collective, v.Parent = c.text(1, "name"), c.text(2, "collective"), c.text(3, "parent")
		sw := c.text(4, "sweep")
		if c.bad == "" && idx != int64(len(out.Variants)) {
			c.fail("index %d where %d was expected (variants are numbered from 0)", idx, len(out.Variants))
		}
		if c.bad == "" && json.Unmarshal([]byte(sw), &v.Sweep) != nil {
			c.fail("sweep is not a JSON object of strings")
		}
		if c.bad != "" {
			return s.damaged("run %d: variant %d: %s", id, len(out.Variants), c.bad)
		}
		v.Results = []metrics.SizeResult{}
		out.Variants = append(out.Variants, v)
	}
	if err := rows.Err(); err != nil {
		return s.errf("run %d: %v", id, err)
	}
	return nil
}

// readResults reads a run's results into their variants, in size index
// order, and returns each one's (variant, size index), in order.
func (s *Store) readResults(id int64, out *report.Output) ([][2]int64, error) {
	rows, err := s.db.Query(s.d.rebind(`SELECT variant_idx, size_idx, data FROM results WHERE run_id = ? ORDER BY variant_idx, size_idx`), id)
	if err != nil {
		return nil, s.errf("run %d: %v", id, err)
	}
	defer rows.Close()
	var keys [][2]int64
	budget := maxRunMemory
	for rows.Next() {
		vals, err := scanRaw(rows, 3)
		if err != nil {
			return nil, s.errf("run %d: %v", id, err)
		}
		c := checker{vals: vals}
		k := [2]int64{c.int(0, "variant_idx", 0, int64(len(out.Variants))-1), c.int(1, "size_idx", 0, maxIndex)}
		blob := c.blob(2, "data")
		if n := len(keys); c.bad == "" && n > 0 && (k[0] < keys[n-1][0] || k[0] == keys[n-1][0] && k[1] <= keys[n-1][1]) {
			c.fail("two results for variant %d size %d", k[0], k[1])
		}
		if c.bad != "" {
			return nil, s.damaged("run %d: a result: %s", id, c.bad)
		}
		r, err := decompressWithin(blob, &budget)
		if err != nil {
			return nil, s.damaged("run %d: result %d/%d: %v", id, k[0], k[1], err)
		}
		out.Variants[k[0]].Results = append(out.Variants[k[0]].Results, r)
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf("run %d: %v", id, err)
	}
	return keys, nil
}

// readFlows attaches the stored flow records to their results: chunks
// numbered from 0 without gaps, each of 1 to flowChunk records (its row's
// count and its header's must agree), at most maxResultRecords a result,
// all checked before a chunk is decoded.
func (s *Store) readFlows(id int64, out report.Output, sizeIdx [][2]int64) error {
	where := map[[2]int64]*metrics.SizeResult{}
	next := map[[2]int64]int64{} // the next chunk's number
	pos := map[int64]int{}
	for _, k := range sizeIdx {
		vi := k[0]
		where[k] = &out.Variants[vi].Results[pos[vi]]
		pos[vi]++
	}
	rows, err := s.db.Query(s.d.rebind(`SELECT variant_idx, size_idx, chunk, records, data FROM flow_records
		WHERE run_id = ? ORDER BY variant_idx, size_idx, chunk`), id)
	if err != nil {
		return s.errf("run %d: flow records: %v", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := scanRaw(rows, 5)
		if err != nil {
			return s.errf("run %d: flow records: %v", id, err)
		}
		c := checker{vals: vals}
		k := [2]int64{c.int(0, "variant_idx", 0, maxIndex), c.int(1, "size_idx", 0, maxIndex)}
		chunk := c.int(2, "chunk", 0, maxIndex)
		n := int(c.int(3, "records", 1, flowChunk))
		data := c.blob(4, "data")
		if c.bad != "" {
			return s.damaged("run %d: flow records: %s", id, c.bad)
		}
		r := where[k]
		if r == nil {
			return s.damaged("run %d: flow records of result %d/%d, which is not there", id, k[0], k[1])
		}
		bad := func(format string, a ...any) error {
			return s.damaged("run %d: result %d/%d: flow record chunk %d: %s", id, k[0], k[1], chunk, fmt.Sprintf(format, a...))
		}
		switch {
		case chunk != next[k]:
			return bad("chunk %d was expected (chunks are numbered from 0)", next[k])
		case len(r.Records)+n > maxResultRecords:
			return bad("more than %d flow records for one result", maxResultRecords)
		}
		if h, ok := chunkRecords(data); !ok || h != uint64(n) {
			return bad("its header disagrees with its row's count of %d", n)
		}
		recs, err := decodeFlows(data, r.Records)
		if err != nil {
			return bad("%v", err)
		}
		if len(recs)-len(r.Records) != n {
			return bad("%d records where its row says %d", len(recs)-len(r.Records), n)
		}
		r.Records = recs
		next[k]++
	}
	if err := rows.Err(); err != nil {
		return s.errf("run %d: flow records: %v", id, err)
	}
	return nil
}

// Delete removes a run and everything stored with it.
func (s *Store) Delete(id int64) error {
	if err := s.writable(fmt.Sprintf("deleting run %d", id)); err != nil {
		return err
	}
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
	if err := s.writable(fmt.Sprintf("tagging run %d", id)); err != nil {
		return err
	}
	m, err := s.Meta(id)
	if err != nil {
		return err
	}
	all := m.Tags
	for _, t := range tags {
		if t == "" || strings.ContainsAny(t, " \t\n") || safetext.HasControl(t) {
			return s.errf("tag %q: a tag is one word of printable text", t)
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
	if err := s.writable(fmt.Sprintf("noting run %d", id)); err != nil {
		return err
	}
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

// compress is a result's gzip-compressed JSON (its flow records go to
// flow_records). More than maxResultJSON bytes of JSON is refused: it could
// not be read back.
func compress(r metrics.SizeResult) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxResultJSON {
		return nil, fmt.Errorf("its JSON is %d MiB, the store keeps at most %d MiB per result", len(data)>>20, maxResultJSON>>20)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decompress reads a result row's data back, reading at most
// maxResultJSON bytes of JSON. Its errors describe, never quote, the data.
func decompress(blob []byte) (metrics.SizeResult, error) {
	budget := maxRunMemory
	return decompressWithin(blob, &budget)
}

// decompressWithin is decompress charging what the decoded result will
// hold to *budget (see maxRunMemory) before decoding it.
func decompressWithin(blob []byte, budget *int64) (metrics.SizeResult, error) {
	var r metrics.SizeResult
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return r, errors.New("its data is not gzip-compressed")
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxResultJSON+1))
	if err != nil {
		return r, fmt.Errorf("its data does not decompress (%s)", oneLine(err.Error()))
	}
	if int64(len(data)) > maxResultJSON {
		return r, fmt.Errorf("its data decompresses to more than %d MiB of JSON, the limit for one result", maxResultJSON>>20)
	}
	if *budget -= int64(len(data)) + 8*int64(bytes.Count(data, []byte{','})); *budget < 0 {
		return r, fmt.Errorf("the run's results decode to more than %d MiB, the most one read holds", maxRunMemory>>20)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return metrics.SizeResult{}, fmt.Errorf("its data is not JSON (at byte %d)", syn.Offset)
		case errors.As(err, &typ):
			return metrics.SizeResult{}, fmt.Errorf("its JSON is not a result (field %s)", typ.Field)
		}
		return metrics.SizeResult{}, errors.New("its JSON is not a result")
	}
	return r, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
