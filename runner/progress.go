package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"fabriclab/scenario"
)

// BarReporter draws progress bars on a terminal: one bar per running job
// (its fraction done) above an overall bar of jobs done / total. Finished
// jobs are logged above the bars.
type BarReporter struct {
	w    io.Writer
	opts []mpb.ContainerOption

	p       *mpb.Progress
	total   *mpb.Bar
	mu      sync.Mutex
	active  map[int]*activeBar
	stop    chan struct{}
	stopped chan struct{}
}

type activeBar struct {
	bar  *mpb.Bar
	frac func() float64
}

const barScale = 1000 // a job bar counts per-mille

// NewBarReporter draws on w (a terminal), with extra mpb options.
func NewBarReporter(w io.Writer, opts ...mpb.ContainerOption) *BarReporter {
	return &BarReporter{w: w, opts: opts}
}

func (b *BarReporter) Start(total, workers int) {
	opts := append([]mpb.ContainerOption{
		mpb.WithOutput(b.w),
		mpb.WithWidth(40),
		mpb.WithRefreshRate(150 * time.Millisecond),
	}, b.opts...)
	b.p = mpb.New(opts...)
	b.active = map[int]*activeBar{}
	b.total = b.p.AddBar(int64(total),
		mpb.BarPriority(1<<30), // always the bottom line
		mpb.PrependDecorators(
			decor.Name(fmt.Sprintf("jobs (%d workers) ", workers)),
			decor.CountersNoUnit("%d/%d", decor.WCSyncWidth),
		),
		mpb.AppendDecorators(
			decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace),
		),
	)
	b.stop, b.stopped = make(chan struct{}), make(chan struct{})
	go b.refresh()
}

// refresh copies each running job's fraction into its bar; the job's
// progress callback only stores a number, so it stays cheap however often
// the simulator calls it.
func (b *BarReporter) refresh() {
	defer close(b.stopped)
	t := time.NewTicker(150 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			for _, a := range b.active {
				a.bar.SetCurrent(min(int64(a.frac()*barScale), barScale-1))
			}
			b.mu.Unlock()
		}
	}
}

func (b *BarReporter) JobStart(index int, job scenario.Job, frac func() float64) {
	bar := b.p.AddBar(barScale,
		mpb.BarPriority(index),
		mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(JobLabel(job), decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace)),
	)
	b.mu.Lock()
	b.active[index] = &activeBar{bar: bar, frac: frac}
	b.mu.Unlock()
}

func (b *BarReporter) JobDone(ev JobEvent) {
	b.mu.Lock()
	a := b.active[ev.Index]
	delete(b.active, ev.Index)
	b.mu.Unlock()
	if a != nil {
		a.bar.SetTotal(-1, true) // complete → removed
	}
	fmt.Fprintf(b.p, "[%d/%d] %s %s\n", ev.Done, ev.Total, JobLabel(ev.Job), Outcome(ev.JobResult))
	b.total.Increment()
}

func (b *BarReporter) Interrupted(running int) {
	fmt.Fprintln(b.p, interruptNotice(running))
}

func (b *BarReporter) Finish(interrupted bool) {
	close(b.stop)
	<-b.stopped
	b.mu.Lock()
	for i, a := range b.active { // cannot happen: every started job ends
		a.bar.Abort(true)
		delete(b.active, i)
	}
	b.mu.Unlock()
	if !b.total.Completed() {
		b.total.Abort(false) // interrupted: keep the bar showing how far it got
	}
	b.p.Wait()
}
