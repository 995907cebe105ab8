package perfettotest

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Track is a track a trace declares.
type Track struct {
	UUID, Parent uint64
	Name         string
	// Process is the process name and PID of a process track ("", 0 for
	// others).
	Process string
	PID     int32
	Rank    int32
	Counter bool
	// Slices and Values count the slices begun and the counter values on
	// the track; Instants its instants.
	Slices, Instants, Values int
	// First and Last are the first and last times of the track's events,
	// in trace time (BOOTTIME ns, which the trace's clock 64 converts to
	// through the sequence's ClockSnapshot; incremental timestamps summed).
	First, Last uint64
	// Spans are the track's slices and instants in the order begun, in
	// trace time (an instant's End is its Start).
	Spans []Span
}

// Span is a slice or an instant on a track, in trace time.
type Span struct {
	Start, End uint64
	Name       string
	Instant    bool
}

// Summary is what a trace holds, decoded with Perfetto's protos.
type Summary struct {
	Packets int
	// Clocks is the first ClockSnapshot's clocks: id → timestamp; Primary
	// its primary_trace_clock.
	Clocks  map[uint32]uint64
	Primary int32
	// Tracks by uuid, and their uuids in the order declared.
	Tracks map[uint64]*Track
	Order  []uint64
	// Names counts the events of each name; Args the kind of each
	// debug annotation's value ("int_value", "string_value", …) by name.
	Names map[string]int
	Args  map[string]string
	// Flows counts the events of each flow id (flow_ids and
	// terminating_flow_ids).
	Flows map[uint64]int
	// Compressed is the number of compressed_packets packets; Packets
	// counts the packets they hold, not them.
	Compressed int
	// Sequences is the number of packet sequences; Incremental those
	// whose clock 64 is incremental (timestamps are deltas).
	Sequences, Incremental int
}

// seqState is a packet sequence's incremental state, as Perfetto's
// importer keeps it.
type seqState struct {
	cleared     bool
	names, anns map[uint64]string
	clockID     uint32 // the packet defaults' timestamp_clock_id
	track       uint64 // the packet defaults' track_event_defaults.track_uuid
	// clock 64 as the sequence's last snapshot defines it: incremental,
	// its reading last at the last packet, and the snapshot's readings of
	// it and of BOOTTIME.
	snapped        bool
	incremental    bool
	last           uint64
	snap64, snapBt uint64
}

// Processes returns the names of the process tracks, in the order of
// their ranks (declaration order among equal ranks).
func (s *Summary) Processes() []string {
	var out []string
	var ranks []int32
	for _, u := range s.Order {
		t := s.Tracks[u]
		if t.Process == "" {
			continue
		}
		i := len(out)
		for i > 0 && ranks[i-1] > t.Rank {
			i--
		}
		out = append(out[:i], append([]string{t.Process}, out[i:]...)...)
		ranks = append(ranks[:i], append([]int32{t.Rank}, ranks[i:]...)...)
	}
	return out
}

