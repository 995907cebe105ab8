package perfetto

import (
	"errors"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Holds reports whether t (ns) is a time the trace's clock can hold:
// from −Options.Offset on.
func (s *Seq) Holds(t int64) bool { return t >= -s.o.Offset && t <= math.MaxInt64-s.o.Offset }

// errTooEarly is a time before what the clock can hold.
var errTooEarly = errors.New("perfetto: time before the clock's range")

// event writes the TrackEvent built in s.ev (after its type and track) as
// a packet at t, with the names the packet interned.
func (s *Seq) event(t int64) error {
	if err := s.timestamp(t); err != nil {
		if s.err == nil {
			s.err = err
		}
		return s.err
	}
	s.pkt = s.head(s.pkt, true)
	if len(s.interns) > 0 {
		s.pkt = protowire.AppendTag(s.pkt, fPacketInterned, protowire.BytesType)
		s.pkt = protowire.AppendBytes(s.pkt, s.interns)
		s.interns = s.interns[:0]
	}
	s.pkt = protowire.AppendTag(s.pkt, fPacketTrackEvent, protowire.BytesType)
	s.pkt = protowire.AppendBytes(s.pkt, s.ev)
	s.endPacket()
	return s.err
}

// evHead starts a TrackEvent in s.ev: its type and track, which the
// sequence's default track need not name.
func (s *Seq) evHead(typ uint64, track Track) {
	s.ev = protowire.AppendTag(s.ev[:0], fEventType, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, typ)
	if track != s.defaultTrack() {
		s.ev = protowire.AppendTag(s.ev, fEventTrackUUID, protowire.VarintType)
		s.ev = protowire.AppendVarint(s.ev, uint64(track))
	}
}

// intern returns name's iid in table (field of InternedData), adding it
// to the packet's interned data when new.
func (s *Seq) intern(table map[string]uint64, field protowire.Number, name string) uint64 {
	if iid, ok := table[name]; ok {
		return iid
	}
	iid := uint64(len(table) + 1)
	table[name] = iid
	var e []byte
	e = protowire.AppendTag(e, fInternedIID, protowire.VarintType)
	e = protowire.AppendVarint(e, iid)
	e = appendString(e, fInternedName, name)
	s.interns = protowire.AppendTag(s.interns, field, protowire.BytesType)
	s.interns = protowire.AppendBytes(s.interns, e)
	return iid
}

// named appends the event's name (interned) and args to s.ev.
func (s *Seq) named(name string, args []Arg) {
	s.ev = protowire.AppendTag(s.ev, fEventNameIID, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, s.intern(s.names, fInternedEventNames, name))
	for i := range args {
		a := &args[i]
		s.sub = protowire.AppendTag(s.sub[:0], fAnnNameIID, protowire.VarintType)
		s.sub = protowire.AppendVarint(s.sub, s.intern(s.anns, fInternedAnnNames, a.Name))
		switch a.Kind {
		case KindInt:
			s.sub = protowire.AppendTag(s.sub, fAnnInt, protowire.VarintType)
			s.sub = protowire.AppendVarint(s.sub, uint64(a.Int))
		case KindUint:
			s.sub = protowire.AppendTag(s.sub, fAnnUint, protowire.VarintType)
			s.sub = protowire.AppendVarint(s.sub, a.Uint)
		case KindDouble:
			s.sub = protowire.AppendTag(s.sub, fAnnDouble, protowire.Fixed64Type)
			s.sub = protowire.AppendFixed64(s.sub, math.Float64bits(a.Double))
		case KindBool:
			s.sub = protowire.AppendTag(s.sub, fAnnBool, protowire.VarintType)
			s.sub = protowire.AppendVarint(s.sub, protowire.EncodeBool(a.Bool))
		default:
			s.sub = appendString(s.sub, fAnnString, a.Str)
		}
		s.ev = protowire.AppendTag(s.ev, fEventAnnotations, protowire.BytesType)
		s.ev = protowire.AppendBytes(s.ev, s.sub)
	}
}

// flows appends flow ids (field) to s.ev, packed.
func (s *Seq) flows(field protowire.Number, ids []uint64) {
	if len(ids) == 0 {
		return
	}
	s.sub = s.sub[:0]
	for _, id := range ids {
		s.sub = protowire.AppendFixed64(s.sub, id)
	}
	s.ev = protowire.AppendTag(s.ev, field, protowire.BytesType)
	s.ev = protowire.AppendBytes(s.ev, s.sub)
}

// Begin starts a slice named name on track at t (ns), with args; flows
// are the flow ids it starts or continues (flow_ids), terminating those it
// ends (terminating_flow_ids). The slice ends at the track's next End
// that is not another slice's: slices on one track must nest.
func (s *Seq) Begin(track Track, t int64, name string, args []Arg, flows, terminating []uint64) error {
	if s.err != nil {
		return s.err
	}
	s.evHead(typeSliceBegin, track)
	s.named(name, args)
	s.flows(fEventFlowIDs, flows)
	s.flows(fEventTermFlowIDs, terminating)
	return s.event(t)
}

// End ends the innermost open slice of track at t (ns).
func (s *Seq) End(track Track, t int64) error {
	if s.err != nil {
		return s.err
	}
	s.evHead(typeSliceEnd, track)
	return s.event(t)
}

// Instant writes an instant (zero-length) event named name on track at t.
func (s *Seq) Instant(track Track, t int64, name string, args []Arg) error {
	if s.err != nil {
		return s.err
	}
	s.evHead(typeInstant, track)
	s.named(name, args)
	return s.event(t)
}

// Value writes a counter track's value at t.
func (s *Seq) Value(track Track, t int64, v float64) error {
	if s.err != nil {
		return s.err
	}
	s.evHead(typeCounter, track)
	s.ev = protowire.AppendTag(s.ev, fEventDoubleValue, protowire.Fixed64Type)
	s.ev = protowire.AppendFixed64(s.ev, math.Float64bits(v))
	return s.event(t)
}
