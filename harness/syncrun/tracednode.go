package syncrun

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
	"github.com/chronosync/chronosync/workload/snapshots"
	"github.com/chronosync/chronosync/workload/training"
	"github.com/chronosync/chronosync/world"
)

// statEventID tags every simulated event with its id, so that the combined
// trace can be compared with the ground truth.
const statEventID = "chronosync_event_id"

// tracedNode records one node's workload events with their true times.
type tracedNode struct {
	p       *tracedProtocol
	id      world.NodeID
	wl      *training.Node
	sampler *snapshots.Sampler
	starts  map[uint64]startReading // by event id, while the event runs
	events  []tracedEvent
}

// startReading is what Started saw: true global time and, for the Kineto
// trace only, the node's host clock.
type startReading struct {
	global, host int64
}

// tracedEvent is a finished event and its true start in global time (the
// reference node's ideal host clock). With the Kineto trace, hostStart
// and hostEnd are the node's host clock S when the event started and
// ended, where the profiler reads them (see tracedkineto.go).
type tracedEvent struct {
	ev                 training.Event
	trueStart          int64
	hostStart, hostEnd int64
}

func newTracedNode(p *tracedProtocol, id world.NodeID) *tracedNode {
	return &tracedNode{p: p, id: id, starts: map[uint64]startReading{}}
}

// global is true global time now: the reference node's ideal host clock
// without its steps (global time runs on through them; see
// rounds.Solver).
func (n *tracedNode) global() int64 {
	ref := n.p.cfg.Reference
	_, steps := n.p.w.HostSteps(ref, int64(n.p.w.Now()))
	return n.p.w.HostIdeal(ref) - steps
}

// globalAt is true global time at true time t.
func (n *tracedNode) globalAt(t int64) int64 {
	ref := n.p.cfg.Reference
	_, steps := n.p.w.HostSteps(ref, t)
	return n.p.w.HostIdealAt(ref, t) - steps
}

// Started implements training.Observer. In the simulator it runs at the
// very instant of the event's tracer reading, so that the host clock read
// here (for the Kineto trace) is the host's reading of that instant.
func (n *tracedNode) Started(_ world.NodeID, id uint64) {
	r := startReading{global: n.global()}
	if n.p.kineto {
		r.host = n.p.w.HostIdeal(n.id)
	}
	n.starts[id] = r
}

// tracerTruth is a world that knows when a tracer clock read a value (the
// real backend's injected tracer: real.World.TracerTrueTime).
type tracerTruth interface {
	TracerTrueTime(i world.NodeID, r int64) (int64, bool)
}

// Finished implements training.Observer. Where the world can say when the
// event's tracer reading was taken, that instant is its true start; else
// (the simulator, where Started runs at the reading's very instant) the
// global time Started saw.
//
// With the Kineto trace it also keeps the host clock at the event's start
// and end: where the world can say when the tracer readings were taken,
// the host clock at those instants; else the readings of Started and of
// now.
func (n *tracedNode) Finished(_ world.NodeID, ev training.Event) {
	r := n.starts[ev.ID]
	delete(n.starts, ev.ID)
	te := tracedEvent{ev: ev, trueStart: r.global}
	if n.p.kineto {
		te.hostStart, te.hostEnd = r.host, n.p.w.HostIdeal(n.id)
	}
	if tt, ok := n.p.w.(tracerTruth); ok {
		if t, ok := tt.TracerTrueTime(n.id, int64(ev.StartR)); ok {
			te.trueStart = n.globalAt(t)
			if n.p.kineto {
				te.hostStart = n.p.w.HostIdealAt(n.id, t)
			}
		}
		if t, ok := tt.TracerTrueTime(n.id, int64(ev.EndR)); ok && n.p.kineto {
			te.hostEnd = n.p.w.HostIdealAt(n.id, t)
		}
	}
	n.events = append(n.events, te)
}

