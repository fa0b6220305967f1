package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"fabriclab/store"
)

// riverClient is what this package uses of a *river.Client, whatever its
// driver's transaction type.
type riverClient interface {
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobCancel(ctx context.Context, jobID int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	Start(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	// Subscribe only on a client that works jobs (Queue.Work).
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	ID() string
}

// Queue is the job queue in a results database.
type Queue struct {
	name      string // the database, for messages (no password)
	newClient func(cfg *river.Config) (riverClient, error)
	close     func()
	client    riverClient // for inserting, listing and cancelling; never started
}

// connectTimeout bounds how long Open waits for a PostgreSQL server.
const connectTimeout = 10 * time.Second

// Open opens the job queue in the results database dsn (a SQLite path, as
// for store.Open, which must have created the file, or a postgres:// URL)
// and creates or migrates River's tables in it. name is the database as
// messages show it (store.Store.Name: no password).
func Open(ctx context.Context, dsn, name string, log io.Writer) (*Queue, error) {
	q := &Queue{name: name}
	fail := func(err error) error {
		return fmt.Errorf("queue: the job queue in %s: %s", name, oneLine(err.Error()))
	}
	logger := riverLogger(log, "fabriclab: queue: ", nil)
	var migrate func(context.Context) error
	if store.IsPostgres(dsn) {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			return nil, errors.New("queue: cannot parse the PostgreSQL URL")
		}
		if cfg.ConnConfig.ConnectTimeout == 0 {
			cfg.ConnConfig.ConnectTimeout = connectTimeout
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fail(err)
		}
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err = pool.Ping(cctx)
		cancel()
		if err != nil {
			pool.Close()
			return nil, fail(err)
		}
		driver := riverpgxv5.New(pool)
		q.close = pool.Close
		q.newClient = func(cfg *river.Config) (riverClient, error) { return river.NewClient[pgx.Tx](driver, cfg) }
		migrate = func(ctx context.Context) error { return migrateRiver(ctx, driver) }
	} else {
		db, err := store.OpenSQLiteDB(dsn)
		if err != nil {
			return nil, err
		}
		driver := riversqlite.New(db)
		q.close = func() { db.Close() }
		q.newClient = func(cfg *river.Config) (riverClient, error) { return river.NewClient[*sql.Tx](driver, cfg) }
		migrate = func(ctx context.Context) error { return migrateRiver(ctx, driver) }
	}
	if err := migrate(ctx); err != nil {
		q.close()
		return nil, fail(err)
	}
	c, err := q.newClient(&river.Config{Logger: logger, SkipUnknownJobCheck: true, MaxAttempts: MaxAttempts})
	if err != nil {
		q.close()
		return nil, fail(err)
	}
	q.client = c
	return q, nil
}

// migrateRiver creates or migrates River's tables. Two processes opening a
// fresh database at once may race (River's migrator takes no lock): the
// loser's migration fails, and trying again finds it applied.
func migrateRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		if err == nil || try == 4 || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
	}
}

// Close closes the queue's connections.
func (q *Queue) Close() { q.close() }

// Submit inserts the jobs of run, all or none.
func (q *Queue) Submit(ctx context.Context, run int64, s Submission) error {
	if len(s.Jobs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(s.Jobs))
	for i := range s.Jobs {
		a := s.Jobs[i]
		a.Run = run
		params[i] = river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{
			Queue: Name, MaxAttempts: MaxAttempts, Tags: []string{Tag(run)}}}
	}
	if _, err := q.client.InsertMany(ctx, params); err != nil {
		return fmt.Errorf("queue: queueing %d jobs in %s: %s", len(params), q.name, oneLine(err.Error()))
	}
	return nil
}

var unfinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled}

// eachJob calls fn for each of run's jobs in the given states, a page at a
// time.
func (q *Queue) eachJob(ctx context.Context, run int64, states []rivertype.JobState, limit int, fn func(*rivertype.JobRow) error) error {
	params := river.NewJobListParams().Kinds(Kind).TagsAll(Tag(run)).States(states...).First(min(limit, 100))
	for n := 0; n < limit; {
		res, err := q.client.JobList(ctx, params)
		if err != nil {
			return fmt.Errorf("queue: listing the jobs of run %d in %s: %s", run, q.name, oneLine(err.Error()))
		}
		for _, j := range res.Jobs {
			if err := fn(j); err != nil {
				return err
			}
		}
		n += len(res.Jobs)
		if len(res.Jobs) < 100 || res.LastCursor == nil {
			return nil
		}
		params = params.After(res.LastCursor)
	}
	return nil
}

// Cancel cancels the jobs of run that have not finished: those waiting
// never run, running ones are stopped (their worker hears it within
// seconds). It returns how many it cancelled.
func (q *Queue) Cancel(ctx context.Context, run int64) (int, error) {
	n := 0
	err := q.eachJob(ctx, run, unfinished, 1<<30, func(j *rivertype.JobRow) error {
		if _, err := q.client.JobCancel(ctx, j.ID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("queue: cancelling job %d of run %d: %s", j.ID, run, oneLine(err.Error()))
		}
		n++
		return nil
	})
	return n, err
}

// Progress tells how many of run's jobs are not finished, and why River
// gave up on those it gave up on (at most 10).
func (q *Queue) Progress(ctx context.Context, run int64) (Progress, error) {
	var p Progress
	err := q.eachJob(ctx, run, unfinished, 1, func(*rivertype.JobRow) error { p.Pending++; return nil })
	if err != nil {
		return p, err
	}
	err = q.eachJob(ctx, run, []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateCancelled}, 10, func(j *rivertype.JobRow) error {
		why := string(j.State)
		if n := len(j.Errors); n > 0 {
			why = j.Errors[n-1].Error
		}
		p.Failed = append(p.Failed, why)
		return nil
	})
	return p, err
}
