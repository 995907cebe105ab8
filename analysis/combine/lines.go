package combine

import (
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
	collectives  bool // the plane's collective kernels carry hlo_op
	pid          int64
	node         int
	json, print  bool
	sortLines    bool       // Options.sortLines
	ns           *nodeState // its alignment setup and time bases only
}

// lineOut is one rewritten line, merged into the node's state in order.
type lineOut struct {
	line, json, print []byte
	lineFrom          int   // the line message is line[lineFrom:] (see finish)
	skew              int64 // the correction at its first timed event, ps
	timed             bool  // it has a timed event

	events, fixes, extrapolated, outside, maxCorr int64
	sigmas                                        []float64
	sigmaMax                                      float64
	ops                                           []validate.Op
	firstRaw, firstCorr                           int64 // ps, as nodeState's
	haveFirst                                     bool
}

func (o *lineOut) reset() {
	*o = lineOut{line: o.line[:0], json: o.json[:0], print: o.print[:0], sigmas: o.sigmas[:0], ops: o.ops[:0]}
}

// mergeInto adds the line's figures to the node's, as rewriting the line
// in the node's own goroutine would have.
func (o *lineOut) mergeInto(ns *nodeState) {
	md := ns.md
	md.Events += o.events
	md.MonotonicityFixes += o.fixes
	md.ExtrapolatedEvents += o.extrapolated
	md.OutsideWindowEvents += o.outside
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
		if t.alNode != ns { // one align.Node per goroutine and node
			t.alFor, t.alNode = align.NewNode(ns.id, ns.snaps, ns.offs), ns
		}
		a.al = t.alFor
	}
	return a
}

// alignSpanPs aligns an event's start and end, ps from the plane's base,
// to ps from the output's, and returns the larger of their uncertainties
// (align.Node.AlignSpan).
func (a *lineAligner) alignSpanPs(ps0, ps1 int64) (start, end int64, sigma float64) {
	if a.al == nil {
		return ps0 + a.shift*1000, ps1 + a.shift*1000, 0
	}
	n0, n1 := floorDiv(ps0, 1000), floorDiv(ps1, 1000)
	t0, t1 := a.al.AlignSpan(n0+a.inBase, n1+a.inBase)
	a.count(t0.Flags)
	a.count(t1.Flags)
	return (t0.Global-a.outBase)*1000 + (ps0 - n0*1000), (t1.Global-a.outBase)*1000 + (ps1 - n1*1000), t0.Sigma
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
// line order; it returns the first error (of a line, or of emit) after
// every line is done.
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
		b   []byte
		out *lineOut
		err chan error
	}
	tasks := make(chan task)
	queue := make(chan task, workers) // in line order; bounds the lines in flight
	go func() {
		for _, b := range lines {
			tk := task{b: b, out: c.lineOut(), err: make(chan error, 1)}
			queue <- tk
			tasks <- tk
		}
		close(queue)
		close(tasks)
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(t *transcoder) {
			defer wg.Done()
			for tk := range tasks {
				tk.out.reset()
				tk.err <- t.rewriteLine(pj, tk.b, tk.out)
			}
		}(c.tcs[w])
	}
	var first error
	for tk := range queue {
		if err := <-tk.err; first == nil {
			first = err
			if first == nil {
				first = emit(tk.out)
			}
		}
		c.putLineOut(tk.out)
	}
	wg.Wait()
	return first
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
