package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fabriclab/internal/realpath"
	"fabriclab/queue"
	"fabriclab/report"
	"fabriclab/runner"
	"fabriclab/scenario"
	"fabriclab/store"
	"fabriclab/units"
)

// Launch states.
const (
	stateQueued  = "queued"
	stateRunning = "running"
)

// launch is one scenario launched from the page: queued for a worker,
// then run and saved as a store run.
type launch struct {
	ID     int64
	Name   string
	Source string // the example's name, or "pasted"
	file   *scenario.File
	text   []byte
	sets   []string
	// sub is the launch's jobs for the job queue (serve --queue), made
	// when the launch is checked, before anything is saved.
	sub    *queue.Submission
	ctx    context.Context
	cancel context.CancelFunc
	// cancelled: the user cancelled (a closing server cancels ctx too,
	// but leaves a queued run to its workers).
	cancelled atomic.Bool

	mu       sync.Mutex
	state    string // stateQueued, stateRunning, or the run's final store status
	runID    int64
	done     int
	total    int
	running  map[int]func() float64 // index → the job's progress
	errMsg   string
	changed  chan struct{} // closed and replaced at every change (SSE wakes on it)
	started  time.Time
	finished time.Time
}

// progress is what the page and the events stream show of a launch.
type progress struct {
	ID       int64   `json:"id"`
	Name     string  `json:"name"`
	State    string  `json:"state"`
	RunID    int64   `json:"run_id,omitempty"`
	Done     int     `json:"done"`
	Total    int     `json:"total"`
	Fraction float64 `json:"fraction"`
	Error    string  `json:"error,omitempty"`
	Final    bool    `json:"final"`
}

func (l *launch) snapshot() progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := progress{ID: l.ID, Name: l.Name, State: l.state, RunID: l.runID, Done: l.done, Total: l.total, Error: l.errMsg}
	frac := float64(l.done)
	for _, f := range l.running {
		frac += min(max(f(), 0), 1)
	}
	if l.total > 0 {
		p.Fraction = frac / float64(l.total)
	}
	p.Final = l.state != stateQueued && l.state != stateRunning
	return p
}

// update changes l under its lock and wakes its watchers.
func (l *launch) update(f func()) {
	l.mu.Lock()
	f()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *launch) watch() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// launcher is the server's worker pool.
type launcher struct {
	s      *Server
	queue  chan *launch
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	nextID int64
	byID   map[int64]*launch
	closed bool
}

func newLauncher(s *Server) *launcher {
	ctx, stop := context.WithCancel(context.Background())
	q := s.cfg.MaxQueued
	if q <= 0 {
		q = 16
	}
	lr := &launcher{s: s, queue: make(chan *launch, q), ctx: ctx, stop: stop, byID: map[int64]*launch{}}
	for range max(s.cfg.Workers, 1) {
		lr.wg.Add(1)
		go lr.work()
	}
	return lr
}

func (lr *launcher) close() {
	lr.mu.Lock()
	if lr.closed {
		lr.mu.Unlock()
		return
	}
	lr.closed = true
	lr.mu.Unlock()
	lr.stop()
	lr.wg.Wait()
}

// busyMsg is the launch page's answer when the launch queue is full.
const busyMsg = "the server is busy: too many launches waiting; try again when one ends"

// full reports whether add would find the queue full now.
func (lr *launcher) full() bool { return len(lr.queue) == cap(lr.queue) }

// add queues l; false when the queue is full or the server is closing.
func (lr *launcher) add(l *launch) bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.closed {
		return false
	}
	lr.nextID++
	l.ID = lr.nextID
	l.ctx, l.cancel = context.WithCancel(lr.ctx)
	l.state, l.changed = stateQueued, make(chan struct{})
	select {
	case lr.queue <- l:
		lr.byID[l.ID] = l
		return true
	default:
		lr.nextID--
		l.cancel()
		return false
	}
}

func (lr *launcher) get(id int64) *launch {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.byID[id]
}

func (lr *launcher) work() {
	defer lr.wg.Done()
	for {
		select {
		case l := <-lr.queue:
			lr.run(l)
		case <-lr.ctx.Done():
			// Drain: what never started is interrupted.
			for {
				select {
				case l := <-lr.queue:
					l.update(func() { l.state = store.StatusInterrupted; l.errMsg = "the server stopped before it ran" })
				default:
					return
				}
			}
		}
	}
}

