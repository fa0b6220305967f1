package queue

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"fabriclab/internal/safetext"
)

// riverLogger is the logger River's clients get: River's warnings and
// errors as lines of the worker's (or the queue's) own format,
//
//	fabriclab: worker: River: job appears to be stuck (job_id=3, kind=fabriclab_job, timeout=1s)
//
// rather than slog's `time=… level=WARN msg=…` lines among them, and
// without what the worker says itself (a job cancelled remotely: the
// worker's line says the job was cancelled). mu serializes the lines with
// the worker's own (nil: a mutex of its own).
func riverLogger(w io.Writer, prefix string, mu *sync.Mutex) *slog.Logger {
	if mu == nil {
		mu = new(sync.Mutex)
	}
	return slog.New(&lineHandler{w: w, prefix: prefix, mu: mu})
}

// riverSaidByWorker are River's messages that repeat a worker's line.
var riverSaidByWorker = []string{
	"job cancelled remotely", // "…: stopped after …: the job was cancelled …"
}

type lineHandler struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	attrs  []string // key=value, from WithAttrs
	group  string   // the WithGroup prefix of keys, "a.b."
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	// River names its component first: "jobexecutor.JobExecutor: …".
	if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \t") {
		msg = msg[i+2:]
	}
	for _, said := range riverSaidByWorker {
		if strings.EqualFold(msg, said) {
			return nil
		}
	}
	if msg != "" {
		msg = strings.ToLower(msg[:1]) + msg[1:]
	}
	kv := append([]string(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		kv = appendAttr(kv, h.group, a)
		return true
	})
	who := "River"
	if r.Level >= slog.LevelError {
		who = "River error"
	}
	line := fmt.Sprintf("%s%s: %s", h.prefix, who, msg)
	if len(kv) > 0 {
		line += " (" + strings.Join(kv, ", ") + ")"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintln(h.w, safetext.Terminal(oneLine(line)))
	return err
}

func appendAttr(kv []string, group string, a slog.Attr) []string {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, b := range v.Group() {
			kv = appendAttr(kv, g, b)
		}
		return kv
	}
	if a.Key == "" {
		return kv
	}
	return append(kv, group+a.Key+"="+v.String())
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append([]string(nil), h.attrs...)
	for _, a := range as {
		h2.attrs = appendAttr(h2.attrs, h.group, a)
	}
	return &h2
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}
