package combine

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/perfetto"
)

// The Perfetto trace shows what the Chrome JSON shows (see
// docs/trace-pipeline.md), as Perfetto's own tracks and events:
//
//   - a process per plane the JSON shows (c.process: pid = 1 + plane id,
//     named "node 1 (host-b) /device:GPU:0", the combined plane name as its
//     process_labels), ordered by the JSON's process_sort_index, as the
//     process track's sibling_order_rank under PROCESS_ORDERING_EXPLICIT;
//   - a track per line (display name) in line order; a line whose slices
//     overlap (async lines, XLA's overlapping ops) is laid out on several
//     tracks with one sibling_merge_key, which Perfetto shows as one track
//     (perfetto.Writer.Slices), so that every slice imports nested;
//   - each timed event a slice (TYPE_SLICE_BEGIN/END), one of zero length
//     an instant, its metadata's and its own stats as typed debug
//     annotations (int, uint, double, string; a ref_value the name it
//     refers to, bytes hex); a converted Kineto trace's flow events (a
//     "ph" stat of s, f or t) are not slices;
//   - flows: an event's XLA "flow" stats (id<<2 | direction, as the Kineto
//     conversion writes them) as flow_ids (start, step) and
//     terminating_flow_ids (end), with the JSON's ids; in a plane without
//     flow stats, events of one node with the same correlation id (a
//     simulated launch and its kernel: correlation_id) are one flow;
//   - each clock node's offsets as a process of counter tracks, "node 1
//     (host-b) clock" (pid and order as in the JSON): "clock offset" (ns),
//     "clock drift" (ppm), "clock sigma" (ns), a value per offsets window
//     at its start in global time; no process for the clock metadata
//     planes.
//
// Times are global time in ns from the combined trace's time base
// (package perfetto says how the clock is declared), ps floored to ns.

// perfettoExport is one Perfetto export's state.
type perfettoExport struct {
	c  *combiner
	w  *perfetto.Writer
	p  *wirePlane
	jp jsonProcess // the plane's process
	// proc is the plane's process track, declared with its first slice
	// (0: not yet).
	proc perfetto.Track
	// flowID and phID are the plane's stat metadata ids of the flow and
	// ph stats (−1: none).
	flowID, phID int64
	evs          []wireEvent // the line's timed events
	spans        []perfetto.Slice
	args         []perfetto.Arg
	flows, ends  []uint64
}

// plane exports one plane of the combined XSpace.
func (x *perfettoExport) plane(p *wirePlane) error {
	jp := x.c.process(p.id)
	if jp.label == "" {
		return nil // not shown: a clock metadata plane
	}
	x.p, x.jp, x.proc = p, jp, 0
	x.flowID, x.phID = -1, -1
	if id, ok := p.statID(kineto.StatFlow); ok {
		x.flowID = id
	}
	if id, ok := p.statID(kineto.StatPhase); ok {
		x.phID = id
	}
	for li, line := range p.lines {
		if err := x.line(int32(li), line); err != nil {
			return fmt.Errorf("plane %s line at index %d: %w", p.name, li, err)
		}
	}
	return nil
}

// line exports one line's timed events.
func (x *perfettoExport) line(rank int32, b []byte) error {
	var name, display string
	var ts int64
	x.evs, x.spans = x.evs[:0], x.spans[:0]
	for len(b) > 0 {
		f, rest, err := next(b, lineSpec)
		if err != nil {
			return err
		}
		b = rest
		switch f.num {
		case 2:
			name = string(f.data)
		case 11:
			display = string(f.data)
		case fLineTimestamp:
			ts = int64(f.v)
		case fLineEvents:
			x.evs = append(x.evs, wireEvent{})
			e := &x.evs[len(x.evs)-1]
			if err := parseEvent(e, f.data); err != nil {
				return err
			}
			if !e.timed || x.flowMarker(e) {
				x.evs = x.evs[:len(x.evs)-1]
			}
		}
	}
	if display != "" {
		name = display
	}
	for i := range x.evs {
		e := &x.evs[i]
		start := ts*1000 + e.offset
		x.spans = append(x.spans, perfetto.Slice{Start: floorDiv(start, 1000), End: floorDiv(start+max(e.dur, 0), 1000), Index: i})
	}
	if len(x.spans) == 0 {
		return nil
	}
	if x.proc == 0 {
		var err error
		if x.proc, err = x.w.Process(int32(1+x.p.id), x.jp.label, []string{x.jp.name}, x.jp.sort); err != nil {
			return err
		}
	}
	track := func(int) (perfetto.Track, error) {
		return x.w.Track(x.proc, name, "", rank, uint64(rank)+1)
	}
	return x.w.Slices(x.spans, track, func(s perfetto.Slice, t perfetto.Track) (bool, error) {
		e := &x.evs[s.Index]
		evName := ""
		x.args = x.args[:0]
		var err error
		if m := x.p.meta[e.meta]; m != nil {
			evName = m.display
			if evName == "" {
				evName = m.name
			}
			if x.args, err = x.wireArgs(x.args, m.stats); err != nil {
				return false, err
			}
		}
		if x.args, err = x.eventArgs(e); err != nil {
			return false, err
		}
		if s.Start == s.End {
			return true, x.w.Instant(t, s.Start, evName, x.args)
		}
		return false, x.w.Begin(t, s.Start, evName, x.args, x.flows, x.ends)
	})
}

