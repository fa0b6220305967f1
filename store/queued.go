package store

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"fabriclab/metrics"
)

// Runs whose jobs are on a queue (`fabriclab run --queue`): BeginRun with
// Meta.Queue set inserts the run as queued, any number of worker processes
// save its rows with AddQueuedResult, and the one that saves the last row
// sets the final status. A worker that dies after saving a row but before
// the queue learnt that its job is done makes the queue run the job again:
// AddQueuedResult then saves nothing, so every row lands exactly once.

// AddQueuedResult saves one result of a queued run as AddResult does, once:
// when the run already has a row for variantIdx and sizeIdx it writes
// nothing and saved is false (a job run twice — a worker died before the
// queue marked it done — saves its row once). The row and the run's end
// are one transaction: when this row is the run's last (Meta.Expected) and
// the run is still queued, its status becomes done, or failed if a row
// carries an error, and ended is true. A run that is not in the database
// is an error wrapping ErrNotFound.
func (s *Store) AddQueuedResult(runID int64, variantIdx, sizeIdx int, r metrics.SizeResult) (saved, ended bool, err error) {
	return s.addResult(runID, variantIdx, sizeIdx, r, func(tx *sql.Tx) (bool, error) {
		var rawStatus, rawExpected, rawRows, rawFailed any
		err := tx.QueryRow(s.d.rebind(`SELECT status, expected_rows,
			(SELECT COUNT(*) FROM results x WHERE x.run_id = r.id),
			(SELECT COUNT(*) FROM results x WHERE x.run_id = r.id AND x.error <> '')
			FROM runs r WHERE r.id = ?`), runID).Scan(&rawStatus, &rawExpected, &rawRows, &rawFailed)
		if err != nil {
			return false, err
		}
		c := checker{vals: []any{rawStatus, rawExpected, rawRows, rawFailed}}
		status := c.text(0, "status")
		expected := c.int(1, "expected_rows", 0, maxIndex)
		rows := c.int(2, "the result count", 0, math.MaxInt64)
		failed := c.int(3, "the failed result count", 0, math.MaxInt64)
		if c.bad != "" {
			return false, s.damaged("run %d: %s", runID, c.bad)
		}
		if status != StatusQueued || expected == 0 || rows < expected {
			return false, nil
		}
		final := StatusDone
		if failed > 0 {
			final = StatusFailed
		}
		_, err = tx.Exec(s.d.rebind(`UPDATE runs SET status = ?, finished = ? WHERE id = ?`),
			final, time.Now().UTC().Format(time.RFC3339), runID)
		return err == nil, err
	})
}

// HasResult reports whether a run has its row for variantIdx and sizeIdx.
func (s *Store) HasResult(runID int64, variantIdx, sizeIdx int) (bool, error) {
	var n any
	err := s.db.QueryRow(s.d.rebind(`SELECT COUNT(*) FROM results WHERE run_id = ? AND variant_idx = ? AND size_idx = ?`),
		runID, variantIdx, sizeIdx).Scan(&n)
	if err != nil {
		return false, s.errf("run %d: %v", runID, err)
	}
	c := checker{vals: []any{n}}
	k := c.int(0, "the result count", 0, 1)
	if c.bad != "" {
		return false, s.damaged("run %d: %s", runID, c.bad)
	}
	return k == 1, nil
}

// ResultKey names a result row of a run: its variant and size index.
type ResultKey struct{ Variant, Size int }

