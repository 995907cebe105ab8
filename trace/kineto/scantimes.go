package kineto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Times is what ScanTimes reads of a trace.
type Times struct {
	// BaseTimeNs is baseTimeNanoseconds, or 0 when the trace has none.
	BaseTimeNs int64
	// Starts are the ts, in ns as Event.TsNs, of the events other than
	// metadata ("M") events, in file order; an event without a numeric ts
	// is left out.
	Starts []int64
}

// ScanTimes reads a trace's base and its events' starts from its JSON text
// (uncompressed, the object or the bare-array form), without decoding the
// rest: a cheap first pass, several times faster than Decode, for a reader
// that needs the times of a whole job before it decodes each trace (the
// combiner's shared base). It checks only that src is JSON with a
// traceEvents array of objects; of a trace that Decode refuses (a key
// twice, a value of the wrong type, times out of range) it returns what it
// finds, which means nothing.
func ScanTimes(src []byte) (Times, error) {
	if !json.Valid(src) {
		return Times{}, errors.New("kineto: scan times: not JSON")
	}
	spans, err := eventSpans(src)
	if err != nil {
		return Times{}, fmt.Errorf("kineto: scan times: %w", err)
	}
	var t Times
	if i := skipSpace(src, 0); src[i] == '{' {
		m := newMembers(src[i:])
		for {
			key, val, _, ok := m.next()
			if !ok {
				break
			}
			if string(key) == `"baseTimeNanoseconds"` {
				if v, _, ok := parseDecimal(string(val), 0); ok {
					t.BaseTimeNs = v // the last one, as for every key
				}
			}
		}
	}
	t.Starts = make([]int64, 0, len(spans))
	for _, sp := range spans {
		m := newMembers(src[sp[0]:sp[1]])
		var ts int64
		hasTs, meta := false, false
		for {
			key, val, _, ok := m.next()
			if !ok {
				break
			}
			switch string(key) {
			case `"ts"`:
				ts, _, hasTs = parseDecimal(string(val), 3)
			case `"ph"`:
				meta = string(val) == `"M"`
			}
		}
		if hasTs && !meta {
			t.Starts = append(t.Starts, ts)
		}
	}
	return t, nil
}