// eachStat calls fn with the metadata id and value of each stat field
// (field num) of the message b.
func eachStat(b []byte, spec string, num protowire.Number, fn func(id int64, val field) error) error {
	for len(b) > 0 {
		f, rest, err := next(b, spec)
		if err != nil {
			return err
		}
		b = rest
		if f.num != num {
			continue
		}
		id, val, err := statOf(f.data)
		if err != nil {
			return err
		}
		if err := fn(id, val); err != nil {
			return err
		}
	}
	return nil
}

// flowMarker reports whether e is a converted Kineto trace's flow event
// (a "ph" stat of s, f or t), which is no slice.
func (x *perfettoExport) flowMarker(e *wireEvent) bool {
	if x.phID < 0 {
		return false
	}
	marker := false
	_ = eachStat(e.raw, eventSpec, fEventStats, func(id int64, val field) error {
		if id == x.phID && val.num == fStatStr {
			marker = flowMarker(string(val.data))
		}
		return nil
	})
	return marker
}

// eventArgs appends the stats of e to x.args and sets x.flows and x.ends,
// the flows e starts or continues and those it ends: from its flow stats,
// else (in a plane without flow stats) from its correlation (the
// simulator's correlation_id, a Kineto trace's correlation). Flow stat ids
// are the Chrome JSON's (flowJSONID); correlation ids have the top bit
// set, so that the two never meet.
func (x *perfettoExport) eventArgs(e *wireEvent) ([]perfetto.Arg, error) {
	x.flows, x.ends = x.flows[:0], x.ends[:0]
	var corr uint64
	err := eachStat(e.raw, eventSpec, fEventStats, func(id int64, val field) error {
		if id == x.flowID && (val.num == fStatUint || val.num == fStatInt) {
			fid := flowJSONID(x.jp.node, val.v>>2&kineto.MaxFlowID)
			switch val.v & 3 {
			case kineto.FlowIn:
				x.ends = append(x.ends, fid)
			case kineto.FlowOut, kineto.FlowInOut:
				x.flows = append(x.flows, fid)
			}
		}
		if (val.num == fStatUint || val.num == fStatInt) && val.v > 0 && corr == 0 {
			if n := x.p.stats[id]; n == "correlation_id" || n == "correlation" {
				corr = val.v
			}
		}
		var err error
		x.args, err = x.appendArg(x.args, id, val)
		return err
	})
	if err != nil {
		return x.args, err
	}
	if x.flowID < 0 && corr > 0 && corr < 1<<40 && x.jp.node >= 0 && x.jp.node < 1<<22 {
		x.flows = append(x.flows, 1<<63|uint64(x.jp.node)<<40|corr)
	}
	return x.args, nil
}

// wireArgs appends the stats of an event metadata entry (its concatenated
// stats fields) to args.
func (x *perfettoExport) wireArgs(args []perfetto.Arg, stats []byte) ([]perfetto.Arg, error) {
	err := eachStat(stats, eventMetaSpec, fMetaStats, func(id int64, val field) error {
		var err error
		args, err = x.appendArg(args, id, val)
		return err
	})
	return args, err
}

// appendArg appends the stat (id, val) of the plane as a typed value: an
// int64, uint64 or double as such, any other as statText renders it.
func (x *perfettoExport) appendArg(args []perfetto.Arg, id int64, val field) ([]perfetto.Arg, error) {
	a := perfetto.Arg{Name: x.p.stats[id]}
	if _, ok := x.p.stats[id]; !ok {
		a.Name = strconv.FormatInt(id, 10)
	}
	switch val.num {
	case 0:
		return args, nil // no value
	case fStatInt:
		a.Kind, a.Int = perfetto.KindInt, int64(val.v)
	case fStatUint:
		a.Kind, a.Uint = perfetto.KindUint, val.v
	case fStatDouble:
		a.Kind, a.Double = perfetto.KindDouble, protowireFloat(val.v)
	case fStatStr:
		a.Str = string(val.data)
	default:
		s, err := x.p.statText(id, val)
		if err != nil {
			return args, err
		}
		a.Str = s
	}
	return append(args, a), nil
}

// counters writes each clock node's offsets as counter tracks of a
// process of its own, as the Chrome JSON does (writeCounters); a sample
// outside the times the trace's clock holds is left out.
func (x *perfettoExport) counters() error {
	c := x.c
	if c.offs == nil {
		return nil
	}
	for i, k := range c.clocks {
		samples := counterSamples(c.offs.Records(k.node), c.timeBase, nil)
		if len(samples) == 0 {
			continue
		}
		pid := 1 + c.nextID + int64(i)
		proc, err := x.w.Process(int32(pid), processLabel(k.node, k.host, "clock"), []string{k.plane}, sortIndex(c.clockPos[k.node], rankCounters))
		if err != nil {
			return err
		}
		var tracks [3]perfetto.Track
		for j, d := range []struct {
			name   string
			timeNS bool
			unit   string
		}{{counterOffset, true, ""}, {counterDrift, false, "ppm"}, {counterSigma, true, ""}} {
			if tracks[j], err = x.w.Counter(proc, d.name, int32(j), d.timeNS, d.unit); err != nil {
				return err
			}
		}
		for _, s := range samples {
			t := floorDiv(s.ps, 1000)
			if !x.w.Holds(t) {
				continue
			}
			for j, v := range []float64{s.o.OffsetNS, s.o.DriftPPM, s.o.UncertaintyNS} {
				if err := x.w.Value(tracks[j], t, v); err != nil {
					return fmt.Errorf("clock counters of node %d: %w", k.node, err)
				}
			}
		}
	}
	return nil
}