// space builds the node's XSpace: /host:CPU (the launching thread, with
// the node_id, run_id and world_size stats),
// /device:GPU:0 (a line per stream) and /host:snapshots (one instant
// event per snapshot pair), every event on the tracer clock. It also
// returns how many events ended before they started on the tracer clock
// (one that stepped back while they ran): they are written with duration
// 0 (see tracerSpan).
func (n *tracedNode) space(runID string, pairs []snapshots.Pair) (*xplanepb.XSpace, int) {
	host := xspace.NewPlaneBuilder(0, "/host:CPU")
	host.AddStat(xspace.Int("node_id", int64(n.id)))
	host.AddStat(xspace.Str("run_id", runID))
	host.AddStat(xspace.Int(combine.StatWorldSize, int64(len(n.p.nodes))))
	gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
	evs := slices.Clone(n.events)
	slices.SortStableFunc(evs, func(a, b tracedEvent) int {
		return cmp.Or(cmp.Compare(a.ev.Plane, b.ev.Plane), cmp.Compare(a.ev.Line, b.ev.Line), cmp.Compare(a.ev.StartR, b.ev.StartR))
	})
	lines := map[[2]int]*xspace.LineBuilder{}
	negative := 0
	for _, e := range evs {
		ev := e.ev
		b, name := host, "host thread"
		if ev.Plane == training.GPUPlane {
			b, name = gpu, fmt.Sprintf("stream %d", ev.Line)
		}
		key := [2]int{int(ev.Plane), ev.Line}
		lb := lines[key]
		if lb == nil {
			lb = b.Line(int64(ev.Line), name, int64(ev.StartR))
			lines[key] = lb
		}
		st := []xspace.Stat{xspace.Uint(statEventID, ev.ID), xspace.Uint("correlation_id", ev.Correlation), xspace.Int("step", int64(ev.Step))}
		if ev.HloOp != "" {
			st = append(st, xspace.Str("hlo_op", ev.HloOp))
		}
		start, dur, neg := tracerSpan(ev)
		if neg {
			negative++
		}
		lb.Add(ev.Name, start, dur, st...)
	}
	planes := []*xplanepb.XPlane{host.Plane(), gpu.Plane()}
	if len(pairs) > 0 {
		sp := xspace.NewPlaneBuilder(2, "/host:snapshots")
		lb := sp.Line(0, "snapshot pairs", int64(pairs[0].Tracer))
		for _, q := range pairs {
			lb.Add("snapshot", int64(q.Tracer), 0, xspace.Int("sys_clock_ns", int64(q.Sys)))
		}
		planes = append(planes, sp.Plane())
	}
	return &xplanepb.XSpace{Planes: planes, Hostnames: []string{fmt.Sprintf("node%d", n.id)}}, negative
}

// tracerSpan is an event's start and duration on the tracer clock. A
// tracer clock that stepped back while the event ran gives a negative
// duration, which no XSpace event can have: it becomes 0, and neg says so.
func tracerSpan(ev training.Event) (start, dur int64, neg bool) {
	start, dur = int64(ev.StartR), int64(ev.EndR-ev.StartR)
	if dur < 0 {
		return start, 0, true
	}
	return start, dur, false
}

// record writes every node's trace and snapshots, checks the raw traces,
// combines them and measures the combined trace against the truth; with
// kineto, it does the same on the Kineto path (recordKineto).
func (p *tracedProtocol) record(dir string) (*TraceSummary, error) {
	sum := &TraceSummary{Nodes: len(p.nodes)}
	var inputs []combine.Input
	var raw []validate.Node
	var ksum *KinetoTraceSummary
	if p.kineto {
		ksum = &KinetoTraceSummary{}
	}
	truth := map[[2]int64]tracedEvent{} // (node, event id) → event
	record := &xspace.TraceRecord{RunID: p.runID}
	for i, n := range p.nodes {
		if n == nil {
			continue
		}
		n.sampler.Stop()
		pairs := n.sampler.Pairs()
		st := n.sampler.Stats()
		space, negative := n.space(p.runID, pairs)
		sum.NegativeDurations += negative
		trace, snap := nodeFile(dir, fileNodeTrace, i), nodeFile(dir, fileNodeSnapshot, i)
		if err := xspace.Write(trace, space); err != nil {
			return nil, err
		}
		counts := xspace.CountOf(space)
		counts.Bytes = int64(proto.MarshalOptions{Deterministic: true}.Size(space)) // as Write wrote it
		record.Traces = append(record.Traces, xspace.TraceEntry{Node: i, File: filepath.Base(trace), Counts: counts})
		sp := &snapshotpb.SnapshotPairs{RunId: p.runID, NodeId: int64(i), Hostname: fmt.Sprintf("node%d", i),
			SamplingPeriodNs: uint64(p.snap.Period), SnapshotsTaken: uint64(st.SnapshotsTaken), MissedDeadline: uint64(st.MissedDeadline)}
		for _, q := range pairs {
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: int64(q.Sys), TracerClockNs: int64(q.Tracer)})
		}
		if err := xspace.Write(snap, sp); err != nil {
			return nil, err
		}
		inputs = append(inputs, combine.Input{Node: i, Trace: trace, Snapshots: snap})
		if ksum != nil {
			if err := n.writeKineto(nodeFile(dir, fileNodeKineto, i), ksum); err != nil {
				return nil, err
			}
		}
		// The report names the trace by its place in the run directory,
		// which outlives the staging directory dir may be.
		raw = append(raw, combine.Collectives(space, i, filepath.Base(trace))...)
		for _, e := range n.events {
			truth[[2]int64{int64(i), int64(e.ev.ID)}] = e
		}
		sum.Events += len(n.events)
		sum.Snapshots += len(pairs)
		if !n.wl.Done() {
			sum.Unfinished = append(sum.Unfinished, i)
		}
	}
	// Beside the traces, what they hold: a trace cut at a message boundary
	// still parses, and only these counts tell it from the whole one.
	if err := xspace.WriteTraceRecord(dir, record); err != nil {
		return nil, err
	}
	rawRep := validate.Check(raw)
	if err := xspace.WriteFile(filepath.Join(dir, FileRawValidate), rawRep.WriteJSON); err != nil {
		return nil, err
	}
	sum.Raw = brief(rawRep)
	// The Chrome JSON spans the training only (the XSpace keeps the whole
	// run): what a user opening it in Perfetto looks for.
	res, err := combine.Combine(inputs, combine.Options{Offsets: filepath.Join(dir, FileOffsets), Output: filepath.Join(dir, FileCombined), Validate: true, Window: combine.WindowWorkload})
	if err != nil {
		return nil, err
	}
	sum.Combined = brief(res.Report)
	if err := linkTensorBoard(dir, FileCombined); err != nil {
		return nil, err
	}
	al, err := measureTrace(filepath.Join(dir, FileCombined), truth)
	if err != nil {
		return nil, err
	}
	sum.AlignedEvents, sum.ErrorNS, sum.ErrorSigmas, sum.Within3Sigma = al.aligned, al.errNS, al.sigmas, al.within
	if ksum != nil {
		if err := p.recordKineto(dir, inputs, truth, ksum); err != nil {
			return nil, err
		}
		sum.Kineto = ksum
	}
	return sum, nil
}

