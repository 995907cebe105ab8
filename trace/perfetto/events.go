package perfetto

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Holds reports whether t (ns) is a time the trace's clock can hold:
// from −Options.Offset on.
func (w *Writer) Holds(t int64) bool { return t >= -w.offset && t <= math.MaxInt64-w.offset }

// errTooEarly is a time before what the clock can hold.
var errTooEarly = errors.New("perfetto: time before the clock's range")

// event writes the TrackEvent built in w.ev (after its type and track) as
// a packet at t, with the names the packet interned; named says it refers
// to interned names.
func (w *Writer) event(t int64, named bool) error {
	if !w.Holds(t) {
		if w.err == nil {
			w.err = fmt.Errorf("%w: %d ns is before −%d ns or too late", errTooEarly, t, w.offset)
		}
		return w.err
	}
	w.pkt = protowire.AppendTag(w.pkt[:0], fPacketTimestamp, protowire.VarintType)
	w.pkt = protowire.AppendVarint(w.pkt, uint64(t+w.offset))
	w.pkt = w.head(w.pkt, named)
	if len(w.interns) > 0 {
		w.pkt = protowire.AppendTag(w.pkt, fPacketInterned, protowire.BytesType)
		w.pkt = protowire.AppendBytes(w.pkt, w.interns)
		w.interns = w.interns[:0]
	}
	w.pkt = protowire.AppendTag(w.pkt, fPacketTrackEvent, protowire.BytesType)
	w.pkt = protowire.AppendBytes(w.pkt, w.ev)
	w.endPacket()
	return w.err
}

// evHead starts a TrackEvent in w.ev: its type and track.
func (w *Writer) evHead(typ uint64, track Track) {
	w.ev = protowire.AppendTag(w.ev[:0], fEventType, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, typ)
	w.ev = protowire.AppendTag(w.ev, fEventTrackUUID, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, uint64(track))
}

// intern returns name's iid in table (field of InternedData), adding it
// to the packet's interned data when new.
func (w *Writer) intern(table map[string]uint64, field protowire.Number, name string) uint64 {
	if iid, ok := table[name]; ok {
		return iid
	}
	iid := uint64(len(table) + 1)
	table[name] = iid
	var e []byte
	e = protowire.AppendTag(e, fInternedIID, protowire.VarintType)
	e = protowire.AppendVarint(e, iid)
	e = appendString(e, fInternedName, name)
	w.interns = protowire.AppendTag(w.interns, field, protowire.BytesType)
	w.interns = protowire.AppendBytes(w.interns, e)
	return iid
}

// named appends the event's name (interned) and args to w.ev.
func (w *Writer) named(name string, args []Arg) {
	w.ev = protowire.AppendTag(w.ev, fEventNameIID, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, w.intern(w.names, fInternedEventNames, name))
	for i := range args {
		a := &args[i]
		w.sub = protowire.AppendTag(w.sub[:0], fAnnNameIID, protowire.VarintType)
		w.sub = protowire.AppendVarint(w.sub, w.intern(w.anns, fInternedAnnNames, a.Name))
		switch a.Kind {
		case KindInt:
			w.sub = protowire.AppendTag(w.sub, fAnnInt, protowire.VarintType)
			w.sub = protowire.AppendVarint(w.sub, uint64(a.Int))
		case KindUint:
			w.sub = protowire.AppendTag(w.sub, fAnnUint, protowire.VarintType)
			w.sub = protowire.AppendVarint(w.sub, a.Uint)
		case KindDouble:
			w.sub = protowire.AppendTag(w.sub, fAnnDouble, protowire.Fixed64Type)
			w.sub = protowire.AppendFixed64(w.sub, math.Float64bits(a.Double))
		case KindBool:
			w.sub = protowire.AppendTag(w.sub, fAnnBool, protowire.VarintType)
			w.sub = protowire.AppendVarint(w.sub, protowire.EncodeBool(a.Bool))
		default:
			w.sub = appendString(w.sub, fAnnString, a.Str)
		}
		w.ev = protowire.AppendTag(w.ev, fEventAnnotations, protowire.BytesType)
		w.ev = protowire.AppendBytes(w.ev, w.sub)
	}
}

// flows appends flow ids (field) to w.ev, packed.
func (w *Writer) flows(field protowire.Number, ids []uint64) {
	if len(ids) == 0 {
		return
	}
	w.sub = w.sub[:0]
	for _, id := range ids {
		w.sub = protowire.AppendFixed64(w.sub, id)
	}
	w.ev = protowire.AppendTag(w.ev, field, protowire.BytesType)
	w.ev = protowire.AppendBytes(w.ev, w.sub)
}

// Begin starts a slice named name on track at t (ns), with args; flows
// are the flow ids it starts or continues (flow_ids), terminating those it
// ends (terminating_flow_ids). The slice ends at the track's next End
// that is not another slice's: slices on one track must nest.
func (w *Writer) Begin(track Track, t int64, name string, args []Arg, flows, terminating []uint64) error {
	if w.err != nil {
		return w.err
	}
	w.evHead(typeSliceBegin, track)
	w.named(name, args)
	w.flows(fEventFlowIDs, flows)
	w.flows(fEventTermFlowIDs, terminating)
	return w.event(t, true)
}

// End ends the innermost open slice of track at t (ns).
func (w *Writer) End(track Track, t int64) error {
	if w.err != nil {
		return w.err
	}
	w.evHead(typeSliceEnd, track)
	return w.event(t, false)
}

// Instant writes an instant (zero-length) event named name on track at t.
func (w *Writer) Instant(track Track, t int64, name string, args []Arg) error {
	if w.err != nil {
		return w.err
	}
	w.evHead(typeInstant, track)
	w.named(name, args)
	return w.event(t, true)
}

// Value writes a counter track's value at t.
func (w *Writer) Value(track Track, t int64, v float64) error {
	if w.err != nil {
		return w.err
	}
	w.evHead(typeCounter, track)
	w.ev = protowire.AppendTag(w.ev, fEventDoubleValue, protowire.Fixed64Type)
	w.ev = protowire.AppendFixed64(w.ev, math.Float64bits(v))
	return w.event(t, false)
}
