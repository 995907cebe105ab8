package combine

import (
	"encoding/binary"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/xspace"
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
// Each line is a packet sequence of its own (lineEncoder, one per
// worker), its timestamps deltas on the sequence's incremental clock, its
// begins and ends in time order (perfetto.Seq.Slices); each clock node's
// counters another. With Options.Window workload only the slices that
// overlap the Chrome JSON's span are written, a line or plane with none is
// left out, and the counters are those the JSON shows.

// perfettoPlane is what the lines of one plane share while they are
// encoded, read only once built.
type perfettoPlane struct {
	p  *wirePlane
	jp jsonProcess // the plane's process
	// proc is the plane's process track, declared (by the merge, in line
	// order) before the first line with slices is written.
	proc     perfetto.Track
	declared bool // main goroutine only
	// flowID and phID are the plane's stat metadata ids of the flow and
	// ph stats (−1: none).
	flowID, phID int64
}

// newPerfettoPlane returns the plane's context, nil for a plane not shown
// (a clock metadata plane).
func (c *combiner) newPerfettoPlane(p *wirePlane) *perfettoPlane {
	jp := c.process(p.id)
	if jp.label == "" {
		return nil
	}
	pp := &perfettoPlane{p: p, jp: jp, proc: perfetto.ProcessTrack(int32(1 + p.id)), flowID: -1, phID: -1}
	if id, ok := p.statID(kineto.StatFlow); ok {
		pp.flowID = id
	}
	if id, ok := p.statID(kineto.StatPhase); ok {
		pp.phID = id
	}
	return pp
}

// lineEncoder encodes lines as sequences of their own: one per worker,
// its buffers reused from line to line.
type lineEncoder struct {
	seq         *perfetto.Seq
	win         *jsonSpan // the span exported (nil: all)
	pp          *perfettoPlane
	evs         []wireEvent // the line's timed events
	spans       []perfetto.Slice
	args        []perfetto.Arg
	flows, ends []uint64
}

// line encodes the line b of pp, at rank among the plane's lines, as the
// sequence id: its tracks and slices; the chunk is empty for a line with
// no slice (in the span).
func (x *lineEncoder) line(pp *perfettoPlane, id uint32, rank int32, b []byte) (perfetto.Chunk, error) {
	x.pp = pp
	x.seq.Reset(id)
	var name, display string
	var ts int64
	x.evs, x.spans = x.evs[:0], x.spans[:0]
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, xspace.LineSpec)
		if err != nil {
			return perfetto.Chunk{}, err
		}
		b = rest
		switch f.Num {
		case 2:
			name = string(f.Data)
		case 11:
			display = string(f.Data)
		case xspace.FieldLineTimestamp:
			ts = int64(f.Value)
		case xspace.FieldLineEvents:
			x.evs = append(x.evs, wireEvent{})
			e := &x.evs[len(x.evs)-1]
			if err := parseEvent(e, f.Data); err != nil {
				return perfetto.Chunk{}, err
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
		if !x.win.holds(start, e.dur) {
			continue
		}
		x.spans = append(x.spans, perfetto.Slice{Start: floorDiv(start, 1000), End: floorDiv(start+max(e.dur, 0), 1000), Index: i})
	}
	if len(x.spans) == 0 {
		return perfetto.Chunk{}, nil
	}
	track := func(int) (perfetto.Track, error) {
		return x.seq.Track(pp.proc, name, "", rank, uint64(rank)+1)
	}
	err := x.seq.Slices(x.spans, track, func(s perfetto.Slice, t perfetto.Track) (bool, error) {
		e := &x.evs[s.Index]
		evName := ""
		x.args = x.args[:0]
		var err error
		if m := pp.p.meta[e.meta]; m != nil {
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
			return true, x.seq.Instant(t, s.Start, evName, x.args)
		}
		return false, x.seq.Begin(t, s.Start, evName, x.args, x.flows, x.ends)
	})
	if err != nil {
		return perfetto.Chunk{}, err
	}
	return x.seq.Take()
}

// eachStat calls fn with the metadata id and value of each stat field
// (field num) of the message b.
func eachStat(b []byte, spec string, num protowire.Number, fn func(id int64, val xspace.Field) error) error {
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, spec)
		if err != nil {
			return err
		}
		b = rest
		if f.Num != num {
			continue
		}
		id, val, err := statOf(f.Data)
		if err != nil {
			return err
		}
		if err := fn(id, val); err != nil {
			return err
		}
	}
	return nil
}

// eachEventStat is eachStat over an event's stats (eventStats), with a
// fast path for the stats written the usual way: a one-byte tag and
// length, then metadata_id and one value (quickStat).
func eachEventStat(b []byte, fn func(id int64, val xspace.Field) error) error {
	for len(b) > 0 {
		if b[0] == xspace.FieldEventStats<<3|2 && len(b) > 1 && b[1] < 0x80 && 2+int(b[1]) <= len(b) {
			if id, val, ok := quickStat(b[2 : 2+b[1]]); ok {
				if err := fn(id, val); err != nil {
					return err
				}
				b = b[2+b[1]:]
				continue
			}
		}
		f, rest, err := xspace.Next(b, xspace.EventSpec)
		if err != nil {
			return err
		}
		b = rest
		if f.Num != xspace.FieldEventStats {
			continue
		}
		id, val, err := statOf(f.Data)
		if err != nil {
			return err
		}
		if err := fn(id, val); err != nil {
			return err
		}
	}
	return nil
}

