package xspace

import (
	"fmt"
	"math"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

// PlaneBuilder builds one XPlane deterministically: metadata ids are given
// in order of first use, lines and events stay in the order they were
// added. The zero value is not usable; call [NewPlaneBuilder].
type PlaneBuilder struct {
	plane    *xplanepb.XPlane
	eventIDs map[string]int64
	statIDs  map[string]int64
	lines    map[int64]*LineBuilder
}

// LineBuilder adds events to one line of a [PlaneBuilder].
type LineBuilder struct {
	b    *PlaneBuilder
	line *xplanepb.XLine
}

// NewPlaneBuilder starts an empty plane with the given id and name.
func NewPlaneBuilder(id int64, name string) *PlaneBuilder {
	return &PlaneBuilder{
		plane: &xplanepb.XPlane{
			Id:            id,
			Name:          name,
			EventMetadata: map[int64]*xplanepb.XEventMetadata{},
			StatMetadata:  map[int64]*xplanepb.XStatMetadata{},
		},
		eventIDs: map[string]int64{},
		statIDs:  map[string]int64{},
		lines:    map[int64]*LineBuilder{},
	}
}

// EventMetadata returns the id of the event metadata named name, adding it
// to the plane on first use; ids are 1, 2, 3, ... in order of first use.
func (b *PlaneBuilder) EventMetadata(name string) int64 {
	if id, ok := b.eventIDs[name]; ok {
		return id
	}
	id := int64(len(b.eventIDs) + 1)
	b.eventIDs[name] = id
	b.plane.EventMetadata[id] = &xplanepb.XEventMetadata{Id: id, Name: name}
	return id
}

// StatMetadata returns the id of the stat metadata named name, as
// [PlaneBuilder.EventMetadata] does for event metadata.
func (b *PlaneBuilder) StatMetadata(name string) int64 {
	if id, ok := b.statIDs[name]; ok {
		return id
	}
	id := int64(len(b.statIDs) + 1)
	b.statIDs[name] = id
	b.plane.StatMetadata[id] = &xplanepb.XStatMetadata{Id: id, Name: name}
	return id
}

// Line returns the line with the given id, adding it to the plane, with name
// and timestampNs (the time its events' offsets count from), on first use.
// A later call with the same id returns the same line and panics if name or
// timestampNs differ from the first call's: that is a bug of the caller.
func (b *PlaneBuilder) Line(id int64, name string, timestampNs int64) *LineBuilder {
	if lb, ok := b.lines[id]; ok {
		if lb.line.Name != name || lb.line.TimestampNs != timestampNs {
			panic(fmt.Sprintf("xspace: line %d of plane %q is %q at %d ns, not %q at %d ns",
				id, b.plane.Name, lb.line.Name, lb.line.TimestampNs, name, timestampNs))
		}
		return lb
	}
	lb := &LineBuilder{b: b, line: &xplanepb.XLine{Id: id, Name: name, TimestampNs: timestampNs}}
	b.lines[id] = lb
	b.plane.Lines = append(b.plane.Lines, lb.line)
	return lb
}

// AddStat adds a stat to the plane itself.
func (b *PlaneBuilder) AddStat(s Stat) {
	b.plane.Stats = append(b.plane.Stats, s.xstat(b.StatMetadata(s.name)))
}

// Plane returns the plane built so far. It is the builder's own: later
// calls to the builder change it.
func (b *PlaneBuilder) Plane() *xplanepb.XPlane { return b.plane }

// Add appends an event of the metadata named metaName that starts at
// startNs (on the same clock as the line's timestampNs) and lasts durNs,
// with stats. Its offset_ps is (startNs - timestampNs)*1000, relative to the
// line's timestamp_ns as the XSpace format wants, so startNs must not be
// before the line's timestampNs; the line's duration_ps grows to the end of
// its last-ending event. Add panics when startNs is before timestampNs, when
// durNs is negative, or when the offset or end in ps overflows an int64:
// those are bugs of the caller.
func (l *LineBuilder) Add(metaName string, startNs, durNs int64, stats ...Stat) {
	off := startNs - l.line.TimestampNs
	if off < 0 || durNs < 0 || off > math.MaxInt64/1000-durNs {
		panic(fmt.Sprintf("xspace: event %q on line %q: start %d ns, duration %d ns, line timestamp %d ns: offset out of range",
			metaName, l.line.Name, startNs, durNs, l.line.TimestampNs))
	}
	ev := &xplanepb.XEvent{
		MetadataId: l.b.EventMetadata(metaName),
		Data:       &xplanepb.XEvent_OffsetPs{OffsetPs: off * 1000},
		DurationPs: durNs * 1000,
	}
	for _, s := range stats {
		ev.Stats = append(ev.Stats, s.xstat(l.b.StatMetadata(s.name)))
	}
	l.line.Events = append(l.line.Events, ev)
	if end := (off + durNs) * 1000; end > l.line.DurationPs {
		l.line.DurationPs = end
	}
}