// run runs a launch and saves it as a store run.
func (lr *launcher) run(l *launch) {
	s := lr.s
	if l.ctx.Err() != nil {
		l.update(func() { l.state = store.StatusInterrupted; l.errMsg = "cancelled before it started" })
		return
	}
	f := l.file
	jobs := f.Jobs()
	vs, seed, name := variantsOf(f, jobs)
	started := time.Now().UTC()
	meta := store.Meta{Name: name, ScenarioFile: l.Source, ScenarioText: string(l.text), Seed: seed,
		Sets: l.sets, Version: s.cfg.Version, Tags: []string{"web"}, Started: started.Format(time.RFC3339), Expected: len(jobs)}
	// The scenario was read in the examples directory (a pasted one too),
	// not the server's: its files are found there again.
	if dir, err := filepath.Abs(filepath.Dir(f.Path)); err == nil {
		meta.WorkDir = dir
	}
	if s.cfg.Queue != nil {
		meta.Queue = queue.Name
	}
	id, err := s.cfg.Store.BeginRun(meta, vs)
	if err != nil {
		msg := s.storeProblem(fmt.Sprintf("launch %d: could not save the run", l.ID), err)
		l.update(func() { l.state = store.StatusFailed; l.errMsg = msg })
		return
	}
	if s.cfg.Queue != nil {
		lr.runQueued(l, id, jobs, started)
		return
	}
	l.update(func() {
		l.state, l.runID, l.total, l.started = stateRunning, id, len(jobs), started
		l.running = map[int]func() float64{}
	})
	s.logf("launch %d (%s) is run %d: %d jobs", l.ID, name, id, len(jobs))
	rep := &launchReporter{l: l, s: s, runID: id}
	parallel := s.cfg.Parallel
	if parallel <= 0 {
		parallel = runner.DefaultParallel(jobs)
	}
	rn := runner.Runner{Run: s.cfg.Run, Parallel: parallel, Reporter: rep, Cores: s.cores}
	results := rn.RunAll(l.ctx, jobs)
	status := store.StatusDone
	for _, jr := range results {
		if jr.Err != nil && !(l.ctx.Err() != nil && errors.Is(jr.Err, context.Canceled)) {
			status = store.StatusFailed
		}
	}
	if l.ctx.Err() != nil {
		status = store.StatusInterrupted
	}
	rep.mu.Lock()
	saveErr := rep.saveErr
	rep.mu.Unlock()
	if saveErr != nil {
		status = store.StatusIncomplete
	}
	if err := s.cfg.Store.FinishRun(id, status, time.Now().UTC().Format(time.RFC3339)); err != nil && saveErr == nil {
		saveErr = err
	}
	var saveMsg string
	if saveErr != nil {
		saveMsg = s.storeProblem(fmt.Sprintf("launch %d (run %d): not everything could be saved", l.ID, id), saveErr)
	}
	l.update(func() {
		l.state, l.finished = status, time.Now()
		if saveMsg != "" {
			l.errMsg = saveMsg
		}
	})
	s.logf("launch %d (run %d) %s", l.ID, id, status)
}

// runQueued puts launch l, saved as run id, on the job queue and follows
// its rows as the workers save them, until the run ends or l is cancelled
// (which cancels its jobs).
func (lr *launcher) runQueued(l *launch, id int64, jobs []scenario.Job, started time.Time) {
	s := lr.s
	fail := func(msg string) {
		_ = s.cfg.Store.FinishRun(id, store.StatusFailed, time.Now().UTC().Format(time.RFC3339))
		l.update(func() { l.state, l.runID, l.errMsg = store.StatusFailed, id, msg })
	}
	if l.sub == nil { // cannot happen: launchPost plans every launch it queues with a job queue
		fail("the launch was not planned for the job queue")
		return
	}
	if err := s.cfg.Queue.Submit(l.ctx, id, *l.sub); err != nil {
		if l.ctx.Err() != nil {
			_ = s.cfg.Store.FinishRun(id, store.StatusInterrupted, time.Now().UTC().Format(time.RFC3339))
			l.update(func() {
				l.state, l.runID, l.errMsg = store.StatusInterrupted, id, "cancelled before its jobs were queued"
			})
			return
		}
		fail("could not queue the jobs: " + oneLine(err.Error()))
		return
	}
	l.update(func() {
		l.state, l.runID, l.total, l.started = stateRunning, id, len(jobs), started
		l.running = map[int]func() float64{}
	})
	s.logf("launch %d (%s) is queued run %d: %d jobs", l.ID, l.Name, id, len(jobs))
	// The workers run it: this pool's worker is free for the next launch,
	// and a goroutine of its own follows the rows.
	lr.wg.Add(1)
	go func() {
		defer lr.wg.Done()
		lr.follow(l, id)
	}()
}