func brief(r *validate.Report) ValidateCounts {
	return ValidateCounts{Violations: r.Violations, Overlaps: r.Overlaps, Warnings: r.Warnings}
}

// alignment is how far the events of a combined trace lie from their true
// starts: the error |aligned − true start| in ns, over all events and by
// the plane they ran on, and over the event's reported uncertainty.
type alignment struct {
	aligned       int // events compared
	errNS, sigmas stats.Summary
	hostNS, gpuNS stats.Summary
	within        int // events within 3 reported σ
}

// measureTrace compares every event of the combined trace at path with its
// true start: the error and the error in units of the event's reported
// uncertainty. An event is compared when it carries the chronosync_event_id
// stat (uint64 as the harness writes XSpace; int64 as a Kineto arg becomes)
// and clock_uncertainty_ns, on a plane with a node_id; its time counts
// from its plane's time base (time_base_ns, 0 without one).
func measureTrace(path string, truth map[[2]int64]tracedEvent) (alignment, error) {
	var a alignment
	space, err := xspace.Read(path)
	if err != nil {
		return a, err
	}
	var errs, ratios, host, gpu []float64
	for _, pl := range space.Planes {
		ns, ok := xspace.StatByName(pl, pl.Stats, "node_id")
		if !ok {
			continue
		}
		node := ns.GetInt64Value()
		base, _ := xspace.TimeBase(pl)
		for _, line := range pl.Lines {
			for _, ev := range line.Events {
				ids, ok1 := xspace.StatByName(pl, ev.Stats, statEventID)
				uncs, ok2 := xspace.StatByName(pl, ev.Stats, "clock_uncertainty_ns")
				if !ok1 || !ok2 {
					continue
				}
				id, ok1 := statInt(ids)
				unc, ok2 := statInt(uncs)
				if !ok1 || !ok2 {
					return a, fmt.Errorf("%s: node %d: an event's %s or clock_uncertainty_ns is not an integer", path, node, statEventID)
				}
				te, ok := truth[[2]int64{node, id}]
				if !ok {
					return a, fmt.Errorf("%s: node %d event %d is not one the workload reported", path, node, id)
				}
				e := math.Abs(float64(base-te.trueStart) + float64(xspace.StartPs(line, ev))/1000)
				errs = append(errs, e)
				if te.ev.Plane == training.GPUPlane {
					gpu = append(gpu, e)
				} else {
					host = append(host, e)
				}
				r := e / float64(max(1, unc))
				ratios = append(ratios, r)
				if r <= 3 {
					a.within++
				}
			}
		}
	}
	a.aligned = len(errs)
	a.errNS, a.sigmas = stats.Summarize(errs), stats.Summarize(ratios)
	a.hostNS, a.gpuNS = stats.Summarize(host), stats.Summarize(gpu)
	return a, nil
}

// statInt is an integer stat's value, whether int64 or uint64 (within
// int64's range), and false for any other stat.
func statInt(st *xplanepb.XStat) (int64, bool) {
	switch v := st.GetValue().(type) {
	case *xplanepb.XStat_Int64Value:
		return v.Int64Value, true
	case *xplanepb.XStat_Uint64Value:
		if v.Uint64Value <= math.MaxInt64 {
			return int64(v.Uint64Value), true
		}
	}
	return 0, false
}