// quickStat parses a stat of the usual shape, metadata_id then one value
// of its wire type (StatSpec), nothing else; ok is false for any other,
// which statOf parses.
func quickStat(b []byte) (id int64, val xspace.Field, ok bool) {
	if len(b) < 3 || b[0] != xspace.FieldStatMeta<<3 {
		return 0, xspace.Field{}, false
	}
	v, n := xspace.ConsumeVarint(b[1:])
	if n < 0 {
		return 0, xspace.Field{}, false
	}
	id, b = int64(v), b[1+n:]
	if len(b) < 2 {
		return 0, xspace.Field{}, false
	}
	num := protowire.Number(b[0] >> 3)
	switch b[0] {
	case xspace.FieldStatUint << 3, xspace.FieldStatInt << 3, xspace.FieldStatRef << 3:
		v, n := xspace.ConsumeVarint(b[1:])
		if n < 0 || 1+n != len(b) {
			return 0, xspace.Field{}, false
		}
		return id, xspace.Field{Num: num, Type: protowire.VarintType, Raw: b, Value: v}, true
	case xspace.FieldStatDouble<<3 | 1:
		if len(b) != 9 {
			return 0, xspace.Field{}, false
		}
		return id, xspace.Field{Num: num, Type: protowire.Fixed64Type, Raw: b, Value: binary.LittleEndian.Uint64(b[1:])}, true
	case xspace.FieldStatStr<<3 | 2, xspace.FieldStatBytes<<3 | 2, xspace.FieldStatZStr<<3 | 2:
		if b[1] >= 0x80 || 2+int(b[1]) != len(b) {
			return 0, xspace.Field{}, false
		}
		return id, xspace.Field{Num: num, Type: protowire.BytesType, Raw: b, Data: b[2:]}, true
	}
	return 0, xspace.Field{}, false
}

// eventStats is the bytes of e that hold its stats: its tail, when that
// holds every field but 1–3 (parseEvent), else the whole event.
func eventStats(e *wireEvent) []byte {
	if e.tailOK {
		return e.tail
	}
	return e.raw
}

// flowMarker reports whether e is a converted Kineto trace's flow event
// (a "ph" stat of s, f or t), which is no slice.
func (x *lineEncoder) flowMarker(e *wireEvent) bool {
	if x.pp.phID < 0 {
		return false
	}
	marker := false
	_ = eachEventStat(eventStats(e), func(id int64, val xspace.Field) error {
		if id == x.pp.phID && val.Num == xspace.FieldStatStr {
			marker = flowMarker(string(val.Data))
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
func (x *lineEncoder) eventArgs(e *wireEvent) ([]perfetto.Arg, error) {
	x.flows, x.ends = x.flows[:0], x.ends[:0]
	var corr uint64
	err := eachEventStat(eventStats(e), func(id int64, val xspace.Field) error {
		if id == x.pp.flowID && (val.Num == xspace.FieldStatUint || val.Num == xspace.FieldStatInt) {
			fid := flowJSONID(x.pp.jp.node, val.Value>>2&kineto.MaxFlowID)
			switch val.Value & 3 {
			case kineto.FlowIn:
				x.ends = append(x.ends, fid)
			case kineto.FlowOut, kineto.FlowInOut:
				x.flows = append(x.flows, fid)
			}
		}
		if (val.Num == xspace.FieldStatUint || val.Num == xspace.FieldStatInt) && val.Value > 0 && corr == 0 {
			if n := x.pp.p.stats[id]; n == "correlation_id" || n == "correlation" {
				corr = val.Value
			}
		}
		var err error
		x.args, err = x.appendArg(x.args, id, val)
		return err
	})
	if err != nil {
		return x.args, err
	}
	if x.pp.flowID < 0 && corr > 0 && corr < 1<<40 && x.pp.jp.node >= 0 && x.pp.jp.node < 1<<22 {
		x.flows = append(x.flows, 1<<63|uint64(x.pp.jp.node)<<40|corr)
	}
	return x.args, nil
}

// wireArgs appends the stats of an event metadata entry (its concatenated
// stats fields) to args.
func (x *lineEncoder) wireArgs(args []perfetto.Arg, stats []byte) ([]perfetto.Arg, error) {
	err := eachStat(stats, xspace.EventMetaSpec, xspace.FieldMetaStats, func(id int64, val xspace.Field) error {
		var err error
		args, err = x.appendArg(args, id, val)
		return err
	})
	return args, err
}

// appendArg appends the stat (id, val) of the plane as a typed value: an
// int64, uint64 or double as such, any other as statText renders it.
func (x *lineEncoder) appendArg(args []perfetto.Arg, id int64, val xspace.Field) ([]perfetto.Arg, error) {
	a := perfetto.Arg{Name: x.pp.p.stats[id]}
	if _, ok := x.pp.p.stats[id]; !ok {
		a.Name = strconv.FormatInt(id, 10)
	}
	switch val.Num {
	case 0:
		return args, nil // no value
	case xspace.FieldStatInt:
		a.Kind, a.Int = perfetto.KindInt, int64(val.Value)
	case xspace.FieldStatUint:
		a.Kind, a.Uint = perfetto.KindUint, val.Value
	case xspace.FieldStatDouble:
		a.Kind, a.Double = perfetto.KindDouble, protowireFloat(val.Value)
	case xspace.FieldStatStr:
		a.Str = string(val.Data)
	default:
		s, err := x.pp.p.statText(id, val)
		if err != nil {
			return args, err
		}
		a.Str = s
	}
	return append(args, a), nil
}
