package combine

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/analysis/validate"
)

// A plane's lines are rewritten in parallel: up to Options.Workers
// goroutines each take the next line, rewrite it into buffers of its own
// (the line message, its JSON text, its printed events, its figures), and
// the main goroutine merges the results in line order. Each line's work
// depends only on the line and on read-only plane and node state (the
// alignment is per goroutine: align.Node remembers its last window), and
// the merge is in order, so the output is byte-identical whatever the
// number of goroutines and their scheduling.

// planeJob is what every line of a plane shares, read-only while its lines
// are rewritten.
type planeJob struct {
	p            *wirePlane
	path, name   string // the trace's path, the plane's new name
	uncID, hloID int64
	// The ids of a converted Kineto collective's group, sequence number
	// and message size stats (kineto.StatCollective*); -1: none.
	groupID, seqID, sizeID int64
	stepID                 int64 // statStepInside's id; 0 when the node has no host step
	collectives            bool  // the plane's collective kernels carry hlo_op
	pid                    int64
	node                   int
	json, print            bool
	sortLines              bool        // Options.sortLines
	ns                     *nodeState  // its alignment setup and time bases only
	checks                 *wireChecks // for the line and event fields copied unparsed

	// The ids of the flow stat (kineto.StatFlow) and of a converted
	// Kineto event's phase (kineto.StatPhase); -1: none.
	flowID, phID int64
}

// lineOut is one rewritten line, merged into the node's state in order.
type lineOut struct {
	line, json, print []byte
	lineFrom          int   // the line message is line[lineFrom:] (see finish)
	skew              int64 // the correction at its first timed event, ps
	timed             bool  // it has a timed event
	untimed           int64 // its events without offset_ps, copied as they were

	events, fixes, extrapolated, outside, acrossStep, maxCorr int64
	sigmas                                                    []float64
	sigmaMax                                                  float64
	ops                                                       []validate.Op
	firstRaw, firstCorr                                       int64 // ps, as nodeState's
	haveFirst                                                 bool
}

func (o *lineOut) reset() {
	*o = lineOut{line: o.line[:0], json: o.json[:0], print: o.print[:0], sigmas: o.sigmas[:0], ops: o.ops[:0]}
}

// mergeInto adds the line's figures to the node's, as rewriting the line
// in the node's own goroutine would have.
func (o *lineOut) mergeInto(ns *nodeState) {
	md := ns.md
	md.Events += o.events
	md.UntimedEvents += o.untimed
	md.MonotonicityFixes += o.fixes
	md.ExtrapolatedEvents += o.extrapolated
	md.OutsideWindowEvents += o.outside
	md.AcrossStepEvents += o.acrossStep
	md.MaxCorrectionNS = max(md.MaxCorrectionNS, o.maxCorr)
	ns.sigmas = append(ns.sigmas, o.sigmas...)
	ns.sigmaMax = max(ns.sigmaMax, o.sigmaMax)
	ns.ops = append(ns.ops, o.ops...)
	if o.haveFirst && (!ns.haveFirst || o.firstRaw < ns.firstRaw) {
		ns.firstRaw, ns.firstCorr, ns.haveFirst = o.firstRaw, o.firstCorr, true
	}
}

// lineAligner is one goroutine's alignment of one line, counting its flags
// into the line's figures.
type lineAligner struct {
	al                     *align.Node // nil: no correction
	inBase, outBase, shift int64
	out                    *lineOut
	prev                   int64 // the last aligned start, ps
}

// aligner sets up t's alignment for a line of the node ns, into out.
func (t *transcoder) aligner(ns *nodeState, out *lineOut) *lineAligner {
	a := &t.al
	a.out, a.inBase, a.outBase, a.shift = out, ns.inBase, ns.outBase, ns.shift
	a.prev = math.MinInt64
	a.al = nil
	if ns.al != nil {
		if t.alNode != ns || t.alSnaps != ns.snaps { // one align.Node per goroutine, node and mapping
			t.alFor, t.alNode, t.alSnaps = align.NewNode(ns.id, ns.snaps, ns.offs), ns, ns.snaps
		}
		a.al = t.alFor
	}
	return a
}

