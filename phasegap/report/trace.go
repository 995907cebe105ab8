package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/chronosync/chronosync/trace/chromejson"
)

// event is one Chrome trace event, its times in ns (written as exact µs
// by chromejson.AppendEvent), its args written sorted by key.
type event struct {
	chromejson.Event
	Args map[string]any
}

// us converts ns to µs, for the counters whose value is a time.
func us(ns int64) float64 { return float64(ns) / 1e3 }

func span(name, cat string, pid, tid int, start, dur int64, iter int) event {
	return event{chromejson.Event{Name: name, Cat: cat, Ph: "X", Ts: start, Dur: dur, HasDur: true, Pid: int64(pid), Tid: int64(tid)},
		map[string]any{"iter": iter}}
}

func counter(name string, pid int, ts int64, key string, v any) event {
	return event{chromejson.Event{Name: name, Ph: "C", Ts: ts, Pid: int64(pid)}, map[string]any{key: v}}
}

// WriteTrace writes the Chrome/Perfetto trace of the last lastIters measured
// iterations of each rank (all of them when lastIters <= 0). pid is the
// rank; tid 0 is the rank's iteration lane, holding an "iteration" span and
// within it comm_post, interior_compute, waitall and boundary_compute;
// detail "thread" adds each OpenMP thread's interior span on tid thread+1
// (detail "" means "rank"). The comm window is an async span, counters
// bytes_total, mpi_test_calls, t_wait (µs) and wait_frac mark each
// iteration, metadata names processes and threads, a global instant event
// "run_config" carries the configuration and the MPI/OpenMP environment,
// and otherData repeats them with trace_schema_version. ts and dur are in
// microseconds. The output does not depend on the order of ranks.
func WriteTrace(w io.Writer, cfg Config, ranks []Rank, lastIters int, detail string) error {
	switch detail {
	case "", "rank", "thread":
	default:
		return fmt.Errorf("report: trace detail %q: want rank or thread", detail)
	}
	rs := slices.Clone(ranks)
	slices.SortStableFunc(rs, func(a, b Rank) int { return cmp.Compare(a.Rank, b.Rank) })
	traced := make([][]Sample, len(rs))
	first, found := int64(0), false
	for i, r := range rs {
		s := slices.Clone(r.Samples)
		slices.SortStableFunc(s, func(a, b Sample) int { return cmp.Compare(a.Iter, b.Iter) })
		if lastIters > 0 && len(s) > lastIters {
			s = s[len(s)-lastIters:]
		}
		traced[i] = s
		if len(s) > 0 && (!found || s[0].Start < first) {
			first, found = s[0].Start, true
		}
	}
	d := Derive(cfg)
	conf, env := runConfig(cfg, d), envSummary(cfg)

	ew := &eventWriter{w: bufio.NewWriter(w)}
	ew.raw(`{"traceEvents":[` + "\n")
	pid0 := 0
	if len(rs) > 0 {
		pid0 = rs[0].Rank
	}
	ew.event(event{chromejson.Event{Name: "run_config", Cat: "metadata", Ph: "i", S: "g", Ts: first, Pid: int64(pid0)},
		map[string]any{"config": conf, "env": env, "trace_schema_version": TraceSchemaVersion}})
	for i, r := range rs {
		pid := r.Rank
		meta := func(name string, tid int, args map[string]any) {
			ew.event(event{chromejson.Event{Name: name, Ph: "M", Pid: int64(pid), Tid: int64(tid)}, args})
		}
		meta("process_name", 0, map[string]any{"name": fmt.Sprintf("rank %d", pid)})
		meta("process_sort_index", 0, map[string]any{"sort_index": pid})
		meta("thread_name", 0, map[string]any{"name": "iterations"})
		threads := 0
		if detail == "thread" {
			for _, s := range traced[i] {
				threads = max(threads, len(s.Threads))
			}
		}
		for t := range threads {
			meta("thread_name", t+1, map[string]any{"name": fmt.Sprintf("omp thread %d", t)})
		}
		for _, s := range traced[i] {
			ew.iteration(pid, s, d.BytesTotal, threads > 0)
		}
	}
	ew.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":")
	other, err := json.Marshal(map[string]any{"trace_schema_version": TraceSchemaVersion,
		"run_id": cfg.RunID, "config": conf, "env": env, "trace_iters": lastIters,
		"trace_detail": cmp.Or(detail, "rank"), "time_unit": "us"})
	if err != nil {
		return err
	}
	ew.raw(string(other) + "}\n")
	if ew.err != nil {
		return ew.err
	}
	return ew.w.Flush()
}