// Check decodes data, a trace, with trace (Schema's Trace message) and
// checks, on the way, what Perfetto's importer needs: every packet parses
// with no field unknown to Perfetto's protos; every packet is on a
// sequence (trusted_packet_sequence_id), whose first packet has
// SEQ_INCREMENTAL_STATE_CLEARED and the packet defaults (timestamp_clock_id
// 64); a ClockSnapshot on the sequence defines clock 64 (relating it to
// BOOTTIME) before any timestamped packet of the sequence; an incremental
// clock's timestamps are deltas from the sequence's previous one (the
// snapshot's for the first), and the packets that carry them say
// SEQ_NEEDS_INCREMENTAL_STATE; every name_iid (event names, debug
// annotation names) resolves to a name interned earlier on the sequence
// (or in the same packet); every event is on a track declared before it
// (its track_uuid, or the sequence's default track); on each track,
// times do not go back, slices nest (every TYPE_SLICE_END ends a slice
// begun on the same track) and every slice begun is ended; counter values
// are on counter tracks and carry a value.
func Check(trace protoreflect.MessageDescriptor, data []byte) (*Summary, error) {
	m := dynamicpb.NewMessage(trace)
	if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decode the trace: %w", err)
	}
	if bad := unknown(m, "trace"); bad != "" {
		return nil, errors.New(bad)
	}
	s := &Summary{Tracks: map[uint64]*Track{}, Names: map[string]int{}, Args: map[string]string{}, Flows: map[uint64]int{}, Clocks: map[uint32]uint64{}}
	seqs := map[uint64]*seqState{}
	open := map[uint64][]int{} // track → its open slices (indexes in Spans)
	packets, err := expand(trace, m, s)
	if err != nil {
		return nil, err
	}
	for i, p := range packets {
		s.Packets++
		where := fmt.Sprintf("packet %d", i)
		id := get(p, "trusted_packet_sequence_id").Uint()
		if id == 0 {
			return nil, fmt.Errorf("%s: no trusted_packet_sequence_id", where)
		}
		where = fmt.Sprintf("%s (sequence %d)", where, id)
		flags := get(p, "sequence_flags").Uint()
		q := seqs[id]
		if q == nil {
			if flags&1 == 0 {
				return nil, fmt.Errorf("%s: the sequence's first packet lacks SEQ_INCREMENTAL_STATE_CLEARED", where)
			}
			if !has(p, "trace_packet_defaults") || get(get(p, "trace_packet_defaults").Message(), "timestamp_clock_id").Uint() != 64 {
				return nil, fmt.Errorf("%s: the sequence's first packet has no trace_packet_defaults with timestamp_clock_id 64", where)
			}
			q = &seqState{}
			seqs[id] = q
			s.Sequences++
		}
		if flags&1 != 0 {
			*q = seqState{cleared: true, names: map[uint64]string{}, anns: map[uint64]string{}}
		}
		if has(p, "trace_packet_defaults") {
			d := get(p, "trace_packet_defaults").Message()
			q.clockID = uint32(get(d, "timestamp_clock_id").Uint())
			if has(d, "track_event_defaults") {
				q.track = get(get(d, "track_event_defaults").Message(), "track_uuid").Uint()
			}
		}
		if has(p, "clock_snapshot") {
			if err := s.snapshot(get(p, "clock_snapshot").Message(), q); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		if has(p, "interned_data") {
			in := get(p, "interned_data").Message()
			intern(in, "event_names", q.names)
			intern(in, "debug_annotation_names", q.anns)
		}
		var ts uint64
		if has(p, "timestamp") {
			clock := uint32(get(p, "timestamp_clock_id").Uint())
			if clock == 0 {
				clock = q.clockID
			}
			if clock != 64 {
				return nil, fmt.Errorf("%s: a timestamp on clock %d, not 64", where, clock)
			}
			if !q.snapped {
				return nil, fmt.Errorf("%s: a timestamped packet before any ClockSnapshot on its sequence", where)
			}
			v := get(p, "timestamp").Uint()
			if q.incremental {
				if flags&2 == 0 {
					return nil, fmt.Errorf("%s: an incremental timestamp without SEQ_NEEDS_INCREMENTAL_STATE", where)
				}
				if v > math.MaxInt64-q.last {
					return nil, fmt.Errorf("%s: timestamp delta %d overflows", where, v)
				}
				v += q.last
				q.last = v
			}
			if v < q.snap64 && q.snap64-v > q.snapBt {
				return nil, fmt.Errorf("%s: clock 64 reads %d, before BOOTTIME 0", where, v)
			}
			ts = v - q.snap64 + q.snapBt
		}
		if has(p, "track_descriptor") {
			if err := s.descriptor(get(p, "track_descriptor").Message()); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		if has(p, "track_event") {
			if !has(p, "timestamp") {
				return nil, fmt.Errorf("%s: a track event without a timestamp", where)
			}
			if err := s.event(get(p, "track_event").Message(), ts, q, open); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	for _, u := range s.Order {
		if n := len(open[u]); n != 0 {
			return nil, fmt.Errorf("track %d (%s): %d slices begun and never ended", u, s.Tracks[u].Name, n)
		}
	}
	return s, nil
}

// expand lists the packets of the trace m, those compressed into
// compressed_packets (zlib, each under 512 KB) decompressed in their
// place, as Perfetto's tokenizer reads them.
func expand(trace protoreflect.MessageDescriptor, m protoreflect.Message, s *Summary) ([]protoreflect.Message, error) {
	var out []protoreflect.Message
	list := m.Get(field(trace, "packet")).List()
	for i := 0; i < list.Len(); i++ {
		p := list.Get(i).Message()
		if !has(p, "compressed_packets") {
			out = append(out, p)
			continue
		}
		z := get(p, "compressed_packets").Bytes()
		if len(z) >= 512_000 {
			return nil, fmt.Errorf("packet %d: compressed_packets of %d bytes, 512 KB or more", i, len(z))
		}
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, fmt.Errorf("packet %d: compressed_packets: %w", i, err)
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("packet %d: compressed_packets: %w", i, err)
		}
		inner := dynamicpb.NewMessage(trace)
		if err := proto.Unmarshal(raw, inner); err != nil {
			return nil, fmt.Errorf("packet %d: compressed_packets: %w", i, err)
		}
		if bad := unknown(inner, fmt.Sprintf("packet[%d].compressed_packets", i)); bad != "" {
			return nil, errors.New(bad)
		}
		s.Compressed++
		inl := inner.Get(field(trace, "packet")).List()
		for j := 0; j < inl.Len(); j++ {
			q := inl.Get(j).Message()
			if has(q, "compressed_packets") {
				return nil, fmt.Errorf("packet %d: compressed_packets inside compressed_packets", i)
			}
			out = append(out, q)
		}
	}
	return out, nil
}

// snapshot checks a ClockSnapshot on the sequence q: it defines clock 64
// and relates it to BOOTTIME; the first one's clocks are kept.
func (s *Summary) snapshot(c protoreflect.Message, q *seqState) error {
	clocks := get(c, "clocks").List()
	has64, hasBt := false, false
	first := len(s.Clocks) == 0
	for i := 0; i < clocks.Len(); i++ {
		k := clocks.Get(i).Message()
		id := uint32(get(k, "clock_id").Uint())
		ts := get(k, "timestamp").Uint()
		inc := get(k, "is_incremental").Bool()
		switch {
		case id == 64:
			if q.snapped && inc != q.incremental {
				return errors.New("clock 64 changes is_incremental")
			}
			if !q.snapped && inc {
				s.Incremental++
			}
			has64, q.incremental, q.last, q.snap64 = true, inc, ts, ts
		case inc:
			return fmt.Errorf("clock %d is incremental: only sequence-scoped clocks (64–127) may be", id)
		case id == 6:
			hasBt, q.snapBt = true, ts
		}
		if first {
			s.Clocks[id] = ts
		}
	}
	if !has64 || !hasBt {
		return fmt.Errorf("a ClockSnapshot of %d clocks, without clock 64 and BOOTTIME to relate it to", clocks.Len())
	}
	q.snapped = true
	if first {
		s.Primary = int32(get(c, "primary_trace_clock").Enum())
	}
	return nil
}

// descriptor records a TrackDescriptor.
func (s *Summary) descriptor(d protoreflect.Message) error {
	t := &Track{UUID: get(d, "uuid").Uint(), Parent: get(d, "parent_uuid").Uint(), Name: get(d, "name").String(),
		Rank: int32(get(d, "sibling_order_rank").Int()), Counter: has(d, "counter")}
	if t.UUID == 0 {
		return nil // the root track's settings
	}
	if _, dup := s.Tracks[t.UUID]; dup {
		return fmt.Errorf("track %d declared twice", t.UUID)
	}
	if t.Parent != 0 && s.Tracks[t.Parent] == nil {
		return fmt.Errorf("track %d (%s): parent %d not declared before it", t.UUID, t.Name, t.Parent)
	}
	if has(d, "process") {
		pd := get(d, "process").Message()
		t.Process, t.PID = get(pd, "process_name").String(), int32(get(pd, "pid").Int())
		if t.Process == "" || t.PID == 0 {
			return fmt.Errorf("track %d: a process without a name or pid", t.UUID)
		}
	}
	s.Tracks[t.UUID] = t
	s.Order = append(s.Order, t.UUID)
	return nil
}

// event checks and records a TrackEvent at ts.
func (s *Summary) event(e protoreflect.Message, ts uint64, q *seqState, open map[uint64][]int) error {
	names, anns := q.names, q.anns
	u := q.track
	if has(e, "track_uuid") {
		u = get(e, "track_uuid").Uint()
	}
	t := s.Tracks[u]
	if t == nil {
		return fmt.Errorf("an event on track %d, not declared", u)
	}
	if t.Slices+t.Instants+t.Values > 0 && ts < t.Last {
		return fmt.Errorf("track %d (%s): time %d after %d", u, t.Name, ts, t.Last)
	}
	if t.Slices+t.Instants+t.Values == 0 {
		t.First = ts
	}
	t.Last = ts
	typ := get(e, "type").Enum()
	name := ""
	if typ != 2 && typ != 4 { // not an end, not a counter value: named
		iid := get(e, "name_iid").Uint()
		n, ok := names[iid]
		if !ok {
			return fmt.Errorf("track %d: name_iid %d is not interned", u, iid)
		}
		name = n
		s.Names[name]++
	}
	anl := get(e, "debug_annotations").List()
	for i := 0; i < anl.Len(); i++ {
		a := anl.Get(i).Message()
		iid := get(a, "name_iid").Uint()
		aname, ok := anns[iid]
		if !ok {
			return fmt.Errorf("track %d: debug annotation name_iid %d is not interned", u, iid)
		}
		kind := ""
		if o := a.WhichOneof(a.Descriptor().Oneofs().ByName("value")); o != nil {
			kind = string(o.Name())
		}
		if kind == "" {
			return fmt.Errorf("track %d: debug annotation %s has no value", u, aname)
		}
		s.Args[aname] = kind
	}
	for _, f := range []string{"flow_ids", "terminating_flow_ids"} {
		l := get(e, f).List()
		for i := 0; i < l.Len(); i++ {
			s.Flows[l.Get(i).Uint()]++
		}
	}
	switch typ {
	case 1: // TYPE_SLICE_BEGIN
		if t.Counter {
			return fmt.Errorf("a slice on counter track %d (%s)", u, t.Name)
		}
		open[u] = append(open[u], len(t.Spans))
		t.Spans = append(t.Spans, Span{Start: ts, Name: name})
		t.Slices++
	case 2: // TYPE_SLICE_END
		o := open[u]
		if len(o) == 0 {
			return fmt.Errorf("track %d (%s): a slice end with no slice open", u, t.Name)
		}
		t.Spans[o[len(o)-1]].End = ts
		open[u] = o[:len(o)-1]
	case 3: // TYPE_INSTANT
		t.Spans = append(t.Spans, Span{Start: ts, End: ts, Name: name, Instant: true})
		t.Instants++
	case 4: // TYPE_COUNTER
		if !t.Counter {
			return fmt.Errorf("a counter value on track %d (%s), not a counter track", u, t.Name)
		}
		if !has(e, "counter_value") && !has(e, "double_counter_value") {
			return fmt.Errorf("a counter event on track %d (%s) with no value", u, t.Name)
		}
		t.Values++
	default:
		return fmt.Errorf("track %d: event type %d", u, typ)
	}
	return nil
}

// intern adds the iid → name entries of in's list field.
func intern(in protoreflect.Message, list string, to map[uint64]string) {
	l := get(in, list).List()
	for i := 0; i < l.Len(); i++ {
		e := l.Get(i).Message()
		to[get(e, "iid").Uint()] = get(e, "name").String()
	}
}

func field(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fd := md.Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("perfettotest: %s has no field %s", md.FullName(), name))
	}
	return fd
}

func get(m protoreflect.Message, name string) protoreflect.Value {
	return m.Get(field(m.Descriptor(), name))
}

func has(m protoreflect.Message, name string) bool {
	return m.Has(field(m.Descriptor(), name))
}

// protowireTag decodes the tag at the start of b.
func protowireTag(b []byte) (protowire.Number, protowire.Type, int) {
	return protowire.ConsumeTag(b)
}
