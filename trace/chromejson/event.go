package chromejson

import "strconv"

// Event is one trace event, for writers that write each event as a whole
// object (not the combiner, which formats its events' common prefix once):
// its times are integers in the unit given to [AppendEvent], its args a
// JSON object formatted already.
type Event struct {
	Name, Cat, Ph string
	// Ts is the event's time; Dur its duration, written when HasDur.
	Ts, Dur int64
	HasDur  bool
	Pid     int64
	Tid     int64
	// ID is the id of an async or flow event; S an instant event's scope.
	ID, S string
	// Args is a JSON object (nil: the event has none).
	Args []byte
}

// AppendEvent appends e as one JSON object, its members in the order the
// Chrome trace format's documentation lists them: name, cat, ph, ts, dur,
// pid, tid, id, s, args, leaving out cat, id, s and args when empty and
// dur unless e.HasDur (the layout encoding/json gives a struct of those
// members with omitempty). ts and dur are µs, exact ([Trim]), from unit.
func AppendEvent(b []byte, e *Event, unit Unit) []byte {
	b = append(b, `{"name":`...)
	b = AppendString(b, e.Name)
	if e.Cat != "" {
		b = append(b, `,"cat":`...)
		b = AppendString(b, e.Cat)
	}
	b = append(b, `,"ph":`...)
	b = AppendString(b, e.Ph)
	b = append(b, `,"ts":`...)
	b = AppendMicros(b, e.Ts, unit, Trim)
	if e.HasDur {
		b = append(b, `,"dur":`...)
		b = AppendMicros(b, e.Dur, unit, Trim)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, e.Pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, e.Tid, 10)
	if e.ID != "" {
		b = append(b, `,"id":`...)
		b = AppendString(b, e.ID)
	}
	if e.S != "" {
		b = append(b, `,"s":`...)
		b = AppendString(b, e.S)
	}
	if len(e.Args) > 0 {
		b = append(b, `,"args":`...)
		b = append(b, e.Args...)
	}
	return append(b, '}')
}
