// Package queue runs a run's jobs on many machines: every job (variant ×
// sweep point × size) of a `fabriclab run --queue` becomes a job of River
// (github.com/riverqueue/river) in the results database itself — the
// riversqlite driver on the default SQLite file, riverpgxv5 on PostgreSQL —
// and any number of `fabriclab worker` processes take them, run them with
// the local run's job function and save each result row into the run.
//
// A job carries everything it needs (Args): the run it belongs to, its
// variant and size index, the fabriclab version that expanded it, the
// --set and --sweep options, and a bundle of the scenario text and every
// file it references (bundle.go), so workers need no shared filesystem.
// A worker loads the scenario from the bundle alone, expands it as the
// submitter did and runs the one job: the result is the local run's, bit
// for bit (the engines are deterministic for a seed).
//
// Exactly once: a worker that dies mid-job leaves its River job running
// until River's rescuer (on whichever worker leads) retries it after
// RescueAfter; another worker runs it again. Rows are saved with
// store.AddQueuedResult, which writes nothing for a (run, variant, size)
// that has its row, and a worker skips a job whose row is there, so a job
// run twice lands once.
package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"fabriclab/runner"
	"fabriclab/scenario"
)

// Kind is the River job kind of a fabriclab job; Name the River queue.
const (
	Kind = "fabriclab_job"
	Name = "fabriclab"
)

// MaxAttempts is how many times River runs a job (a first run and its
// retries, a rescue counting as one) before it gives up on it.
const MaxAttempts = 5

// retryBase is the delay before the first retry (tests shorten it).
var retryBase = time.Second

// maxArgs bounds a job's encoded arguments as a worker reads them.
var maxArgs = MaxBundle*4/3 + 1<<20

// Args are a River job's arguments: one job of a run.
type Args struct {
	Run     int64  `json:"run"`     // the run in the results database
	Variant int    `json:"variant"` // scenario.Job.VariantIndex
	Size    int    `json:"size"`    // scenario.Job.SizeIndex
	Label   string `json:"label"`   // "variant size" as expanded by the submitter, checked by the worker
	Bytes   int64  `json:"bytes"`   // the job's data size
	Version string `json:"version"` // the fabriclab that expanded the job

	Path     string   `json:"path"`     // the scenario file as given to run (for messages)
	Scenario string   `json:"scenario"` // the scenario file's path in the bundle
	Sets     []string `json:"sets,omitempty"`
	Sweeps   []string `json:"sweeps,omitempty"`
	Bundle   []byte   `json:"bundle"` // bundle.go
	Digest   string   `json:"digest"` // hex SHA-256 of Bundle

	bad string // why the arguments could not be decoded (UnmarshalJSON)
}

// Kind is River's name for the job kind.
func (Args) Kind() string { return Kind }

// InsertOpts puts the job on the fabriclab queue.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Name, MaxAttempts: MaxAttempts}
}

// UnmarshalJSON decodes a job's arguments and never fails: River would
// retry a job whose arguments do not decode as if it had failed for a
// passing reason; the worker cancels it instead, saying why (Args.bad).
func (a *Args) UnmarshalJSON(b []byte) error {
	type plain Args
	*a = Args{}
	if int64(len(b)) > maxArgs {
		a.bad = fmt.Sprintf("its arguments are %d MiB, more than %d MiB", len(b)>>20, maxArgs>>20)
		return nil
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		a.bad = "its arguments are not a fabriclab job (" + describeJSONError(err) + ")"
		return nil
	}
	*a = Args(p)
	a.bad = a.check()
	return nil
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not JSON at byte %d", syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return "not a JSON object"
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s is not a %s", typ.Field, typ.Type)
	}
	return "not JSON"
}

// check is what is wrong with decoded arguments ("" if nothing).
func (a *Args) check() string {
	switch {
	case a.Run <= 0:
		return fmt.Sprintf("run %d is not a run id", a.Run)
	case a.Variant < 0 || a.Variant > 1<<31-1 || a.Size < 0 || a.Size > 1<<31-1:
		return fmt.Sprintf("variant %d, size %d: index out of range", a.Variant, a.Size)
	case len(a.Bundle) == 0:
		return "it carries no bundle"
	case int64(len(a.Bundle)) > MaxBundle:
		return fmt.Sprintf("its bundle is %d MiB, more than %d MiB", len(a.Bundle)>>20, MaxBundle>>20)
	case len(a.Digest) != 64:
		return "its bundle digest is not a SHA-256"
	case len(a.Sets) > 4096 || len(a.Sweeps) > 4096:
		return "it has more than 4096 --set or --sweep options"
	case len(a.Label) > 4096 || len(a.Path) > 4096 || len(a.Version) > 256:
		return "its label, path or version is too long"
	}
	if err := checkName(a.Scenario); err != nil {
		return "its scenario path: " + err.Error()
	}
	return ""
}

// Tag is the River tag of a run's jobs.
func Tag(run int64) string { return "fabriclab_run_" + strconv.FormatInt(run, 10) }

// Submission is a run's jobs, ready to insert (Plan, Queue.Submit).
type Submission struct {
	Jobs []Args // Run is set by Submit
}

// Plan makes the River jobs of f, the loaded scenario file (path as given,
// with the sets and sweeps applied) and its expanded jobs. It bundles the
// scenario and the files it reads once; every job carries the bundle.
func Plan(path string, f *scenario.File, jobs []scenario.Job, sets, sweeps []string, version string) (Submission, error) {
	p, err := pack(f)
	if err != nil {
		return Submission{}, fmt.Errorf("%s: %w", path, err)
	}
	var s Submission
	// Largest first, as a local run on several workers starts them
	// (runner.StartOrder): workers take jobs in insertion order, and a
	// size sweep's largest job would otherwise run alone at the end.
	for _, i := range runner.StartOrder(jobs, 2) {
		j := jobs[i]
		s.Jobs = append(s.Jobs, Args{
			Variant: j.VariantIndex, Size: j.SizeIndex, Label: jobLabel(j), Bytes: int64(j.Size), Version: version,
			Path: path, Scenario: p.Scenario, Sets: sets, Sweeps: sweeps, Bundle: p.Data, Digest: p.Digest,
		})
	}
	return s, nil
}

func jobLabel(j scenario.Job) string { return fmt.Sprintf("%s %s", j.Variant, j.Size) }

// Progress of a run's River jobs (Queue.Progress).
type Progress struct {
	Pending int      // jobs not finalized: available, scheduled, retryable, running…
	Failed  []string // why each job River gave up on (discarded) or that was cancelled gave up, its last error
}

// retryPolicy retries a job 1 s, 2 s, 4 s … (at most a minute) after an
// attempt that failed: a failure is a worker stopping or the database
// going away, not a job that needs time.
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := retryBase << min(max(job.Attempt-1, 0), 6)
	return time.Now().Add(min(d, time.Minute))
}
