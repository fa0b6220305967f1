package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"fabriclab/store"
)

// A queued run ends when its last row is saved (store.AddQueuedResult) —
// or never, if River gives up on one of its jobs (discarded after
// MaxAttempts) or a worker refuses one (cancelled, with the reason): its
// row never comes. Settle is the one place that ends such a run: failed,
// as the README's "Results store" says, with the rows it has. Workers
// call it as each of their jobs ends (and look now and then for jobs
// River's rescuer discarded), `run --queue --wait` when River is done
// with the run's jobs, and `serve --queue` as it follows a launch.

// Settle marks run failed when River has finished with every one of its
// jobs, gave up on or refused at least one, and rows are missing; a run
// that is not queued any more (done, failed, cancelled) is left as it is.
// It returns the run's Progress (read before the run's rows, so that a
// row saved by a job River has finished is counted) and whether it marked
// the run failed.
func (q *Queue) Settle(ctx context.Context, st *store.Store, run int64) (Progress, bool, error) {
	pr, err := q.Progress(ctx, run)
	if err != nil || pr.Pending > 0 || len(pr.Failed) == 0 {
		// Jobs to go, or none River gave up on: the last row ends the
		// run. (A run whose jobs are not inserted yet has none at all.)
		return pr, false, err
	}
	m, err := st.Meta(run)
	if err != nil {
		return pr, false, err
	}
	if m.Status != store.StatusQueued || m.Expected == 0 || m.Rows >= m.Expected {
		return pr, false, nil
	}
	if err := st.FinishRun(run, store.StatusFailed, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return pr, false, err
	}
	return pr, true, nil
}

// SettledMessage says why Settle marked run failed, in one line.
func SettledMessage(run int64, pr Progress) string {
	msg := fmt.Sprintf("run %d failed: River finished with its jobs and rows are missing", run)
	if len(pr.Failed) > 0 {
		msg += ": " + strings.Join(dedupe(pr.Failed), "; ")
	}
	return oneLine(msg)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// runOf is the run of a fabriclab job, from its tag (its arguments carry
// the bundle: not decoded for this).
func runOf(j *rivertype.JobRow) (int64, bool) {
	if j == nil || j.Kind != Kind {
		return 0, false
	}
	for _, t := range j.Tags {
		if s, ok := strings.CutPrefix(t, "fabriclab_run_"); ok {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 {
				return id, true
			}
		}
	}
	return 0, false
}

// discardedRuns lists the runs of fabriclab jobs River discarded since
// the given time (at most max jobs looked at, newest first).
func (q *Queue) discardedRuns(ctx context.Context, since time.Time, max int) ([]int64, error) {
	params := river.NewJobListParams().Kinds(Kind).States(rivertype.JobStateDiscarded).
		OrderBy(river.JobListOrderByFinalizedAt, river.SortOrderDesc).First(100)
	seen := map[int64]bool{}
	var runs []int64
	for n := 0; n < max; {
		res, err := q.client.JobList(ctx, params)
		if err != nil {
			return runs, fmt.Errorf("queue: listing discarded jobs in %s: %s", q.name, oneLine(err.Error()))
		}
		for _, j := range res.Jobs {
			if j.FinalizedAt != nil && j.FinalizedAt.Before(since) {
				return runs, nil
			}
			if id, ok := runOf(j); ok && !seen[id] {
				seen[id] = true
				runs = append(runs, id)
			}
		}
		n += len(res.Jobs)
		if len(res.Jobs) < 100 || res.LastCursor == nil {
			break
		}
		params = params.After(res.LastCursor)
	}
	return runs, nil
}