// follow tracks a queued run's rows until it ends: done, cancelled from
// the page (once), or River has finished with every job while rows are
// missing (a job refused or out of attempts: the run is failed, with
// River's reasons). A closing server stops following and leaves the run
// to its workers.
func (lr *launcher) follow(l *launch, id int64) {
	s := lr.s
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	done := l.ctx.Done()
	lastCheck := time.Now()
	for {
		select {
		case <-tick.C:
		case <-done:
			done = nil // cancel once, then keep following
			if !l.cancelled.Load() {
				return // the server is closing: the workers go on with the run
			}
			// Cancel: the run is kept as interrupted with its saved rows.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = s.cfg.Store.CancelQueued(id)
			_, _ = s.cfg.Queue.Cancel(ctx, id)
			cancel()
		}
		m, err := s.cfg.Store.Meta(id)
		if err != nil {
			msg := s.storeProblem(fmt.Sprintf("launch %d (run %d): its state could not be read", l.ID, id), err)
			l.update(func() { l.errMsg = msg })
			continue
		}
		final := m.Status != store.StatusRunning && m.Status != store.StatusQueued && m.Status != ""
		if !final && time.Since(lastCheck) > 2*time.Second {
			lastCheck = time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			pr, err := s.cfg.Queue.Progress(ctx, id)
			cancel()
			if err == nil && pr.Pending == 0 {
				// River is done with every job, yet rows are missing.
				if m2, err := s.cfg.Store.Meta(id); err == nil && m2.Rows < m2.Expected {
					why := "River finished its jobs with rows missing"
					if len(pr.Failed) > 0 {
						why += ": " + oneLine(strings.Join(pr.Failed, "; "))
					}
					_ = s.cfg.Store.FinishRun(id, store.StatusFailed, time.Now().UTC().Format(time.RFC3339))
					l.update(func() { l.state, l.done, l.errMsg, l.finished = store.StatusFailed, m2.Rows, why, time.Now() })
					s.logf("launch %d (queued run %d) failed: %s", l.ID, id, why)
					return
				}
			}
		}
		l.update(func() {
			l.done = m.Rows
			if final {
				l.state, l.finished = m.Status, time.Now()
			}
		})
		if final {
			s.logf("launch %d (queued run %d) %s", l.ID, id, m.Status)
			return
		}
	}
}

// variantsOf is the run's variants as the store keeps them, its seed and
// name.
func variantsOf(f *scenario.File, jobs []scenario.Job) ([]report.VariantResult, uint64, string) {
	var vs []report.VariantResult
	for _, v := range f.Variants {
		vr := report.VariantResult{Name: v.Name, Parent: v.Parent}
		for _, sv := range v.Sweep {
			vr.Sweep = append(vr.Sweep, report.SweepValue{Key: sv.Key, Value: sv.Value})
		}
		if v.Spec != nil {
			vr.Collective = v.Spec.Workload.Kind
		}
		vs = append(vs, vr)
	}
	for _, j := range jobs {
		for len(vs) <= j.VariantIndex {
			vs = append(vs, report.VariantResult{})
		}
		if v := &vs[j.VariantIndex]; v.Name == "" {
			v.Name = j.Variant
			if j.Spec != nil {
				v.Collective = j.Spec.Workload.Kind
			}
		}
	}
	var seed uint64
	name := ""
	if f.Base != nil {
		seed, name = f.Base.Seed, f.Base.Name
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
	}
	return vs, seed, name
}