// alignSpanPs aligns an event's start and end, ps from the plane's base,
// to ps from the output's, and returns the larger of their uncertainties
// (align.Node.AlignSpan) and whether the event spans a step of the node's
// host clock (align.AcrossStep); an error where a time does not fit an
// int64 of ps or of ns (see ps.go).
func (a *lineAligner) alignSpanPs(ps0, ps1 int64) (start, end int64, sigma float64, across bool, err error) {
	shift := a.shift * 1000 // fits: setBase bounds shift by maxLineNs
	if a.al == nil {
		start, ok0 := addPs(ps0, shift)
		end, ok1 := addPs(ps1, shift)
		if !ok0 || !ok1 {
			return 0, 0, 0, false, fmt.Errorf("its times moved to the combined trace's time base (by %d ns) lie beyond the reach of int64 picoseconds", a.shift)
		}
		return start, end, 0, false, nil
	}
	n0, n1 := floorDiv(ps0, 1000), floorDiv(ps1, 1000)
	r0, ok0 := addPs(n0, a.inBase)
	r1, ok1 := addPs(n1, a.inBase)
	if !ok0 || !ok1 {
		return 0, 0, 0, false, fmt.Errorf("its time from the plane's time base %d ns lies beyond the int64 range of ns", a.inBase)
	}
	t0, t1 := a.al.AlignSpan(r0, r1)
	a.count(t0.Flags)
	a.count(t1.Flags)
	across = t0.Flags&align.AcrossStep != 0
	if across {
		a.out.acrossStep++
	}
	if (t0.Flags|t1.Flags)&align.Overflow != 0 {
		return 0, 0, 0, false, fmt.Errorf("its tracer time %d ns maps beyond the int64 range of ns (is the node's clock model, or are its snapshot pairs, out of range?)", r0)
	}
	start, ok0 = psFrom(t0.Global, a.outBase, ps0-n0*1000)
	end, ok1 = psFrom(t1.Global, a.outBase, ps1-n1*1000)
	switch {
	case !ok0:
		return 0, 0, 0, false, psFromError("start", t0.Global, a.outBase)
	case !ok1:
		return 0, 0, 0, false, psFromError("end", t1.Global, a.outBase)
	}
	return start, end, t0.Sigma, across, nil
}

// count counts what an aligned reading assumed into the line's figures.
func (a *lineAligner) count(f align.Flags) {
	if f&align.Extrapolated != 0 {
		a.out.extrapolated++
	}
	if f&align.OutsideWindows != 0 {
		a.out.outside++
	}
}

// rewriteLines rewrites lines in parallel and hands each result to emit in
// line order; it returns the first error (of a line, or of emit). After an
// error no further line is started: the lines in flight are waited for
// and dropped, and every goroutine has ended when it returns. A line
// goroutine's panic is that line's error (a *PanicError); with one worker
// the lines are rewritten on the caller's goroutine, and a panic is the
// caller's.
func (c *combiner) rewriteLines(pj *planeJob, lines [][]byte, emit func(*lineOut) error) error {
	workers := min(c.workers, len(lines))
	if workers <= 1 {
		out := c.lineOut()
		defer c.putLineOut(out)
		for _, b := range lines {
			out.reset()
			if err := c.tcs[0].rewriteLine(pj, b, out); err != nil {
				return err
			}
			if err := emit(out); err != nil {
				return err
			}
		}
		return nil
	}
	type task struct {
		i   int // the line's index in lines
		out *lineOut
		err chan error // buffered: the worker never waits
	}
	tasks := make(chan task)
	queue := make(chan task, workers) // in line order; bounds the lines in flight
	stop := make(chan struct{})       // closed on the first error
	// Every task put in queue gets its error: from the worker it was handed
	// to, or errStopped from the feeder if stop came first. The feeder
	// closes queue when it returns, which ends the merge loop below.
	go func() {
		defer close(tasks)
		defer close(queue)
		for i := range lines {
			tk := task{i: i, out: c.lineOut(), err: make(chan error, 1)}
			select {
			case queue <- tk:
			case <-stop:
				return
			}
			select {
			case tasks <- tk:
			case <-stop:
				tk.err <- errStopped
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(t *transcoder) {
			defer wg.Done()
			for tk := range tasks {
				select {
				case <-stop:
					tk.err <- errStopped
					continue
				default:
				}
				tk.out.reset()
				tk.err <- c.rewriteLineGo(t, pj, lines, tk.i, tk.out)
			}
		}(c.tcs[w])
	}
	var first error
	for tk := range queue {
		err := <-tk.err
		if first == nil {
			if err == nil {
				err = emit(tk.out)
			}
			if err != nil {
				first = err
				close(stop)
			}
		}
		c.putLineOut(tk.out)
	}
	wg.Wait()
	return first
}

// errStopped is the error of a line not rewritten because an earlier one
// failed; rewriteLines returns that earlier error instead.
var errStopped = errors.New("combine: stopped after an error")

// rewriteLineGo is rewriteLine of lines[i] in a line goroutine: a panic
// becomes the line's error, a *PanicError naming the node, plane and line.
func (c *combiner) rewriteLineGo(t *transcoder, pj *planeJob, lines [][]byte, i int, out *lineOut) (err error) {
	what := func() string {
		return fmt.Sprintf("rewriting %s (node %d): plane %s (renamed %s): the line at index %d of %d", pj.path, pj.node, pj.p.name, pj.name, i, len(lines))
	}
	defer recoverPanic(&err, what)
	if c.o.hook != nil {
		c.o.hook(what())
	}
	return t.rewriteLine(pj, lines[i], out)
}

// lineOut takes a result buffer from the free list, or makes one.
func (c *combiner) lineOut() *lineOut {
	select {
	case o := <-c.outs:
		return o
	default:
		return &lineOut{}
	}
}

// putLineOut returns a result buffer to the free list (when it has room).
func (c *combiner) putLineOut(o *lineOut) {
	select {
	case c.outs <- o:
	default:
	}
}
