package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Runner runs points; the caller's, since it knows the worlds.
type Runner interface {
	// Skip says why pt cannot run here, "" if it can (MPI with an
	// impairment preset, more ranks × threads than the machine's cores,
	// the real backend without root, ...).
	Skip(pt Point) string
	// Run runs pt into dir, atomically: dir exists afterwards only if the
	// run completed (a failed run may leave dir + ".failed" to look at).
	// It returns the run's status (ok, or degraded when the run did not
	// honour its scenario). An interrupted run returns ctx's error.
	Run(ctx context.Context, pt Point, dir string) (status string, err error)
}

// Entry statuses besides a run's own (ok, degraded).
const (
	StatusSkipped = "skipped" // Runner.Skip gave a reason
	StatusFailed  = "failed"  // Runner.Run failed; retried on resume
	StatusPending = "pending" // not run yet (an interrupted sweep)
)

// ErrInterrupted is returned when the context ended the sweep before its
// last point; what finished is kept, and the same call resumes.
var ErrInterrupted = errors.New("sweep interrupted")

// Entry is one point's line in the index.
type Entry struct {
	Point
	Status string
	Reason string
	Dir    string // the run directory, relative to the sweep's output
	// Results is the run's results row, when it finished.
	Results *report.Record
	// Kept: the run had finished before this call (a resumed sweep).
	Kept bool
}

// Outcome is what Run did.
type Outcome struct {
	Entries []Entry
	Ran     int // points run by this call
	Kept    int // points finished before
}

// Run runs every point of m that has not finished yet, writing each run
// directory under out/runs and out/index.csv after every point. progress,
// if not nil, shows a bar; log gets a line per point. The costs file is
// checked first (CheckCosts): a bad one is an error before anything runs
// or out is created.
func Run(ctx context.Context, m *Matrix, out string, r Runner, progress, log io.Writer) (Outcome, error) {
	if err := m.CheckCosts(); err != nil {
		return Outcome{}, err
	}
	plan := m.Plan()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Outcome{}, err
	}
	old, err := readIndex(filepath.Join(out, IndexFile))
	if err != nil {
		return Outcome{}, err
	}
	var o Outcome
	o.Entries = make([]Entry, len(plan))
	for i, pt := range plan {
		o.Entries[i] = Entry{Point: pt, Status: StatusPending, Dir: rel(out, pt.Dir(out))}
	}
	bar := newBar(progress, m.Name, len(plan))
	defer bar.finish()
	if log == nil {
		log = io.Discard
	}
	for i, pt := range plan {
		e := &o.Entries[i]
		if ctx.Err() != nil {
			break
		}
		bar.current(pt)
		dir := pt.Dir(out)
		if results, ok := finished(dir); ok {
			e.Status, e.Kept = "ok", true
			if prev := old.status(key(pt)); prev != "" && prev != StatusPending && prev != StatusFailed {
				e.Status = prev
			}
			if e.Results, err = readRow(results); err != nil {
				return o, err
			}
			o.Kept++
			bar.done()
			continue
		}
		if why := r.Skip(pt); why != "" {
			e.Status, e.Reason = StatusSkipped, why
		} else {
			status, err := r.Run(ctx, pt, dir)
			switch {
			case ctx.Err() != nil:
				e.Status = StatusPending
			case err != nil:
				e.Status, e.Reason = StatusFailed, firstLine(err.Error())
			default:
				e.Status = status
				results, ok := finished(dir)
				if !ok {
					return o, fmt.Errorf("%s %s %s: the run wrote no results.csv in %s", pt.Sweep, pt.Transport, pt.ID(), dir)
				}
				if e.Results, err = readRow(results); err != nil {
					return o, err
				}
				// A run that judged its own machine (an MPI run: load,
				// oversubscription) says why it is degraded.
				if e.Status == "degraded" && e.Reason == "" {
					e.Reason = e.Results.Str("degraded_reason")
				}
			}
			if e.Status != StatusPending {
				o.Ran++
			}
		}
		fmt.Fprintf(log, "[%d/%d] %s %s %s: %s%s\n", i+1, len(plan), pt.Sweep, pt.Transport, pt.ID(), e.Status, e.summary())
		if err := writeIndex(filepath.Join(out, IndexFile), m.Name, o.Entries, old); err != nil {
			return o, err
		}
		if e.Status != StatusPending {
			bar.done()
		}
	}
	if err := writeIndex(filepath.Join(out, IndexFile), m.Name, o.Entries, old); err != nil {
		return o, err
	}
	if ctx.Err() != nil {
		bar.abort()
		return o, fmt.Errorf("%w after %d of %d points: run the same command again to resume (finished runs are kept)", ErrInterrupted, o.Ran+o.Kept+o.skipped(), len(plan))
	}
	return o, nil
}

// skipped counts the skipped entries.
func (o Outcome) skipped() int {
	n := 0
	for _, e := range o.Entries {
		if e.Status == StatusSkipped {
			n++
		}
	}
	return n
}

// summary is a finished entry's main figures, or its reason.
func (e *Entry) summary() string {
	figs := ""
	if e.Results != nil {
		wf, _ := e.Results.Float("wait_frac")
		ov, _ := e.Results.Float("overlap_ratio")
		it, _ := e.Results.Float("t_iter_mean")
		figs = fmt.Sprintf(" (t_iter %.1f µs, wait_frac %.4f, overlap_ratio %.3f", it, wf, ov)
		if hf, err := e.Results.Float("hidden_frac"); err == nil && !math.IsNaN(hf) {
			figs += fmt.Sprintf(", hidden_frac %.3f", hf)
		}
		figs += ")"
	}
	if e.Reason != "" {
		return figs + ": " + e.Reason
	}
	return figs
}

// finished reports whether dir holds a finished run, and its results CSV:
// an MPI run's results.csv, or a harness run's phasegap/results.csv.
func finished(dir string) (string, bool) {
	for _, f := range []string{report.ResultsFile, filepath.Join("phasegap", report.ResultsFile)} {
		p := filepath.Join(dir, f)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// readRow reads the one row of a run's results CSV.
func readRow(path string) (*report.Record, error) {
	recs, err := report.ReadCSVFile(path)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("%s: %d rows; expected one run's", path, len(recs))
	}
	return &recs[0], nil
}

func rel(base, path string) string {
	if r, err := filepath.Rel(base, path); err == nil {
		return r
	}
	return path
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// bar is the sweep's progress bar; a nil writer shows nothing.
type bar struct {
	p  *mpb.Progress
	b  *mpb.Bar
	at atomic.Pointer[string] // the point running, read by the bar's goroutine
}

func newBar(w io.Writer, name string, total int) *bar {
	out := &bar{}
	if w == nil || total == 0 {
		return out
	}
	out.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh())
	out.b = out.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Any(func(decor.Statistics) string {
			if at := out.at.Load(); at != nil {
				return " " + *at
			}
			return ""
		})))
	return out
}

func (b *bar) current(pt Point) {
	at := pt.Sweep + " " + pt.Transport + " " + pt.ID()
	b.at.Store(&at)
}

func (b *bar) done() {
	if b.b != nil {
		b.b.Increment()
	}
}

func (b *bar) abort() {
	if b.b != nil && !b.b.Completed() {
		b.b.Abort(false)
	}
}

func (b *bar) finish() {
	if b.p == nil {
		return
	}
	b.abort()
	b.p.Wait()
}
