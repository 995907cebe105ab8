package combine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/xspace"
)

// PerfettoSuffix names the native Perfetto output: <base>.perfetto-trace
// beside Options.Output.
const PerfettoSuffix = ".perfetto-trace"

// writePerfetto writes <base>.perfetto-trace, Perfetto's native protobuf
// trace, into the output set: it reads back the combined XSpace just
// written (its staged file, whole by now) one plane at a time, parsed at
// the wire level as the combiner parses its inputs (parsePlane: no Go
// object per event), the next plane read and parsed by a goroutine while
// this one is exported. Each line is encoded as a packet sequence of its
// own (incremental timestamps, names interned, compressed in chunks) by a
// pool of workers (Options.Workers), and the chunks are written in line
// order, so that the file is the same whatever the number of workers; at
// most two chunks per worker are in flight. What it holds is the Chrome
// JSON's picture (perfettoplane.go), in Perfetto's own format: no text to
// parse, typed args, the clock said, and a file smaller than the gzipped
// JSON. With Options.Window workload it spans what the Chrome JSON spans.
func (c *combiner) writePerfetto() error {
	src, ok := c.out.stagedPath(SpacePath(c.o))
	if !ok {
		return fmt.Errorf("combine: the combined XSpace %s is not in the output set", SpacePath(c.o))
	}
	path := OutputBase(c.o.Output) + PerfettoSuffix
	win, err := c.perfettoWindow(src)
	if err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	f, err := c.out.create(path)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("combine: read back %s for %s: %w", SpacePath(c.o), path, err)
	}
	defer in.Close()
	o := perfetto.Options{RealtimeBaseNS: c.timeBase, Deflate: true}
	x := newPerfettoExport(c, perfetto.NewWriter(f, o), o, win)
	err = scanAhead(in, c.checks, x.plane, c.o.hook)
	err = errors.Join(err, x.close())
	if err == nil {
		err = x.counters()
	}
	if err != nil {
		x.w.Abort()
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	if err := x.w.Flush(); err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	return nil
}

// perfettoExport is one Perfetto export's state: the writer, the workers
// and the lines in flight, oldest first.
type perfettoExport struct {
	c       *combiner
	w       *perfetto.Writer
	o       perfetto.Options
	win     *jsonSpan
	next    uint32 // the next sequence id
	jobs    chan *lineJob
	pending []*lineJob
	wg      sync.WaitGroup
	workers int
	closed  bool
}

// lineJob is one line to encode, and then its chunk.
type lineJob struct {
	pp    *perfettoPlane
	seq   uint32
	rank  int32
	b     []byte
	done  chan struct{}
	chunk perfetto.Chunk
	err   error
}

func newPerfettoExport(c *combiner, w *perfetto.Writer, o perfetto.Options, win *jsonSpan) *perfettoExport {
	n := c.o.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	x := &perfettoExport{c: c, w: w, o: o, win: win, next: perfetto.SequenceID + 1, jobs: make(chan *lineJob), workers: n}
	for range n {
		x.wg.Add(1)
		go x.work()
	}
	return x
}

// work encodes lines until the jobs end.
func (x *perfettoExport) work() {
	defer x.wg.Done()
	enc := &lineEncoder{seq: perfetto.NewSeq(x.o, perfetto.SequenceID), win: x.win}
	for j := range x.jobs {
		func() {
			what := func() string {
				return fmt.Sprintf("encoding plane %s line at index %d for the Perfetto trace", j.pp.p.name, j.rank)
			}
			defer recoverPanic(&j.err, what)
			if x.c.o.hook != nil {
				x.c.o.hook(what())
			}
			j.chunk, j.err = enc.line(j.pp, j.seq, j.rank, j.b)
			if j.err != nil {
				j.err = fmt.Errorf("plane %s line at index %d: %w", j.pp.p.name, j.rank, j.err)
			}
		}()
		close(j.done)
	}
}

// plane hands the lines of one plane of the combined XSpace to the
// workers, writing the oldest lines in flight as they are done.
func (x *perfettoExport) plane(p *wirePlane) error {
	pp := x.c.newPerfettoPlane(p)
	if pp == nil {
		return nil
	}
	for li, line := range p.lines {
		for len(x.pending) >= 2*x.workers {
			if err := x.merge(); err != nil {
				return err
			}
		}
		if x.next > perfetto.MaxSequence {
			return fmt.Errorf("more than %d lines", perfetto.MaxSequence-1)
		}
		j := &lineJob{pp: pp, seq: x.next, rank: int32(li), b: line, done: make(chan struct{})}
		x.next++
		x.pending = append(x.pending, j)
		x.jobs <- j
	}
	return nil
}