// launchReporter saves each result as its job ends and keeps the
// launch's progress.
type launchReporter struct {
	l       *launch
	s       *Server
	runID   int64
	mu      sync.Mutex
	saveErr error
}

func (r *launchReporter) Start(total, workers int) {}
func (r *launchReporter) JobStart(index int, _ scenario.Job, frac func() float64) {
	r.l.update(func() { r.l.running[index] = frac })
}
func (r *launchReporter) JobDone(ev runner.JobEvent) {
	res := ev.Result
	keep := true
	if ev.Err != nil {
		if ev.Stopped && errors.Is(ev.Err, context.Canceled) && res.SizeBytes == 0 && res.CCTS == 0 {
			keep = false
		} else if !errors.Is(ev.Err, context.Canceled) {
			res.Error = ev.Err.Error()
		}
		res.Complete = false
	}
	if res.SizeBytes == 0 {
		res.SizeBytes = int64(ev.Job.Size)
	}
	if keep {
		if err := r.s.cfg.Store.AddResult(r.runID, ev.Job.VariantIndex, ev.Job.SizeIndex, res); err != nil {
			r.mu.Lock()
			if r.saveErr == nil {
				r.saveErr = err
			}
			r.mu.Unlock()
		}
	}
	r.l.update(func() {
		delete(r.l.running, ev.Index)
		r.l.done = ev.Done
		if ev.Err != nil && !errors.Is(ev.Err, context.Canceled) && r.l.errMsg == "" {
			r.l.errMsg = fmt.Sprintf("%s/%s: %s", ev.Job.Variant, units.Size(res.SizeBytes), oneLine(ev.Err.Error()))
		}
	})
}
func (r *launchReporter) Interrupted(running int) {}
func (r *launchReporter) Finish(interrupted bool) {}