// ResultKeys lists the (variant, size) of the rows a run has, in order.
func (s *Store) ResultKeys(runID int64) ([]ResultKey, error) {
	rows, err := s.db.Query(s.d.rebind(`SELECT variant_idx, size_idx FROM results WHERE run_id = ? ORDER BY variant_idx, size_idx`), runID)
	if err != nil {
		return nil, s.errf("run %d: %v", runID, err)
	}
	defer rows.Close()
	var out []ResultKey
	for rows.Next() {
		vals, err := scanRaw(rows, 2)
		if err != nil {
			return nil, s.errf("run %d: %v", runID, err)
		}
		c := checker{vals: vals}
		k := ResultKey{int(c.int(0, "variant_idx", 0, maxIndex)), int(c.int(1, "size_idx", 0, maxIndex))}
		if c.bad != "" {
			return nil, s.damaged("run %d: a result: %s", runID, c.bad)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf("run %d: %v", runID, err)
	}
	return out, nil
}

// Result reads one result row of a run back, with its flow records, as Run
// reads it (same checks and bounds). A missing row wraps ErrNotFound.
func (s *Store) Result(runID int64, variantIdx, sizeIdx int) (metrics.SizeResult, error) {
	var raw any
	err := s.db.QueryRow(s.d.rebind(`SELECT data FROM results WHERE run_id = ? AND variant_idx = ? AND size_idx = ?`),
		runID, variantIdx, sizeIdx).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return metrics.SizeResult{}, fmt.Errorf("store: run %d: result %d/%d: %w in %s", runID, variantIdx, sizeIdx, ErrNotFound, s.name)
	}
	if err != nil {
		return metrics.SizeResult{}, s.errf("run %d: %v", runID, err)
	}
	c := checker{vals: []any{raw}}
	blob := c.blob(0, "data")
	if c.bad != "" {
		return metrics.SizeResult{}, s.damaged("run %d: result %d/%d: %s", runID, variantIdx, sizeIdx, c.bad)
	}
	r, err := decompress(blob)
	if err != nil {
		return metrics.SizeResult{}, s.damaged("run %d: result %d/%d: %v", runID, variantIdx, sizeIdx, err)
	}
	rows, err := s.db.Query(s.d.rebind(`SELECT chunk, records, data FROM flow_records
		WHERE run_id = ? AND variant_idx = ? AND size_idx = ? ORDER BY chunk`), runID, variantIdx, sizeIdx)
	if err != nil {
		return r, s.errf("run %d: flow records: %v", runID, err)
	}
	defer rows.Close()
	for next := int64(0); rows.Next(); next++ {
		vals, err := scanRaw(rows, 3)
		if err != nil {
			return r, s.errf("run %d: flow records: %v", runID, err)
		}
		c := checker{vals: vals}
		chunk := c.int(0, "chunk", 0, maxIndex)
		n := int(c.int(1, "records", 1, flowChunk))
		data := c.blob(2, "data")
		bad := func(format string, a ...any) error {
			return s.damaged("run %d: result %d/%d: flow record chunk %d: %s", runID, variantIdx, sizeIdx, chunk, fmt.Sprintf(format, a...))
		}
		switch {
		case c.bad != "":
			return r, s.damaged("run %d: flow records: %s", runID, c.bad)
		case chunk != next:
			return r, bad("chunk %d was expected (chunks are numbered from 0)", next)
		case len(r.Records)+n > maxResultRecords:
			return r, bad("more than %d flow records for one result", maxResultRecords)
		}
		if h, ok := chunkRecords(data); !ok || h != uint64(n) {
			return r, bad("its header disagrees with its row's count of %d", n)
		}
		recs, err := decodeFlows(data, r.Records)
		if err != nil {
			return r, bad("%v", err)
		}
		if len(recs)-len(r.Records) != n {
			return r, bad("%d records where its row says %d", len(recs)-len(r.Records), n)
		}
		r.Records = recs
	}
	if err := rows.Err(); err != nil {
		return r, s.errf("run %d: flow records: %v", runID, err)
	}
	return r, nil
}

// CancelQueued marks a queued run interrupted (its remaining jobs are the
// queue's to cancel) and reports whether it was queued; a run that is
// not queued (done, failed, already cancelled, or run locally) is left as
// it is. A missing run wraps ErrNotFound.
func (s *Store) CancelQueued(runID int64) (bool, error) {
	if err := s.writable(fmt.Sprintf("cancelling run %d", runID)); err != nil {
		return false, err
	}
	res, err := s.db.Exec(s.d.rebind(`UPDATE runs SET status = ?, finished = ? WHERE id = ? AND status = ?`),
		StatusInterrupted, time.Now().UTC().Format(time.RFC3339), runID, StatusQueued)
	if err != nil {
		return false, s.errf("cancelling run %d: %v", runID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.errf("cancelling run %d: %v", runID, err)
	}
	if n == 0 {
		if _, err := s.Meta(runID); err != nil {
			return false, err
		}
	}
	return n > 0, nil
}

// OpenSQLiteDB opens the SQLite database at path (a DSN as for Open) with
// the store's connection parameters — the write lock taken when a
// transaction begins, WAL, a busy timeout — and one connection, for
// another user of the same file (the job queue's driver). The store must
// have created the file (Open) first.
func OpenSQLiteDB(dsn string) (*sql.DB, error) {
	path, ok := SQLitePath(dsn)
	if !ok {
		return nil, errors.New("store: not a SQLite database path")
	}
	if _, err := checkSQLitePath(path); err != nil {
		return nil, fmt.Errorf("store: cannot open database %s: %s", path, oneLine(err.Error()))
	}
	uri, err := sqliteURI(path, sqliteWrite)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(sqliteDialect.driver, uri)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