// iteration writes one iteration's events.
func (ew *eventWriter) iteration(pid int, s Sample, bytesTotal int64, threads bool) {
	ew.event(span("iteration", "iteration", pid, 0, s.Start, s.Total, s.Iter))
	phases := []event{
		span("comm_post", "phase", pid, 0, s.InteriorStart-s.Post, s.Post, s.Iter),
		span("interior_compute", "phase", pid, 0, s.InteriorStart, s.Interior, s.Iter),
		span("waitall", "phase", pid, 0, s.WaitStart, s.Wait, s.Iter),
		span("boundary_compute", "phase", pid, 0, s.BoundaryStart, s.Boundary, s.Iter),
	}
	slices.SortStableFunc(phases, func(a, b event) int { return cmp.Compare(a.Ts, b.Ts) })
	for _, e := range phases {
		ew.event(e)
	}
	if threads {
		for t, sp := range s.Threads {
			ew.event(span("interior_compute", "thread", pid, t+1, sp.Start, sp.End-sp.Start, s.Iter))
		}
	}
	id := fmt.Sprintf("%d.%d", pid, s.Iter)
	args := map[string]any{"iter": s.Iter}
	ew.event(event{chromejson.Event{Name: "comm_window", Cat: "comm", Ph: "b", Ts: s.CommStart, Pid: int64(pid), ID: id}, args})
	ew.event(event{chromejson.Event{Name: "comm_window", Cat: "comm", Ph: "e", Ts: s.CommEnd, Pid: int64(pid), ID: id}, nil})
	ew.event(counter("bytes_total", pid, s.Start, "bytes", bytesTotal))
	ew.event(counter("mpi_test_calls", pid, s.Start, "calls", s.TestCalls))
	ew.event(counter("t_wait", pid, s.Start, "us", us(s.Wait)))
	ew.event(counter("wait_frac", pid, s.Start, "frac", ratio(float64(s.Wait), float64(s.Total))))
}

// eventWriter streams events separated by ",\n", keeping the first error.
type eventWriter struct {
	w   *bufio.Writer
	n   int
	buf []byte // the event being formatted
	err error
}

func (ew *eventWriter) raw(s string) {
	if ew.err == nil {
		_, ew.err = ew.w.WriteString(s)
	}
}

func (ew *eventWriter) event(e event) {
	if len(e.Args) > 0 {
		var err error
		if e.Event.Args, err = json.Marshal(e.Args); err != nil && ew.err == nil {
			ew.err = fmt.Errorf("report: trace event %s: %w", e.Name, err)
		}
	}
	if ew.n > 0 {
		ew.raw(",\n")
	}
	ew.n++
	ew.buf = chromejson.AppendEvent(ew.buf[:0], &e.Event, chromejson.Nanoseconds)
	if ew.err == nil {
		_, ew.err = ew.w.Write(ew.buf)
	}
}

// traceEnv names the parameters the trace files with the environment
// summary, not the run configuration.
func traceEnv() []string { return []string{"progress", "omp_schedule", "omp_chunk"} }

// runConfig is the run configuration the trace carries: B and the
// parameters of the run's results (params.Fields) but traceEnv's.
func runConfig(c Config, d Derived) map[string]any {
	p := &c.Params
	_, fs := resultFields(traceEnv()...)
	m := map[string]any{"B": d.B}
	for _, f := range fs {
		m[f.Col()] = f.Value(p)
	}
	return m
}

// envSummary is the MPI/OpenMP environment summary the trace carries,
// with traceEnv's parameters.
func envSummary(c Config) map[string]any {
	p := &c.Params
	m := map[string]any{"mpi_impl": c.MPIImpl, "mpi_version": c.MPIVersion,
		"mpi_thread_requested": c.MPIThreadRequested, "mpi_thread_provided": c.MPIThreadProvided,
		"transport": c.Transport, "impairment": c.Impairment,
		"omp_num_threads": ompNumThreads(c), "omp_proc_bind": c.OMPBind,
		"omp_places": c.OMPPlaces, "platform": c.Platform, "hostname": c.Hostname}
	fs, _ := resultFields(traceEnv()...)
	for _, f := range fs {
		m[f.Col()] = f.Value(p)
	}
	return m
}