// examples lists the scenario files of the examples directory by name.
func (s *Server) examples() []string {
	if s.cfg.ExamplesDir == "" {
		return nil
	}
	ents, err := os.ReadDir(s.cfg.ExamplesDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// example reads the example of that name (only a name the listing has).
func (s *Server) example(name string) ([]byte, bool) {
	for _, n := range s.examples() {
		if n == name {
			b, err := os.ReadFile(filepath.Join(s.cfg.ExamplesDir, n))
			return b, err == nil && int64(len(b)) <= scenario.DefaultMaxBytes
		}
	}
	return nil, false
}

func (s *Server) launchPage(w http.ResponseWriter, r *http.Request) {
	data := map[string]any{"Examples": s.examples()}
	if ex := r.URL.Query().Get("example"); ex != "" {
		text, ok := s.example(ex)
		if !ok {
			s.fail(w, r, http.StatusNotFound, "no such example")
			return
		}
		data["YAML"], data["Example"] = string(text), ex
	}
	s.render(w, r, "launch", "Launch", data)
}

// launchPost validates the scenario and queues it; a scenario with
// errors comes back with them, line and column first.
func (s *Server) launchPost(w http.ResponseWriter, r *http.Request) {
	// Browsers send a textarea's lines with CRLF: the scenario is kept as
	// typed, with LF.
	text := strings.ReplaceAll(r.PostFormValue("yaml"), "\r\n", "\n")
	ex := r.PostFormValue("example")
	var sets []string
	for _, line := range strings.Split(r.PostFormValue("sets"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			sets = append(sets, line)
		}
	}
	back := func(code int, msg string) {
		w.WriteHeader(code)
		s.render(w, r, "launch", "Launch", map[string]any{"Examples": s.examples(), "YAML": text, "Example": ex,
			"Sets": strings.Join(sets, "\n"), "Error": msg})
	}
	source := "pasted"
	if strings.TrimSpace(text) == "" {
		if ex == "" {
			back(http.StatusUnprocessableEntity, "paste a scenario or pick an example")
			return
		}
		b, ok := s.example(ex)
		if !ok {
			back(http.StatusUnprocessableEntity, "no such example")
			return
		}
		text, source = string(b), ex
	} else if ex != "" {
		if b, ok := s.example(ex); ok && string(b) == text {
			source = ex
		}
	}
	l, code, msg := s.accept(text, source, sets)
	if msg != "" {
		back(code, msg)
		return
	}
	if !s.jobs.add(l) {
		back(http.StatusServiceUnavailable, busyMsg)
		return
	}
	http.Redirect(w, r, "/launches/"+strconv.FormatInt(l.ID, 10), http.StatusSeeOther)
}

// accept makes every check a launch must pass before anything of it is
// saved or queued, for the local pool and the job queue alike: the
// scenario as validate reads it (only files the server serves), its jobs
// as a build would take them (Config.Check), and, with a job queue, the
// jobs as `fabriclab submit` plans them (queue.Plan: the files a queued
// job carries, named relative to the scenario). It returns the launch, or
// the status and message the launch page answers with.
func (s *Server) accept(text, source string, sets []string) (*launch, int, string) {
	dir := s.cfg.ExamplesDir
	if dir == "" {
		dir = os.TempDir()
	}
	name := filepath.Join(dir, source)
	if source == "pasted" {
		name = filepath.Join(dir, "pasted.yaml")
	}
	if n := int64(len(text)); n > scenario.DefaultMaxBytes {
		// scenario's own message names run's --max-scenario-size, which
		// serve does not have.
		return nil, http.StatusUnprocessableEntity, fmt.Sprintf("%s: the scenario is %d bytes, larger than the %d MiB (%d bytes) a launch may be (the server's limit, which no option raises; `fabriclab run --max-scenario-size` runs a larger file from the command line)",
			filepath.Base(name), n, scenario.DefaultMaxBytes>>20, scenario.DefaultMaxBytes)
	}
	allow := func(path string) error {
		if s.allowedRef(path) {
			return nil
		}
		return errors.New("outside the examples directory: the server reads only the files it serves")
	}
	f, err := scenario.ParseOptions(name, []byte(text), scenario.Options{Sets: sets, AllowFile: allow})
	if err != nil {
		return nil, http.StatusUnprocessableEntity, shortPaths(oneLine(err.Error()), dir)
	}
	for _, ref := range f.ReferencedFiles() {
		if !s.allowedRef(ref) {
			return nil, http.StatusUnprocessableEntity, fmt.Sprintf("the scenario reads %s, outside the examples directory: the server runs only files it serves", filepath.Base(ref))
		}
	}
	jobs := f.Jobs()
	if len(jobs) == 0 {
		return nil, http.StatusUnprocessableEntity, "the scenario has no jobs to run"
	}
	if s.cfg.Check != nil {
		// A check may build a job (traffic engineering, telemetry flows):
		// at most as many at once as launches run, and none for a launch
		// the queue has no room for.
		if s.jobs.full() {
			return nil, http.StatusServiceUnavailable, busyMsg
		}
		select {
		case s.checking <- struct{}{}:
		default:
			return nil, http.StatusServiceUnavailable, "the server is busy checking other launches; try again in a moment"
		}
		msg := ""
		for _, j := range jobs {
			if err := s.cfg.Check(j); err != nil {
				msg = runner.JobLabel(j) + ": " + shortPaths(oneLine(err.Error()), dir)
				break
			}
		}
		<-s.checking
		if msg != "" {
			return nil, http.StatusUnprocessableEntity, msg
		}
	}
	l := &launch{Name: nameOf(f, source), Source: source, file: f, text: []byte(text), sets: sets}
	if s.cfg.Queue != nil {
		// What `submit` refuses is refused here, before the run is saved
		// (it was refused after, leaving a failed run with no rows).
		sub, err := queue.Plan(source, f, jobs, sets, nil, s.cfg.Version)
		if err != nil {
			return nil, http.StatusUnprocessableEntity, "the job queue cannot take it: " + markPaths(oneLine(err.Error()), dir)
		}
		l.sub = &sub
	}
	return l, 0, ""
}

// shortPaths writes the paths in a launch's error relative to the folders
// the server reads (the examples directory dir, the shared size
// distributions): the page does not show where the server keeps them. A
// folder is cut only where a path starts (the message's start, or after a
// space, quote, parenthesis or colon), so that a longer path that merely
// contains the folder's name is left whole.
func shortPaths(msg, dir string) string { return replacePaths(msg, dir, "", "") }

// markPaths is shortPaths for a message about absolute paths (the job
// queue refuses them): the folders are named, not dropped, so that a path
// does not read as a relative one ("<examples>/flows.txt").
func markPaths(msg, dir string) string {
	return replacePaths(msg, dir, "<examples>/", "<workloads>/")
}

func replacePaths(msg, dir, dirAs, workloadsAs string) string {
	for i, d := range []string{dir, os.Getenv(scenario.WorkloadsEnv)} {
		if d == "" {
			continue
		}
		as := dirAs
		if i == 1 {
			as = workloadsAs
		}
		forms := []string{filepath.Clean(d) + string(filepath.Separator)}
		if abs, err := filepath.Abs(d); err == nil && abs+string(filepath.Separator) != forms[0] {
			forms = append(forms, abs+string(filepath.Separator))
		}
		for _, f := range forms {
			msg = cutAtPathStarts(msg, f, as)
		}
	}
	return msg
}

// cutAtPathStarts replaces prefix with as wherever a path starts with it
// in msg.
func cutAtPathStarts(msg, prefix, as string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		if strings.HasPrefix(msg[i:], prefix) && (i == 0 || strings.IndexByte(" \t\"'`(:", msg[i-1]) >= 0) {
			i += len(prefix)
			b.WriteString(as)
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

func nameOf(f *scenario.File, source string) string {
	if f.Base != nil && f.Base.Name != "" {
		return f.Base.Name
	}
	return source
}

// allowedRef reports whether a file a pasted scenario reads is one the
// server offers: in the examples directory, or the shared size
// distributions.
func (s *Server) allowedRef(p string) bool {
	// Where p leads, as the kernel will follow its symbolic links: a link
	// inside a directory may lead out of it.
	target := realpath.Resolve(p)
	within := func(dir, p string) bool {
		rel, err := filepath.Rel(dir, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	inside := func(dir string) bool {
		if dir == "" {
			return false
		}
		absDir, err1 := filepath.Abs(dir)
		absP, err2 := filepath.Abs(p)
		if err1 != nil || err2 != nil || !within(absDir, absP) {
			return false
		}
		realDir, err := filepath.EvalSymlinks(absDir)
		return err == nil && within(realDir, target)
	}
	if inside(s.cfg.ExamplesDir) || inside(os.Getenv(scenario.WorkloadsEnv)) {
		return true
	}
	shared := func(p string) bool {
		return strings.HasSuffix(filepath.Dir(filepath.Clean(p)), filepath.Join("shared", "data", "workloads"))
	}
	return shared(p) && shared(target)
}

// launchID reads the {id} of a launch path.
func (s *Server) launchOf(w http.ResponseWriter, r *http.Request) *launch {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var l *launch
	if err == nil {
		l = s.jobs.get(id)
	}
	if l == nil {
		s.fail(w, r, http.StatusNotFound, "no such launch (launches are kept while the server runs)")
	}
	return l
}

func (s *Server) launchStatusPage(w http.ResponseWriter, r *http.Request) {
	l := s.launchOf(w, r)
	if l == nil {
		return
	}
	s.render(w, r, "launchstatus", "Launch "+strconv.FormatInt(l.ID, 10), l.snapshot())
}

// launchEvents streams the launch's progress as Server-Sent Events: one
// "progress" event at every change (and every half second while jobs
// run), the last with final true.
func (s *Server) launchEvents(w http.ResponseWriter, r *http.Request) {
	l := s.launchOf(w, r)
	if l == nil {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		ch := l.watch()
		p := l.snapshot()
		b, _ := json.Marshal(p)
		if _, err := fmt.Fprintf(w, "event: progress\ndata: %s\n\n", b); err != nil {
			return
		}
		fl.Flush()
		if p.Final {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) launchCancel(w http.ResponseWriter, r *http.Request) {
	l := s.launchOf(w, r)
	if l == nil {
		return
	}
	l.cancelled.Store(true)
	l.cancel()
	s.logf("launch %d cancelled from %s", l.ID, r.RemoteAddr)
	http.Redirect(w, r, "/launches/"+strconv.FormatInt(l.ID, 10), http.StatusSeeOther)
}