// merge waits for the oldest line in flight and writes it: its plane's
// process track first, before the plane's first line with slices.
func (x *perfettoExport) merge() error {
	j := x.pending[0]
	x.pending[0] = nil
	x.pending = x.pending[1:]
	<-j.done
	if j.err != nil {
		return j.err
	}
	if len(j.chunk.Data) == 0 {
		return nil
	}
	if pp := j.pp; !pp.declared {
		if _, err := x.w.Process(int32(1+pp.p.id), pp.jp.label, []string{pp.jp.name}, pp.jp.sort); err != nil {
			return err
		}
		pp.declared = true
	}
	return x.w.Append(j.chunk)
}

// close writes the lines still in flight (after an error, only waits for
// them) and ends the workers.
func (x *perfettoExport) close() error {
	if x.closed {
		return nil
	}
	x.closed = true
	var err error
	for len(x.pending) > 0 {
		if err != nil {
			<-x.pending[0].done
			x.pending = x.pending[1:]
			continue
		}
		err = x.merge()
	}
	close(x.jobs)
	x.wg.Wait()
	return err
}

// counters writes each clock node's offsets as counter tracks of a
// process of its own, as the Chrome JSON does (writeCounters), each node
// a sequence, its samples in time order; a sample outside the times the
// trace's clock holds is left out.
func (x *perfettoExport) counters() error {
	c := x.c
	if c.offs == nil {
		return nil
	}
	for i, k := range c.clocks {
		samples := counterSamples(c.offs.Records(k.node), c.timeBase, x.win)
		if len(samples) == 0 {
			continue
		}
		slices.SortStableFunc(samples, func(a, b counterSample) int { return cmp.Compare(a.ps, b.ps) })
		pid := 1 + c.nextID + int64(i)
		if _, err := x.w.Process(int32(pid), processLabel(k.node, k.host, "clock"), []string{k.plane}, sortIndex(c.clockPos[k.node], rankCounters)); err != nil {
			return err
		}
		seq := perfetto.NewSeq(x.o, x.next)
		x.next++
		var tracks [3]perfetto.Track
		for j, d := range []struct {
			name   string
			timeNS bool
			unit   string
		}{{counterOffset, true, ""}, {counterDrift, false, "ppm"}, {counterSigma, true, ""}} {
			var err error
			if tracks[j], err = seq.Counter(perfetto.ProcessTrack(int32(pid)), d.name, int32(j), d.timeNS, d.unit); err != nil {
				return err
			}
		}
		for _, s := range samples {
			t := floorDiv(s.ps, 1000)
			if !seq.Holds(t) {
				continue
			}
			for j, v := range []float64{s.o.OffsetNS, s.o.DriftPPM, s.o.UncertaintyNS} {
				if err := seq.Value(tracks[j], t, v); err != nil {
					return fmt.Errorf("clock counters of node %d: %w", k.node, err)
				}
			}
		}
		chunk, err := seq.Take()
		if err != nil {
			return fmt.Errorf("clock counters of node %d: %w", k.node, err)
		}
		if err := x.w.Append(chunk); err != nil {
			return err
		}
	}
	return nil
}

// perfettoWindow is the span the Perfetto trace exports (nil: all): with
// Options.Window workload, the Chrome JSON's (exportWindowed, which ran
// before), or without the JSON the same span found the same way.
func (c *combiner) perfettoWindow(src string) (*jsonSpan, error) {
	if c.o.Window != WindowWorkload {
		return nil, nil
	}
	if w := c.md.TraceJSONWindow; w != nil {
		if !w.Workload {
			return nil, nil
		}
		return &jsonSpan{from: w.FromPS, to: w.ToPS}, nil
	}
	return c.workloadSpan(src)
}

// workloadSpan is the span of the staged combined XSpace src's workload
// events (every timed event outside the snapshot planes and the planes
// not exported) with a margin of windowMargin of it, at least
// windowMarginMinPs; nil when there is none. It reads src one plane at a
// time, at the wire level.
func (c *combiner) workloadSpan(src string) (*jsonSpan, error) {
	in, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("read back the combined XSpace: %w", err)
	}
	defer in.Close()
	from, to, found := int64(math.MaxInt64), int64(math.MinInt64), false
	var e wireEvent
	err = scanAhead(in, c.checks, func(p *wirePlane) error {
		if jp := c.process(p.id); jp.label == "" || jp.snapshot {
			return nil
		}
		for _, b := range p.lines {
			var ts int64
			for len(b) > 0 {
				f, rest, err := xspace.Next(b, xspace.LineSpec)
				if err != nil {
					return err
				}
				b = rest
				switch f.Num {
				case xspace.FieldLineTimestamp:
					ts = int64(f.Value)
				case xspace.FieldLineEvents:
					e = wireEvent{}
					if err := parseEvent(&e, f.Data); err != nil {
						return err
					}
					if e.timed {
						s := ts*1000 + e.offset
						from, to, found = min(from, s), max(to, s+e.dur), true
					}
				}
			}
		}
		return nil
	}, nil)
	if err != nil || !found {
		return nil, err
	}
	m := max(int64(float64(to-from)*windowMargin), windowMarginMinPs)
	return &jsonSpan{from: addSat(from, -m), to: addSat(to, m)}, nil
}
