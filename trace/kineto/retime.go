package kineto

import (
	"fmt"
	"io"
	"strconv"
)

// Retime writes a trace with new event times and everything else kept byte
// for byte: the top-level members, every event's other members (names,
// args, ids, flow ids and bindings), their order and their spacing. src is
// the trace's JSON text (uncompressed) and t the trace decoded from it with
// every event kept (no DecodeOptions.Keep), so that t.Events[i] is the i-th
// element of traceEvents. fn gives event i its new ts and dur in ns, on
// the trace's own base (Unix time − BaseTimeNs, as Event.TsNs); a member
// "dur" is rewritten only where the event has one. Times are written in
// microseconds with up to three decimals, so ns survive exactly.
//
// Retime checks that src holds as many events as t: a mismatch (src and t
// not from one another) is an error, before anything is written.
func Retime(src []byte, t *Trace, w io.Writer, fn func(i int, e *Event) (ts, dur int64)) error {
	spans, err := eventSpans(src)
	if err != nil {
		return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
	}
	if len(spans) != len(t.Events) {
		return fmt.Errorf("kineto: retime %s: its text holds %d events but %d were decoded (was an event filter used?)", t.Name, len(spans), len(t.Events))
	}
	var buf []byte
	last := 0
	for i, sp := range spans {
		ts, dur := fn(i, &t.Events[i])
		m := newMembers(src[sp[0]:sp[1]])
		for {
			key, val, off, ok := m.next()
			if !ok {
				break
			}
			var v int64
			switch string(key) {
			case `"ts"`:
				v = ts
			case `"dur"`:
				v = dur
			default:
				continue
			}
			at := sp[0] + off
			buf = append(buf, src[last:at]...)
			buf = appendMicros(buf, v)
			last = at + len(val)
		}
		if len(buf) >= 1<<20 {
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, src[last:]...)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
	}
	return nil
}

// eventSpans returns the [start, end) offsets in src of the elements of
// its traceEvents array (or of the top-level array, in the bare form).
// src is JSON the decoder has checked.
func eventSpans(src []byte) ([][2]int, error) {
	i := skipSpace(src, 0)
	if i >= len(src) {
		return nil, fmt.Errorf("no JSON value")
	}
	arr := -1
	switch src[i] {
	case '[':
		arr = i
	case '{':
		m := newMembers(src[i:])
		for {
			key, _, off, ok := m.next()
			if !ok {
				break
			}
			if string(key) == `"traceEvents"` {
				arr = i + off // the last one wins, as for every key
			}
		}
	}
	if arr < 0 || src[arr] != '[' {
		return nil, fmt.Errorf("no traceEvents array")
	}
	var spans [][2]int
	j := skipSpace(src, arr+1)
	for j < len(src) && src[j] != ']' {
		if src[j] == ',' {
			j = skipSpace(src, j+1)
			continue
		}
		end := valueEnd(src, j)
		if src[j] == '{' {
			spans = append(spans, [2]int{j, end})
		} else {
			return nil, fmt.Errorf("traceEvents[%d] is not an object", len(spans))
		}
		j = skipSpace(src, end)
	}
	return spans, nil
}

// appendMicros appends ns as microseconds: an integer when it is whole,
// else with three decimals.
func appendMicros(b []byte, ns int64) []byte {
	neg := ns < 0
	u := uint64(ns)
	if neg {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/1000, 10)
	if f := u % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return b
}
