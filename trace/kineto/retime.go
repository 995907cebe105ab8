package kineto

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/trace/chromejson"
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
	return RetimeWith(src, t, w, fn, RetimeOptions{})
}

// RetimeOptions are Retime's choices beyond the event times.
type RetimeOptions struct {
	// Top sets top-level members: a member of the trace's top-level object
	// with the key is given the value (the last such member, when the key
	// recurs, as the decoder reads the last); a key the trace lacks is
	// added at the end of the object. A bare-array trace is written as an
	// object, {"traceEvents": [...]} followed by the members. In order; a
	// key given twice is an error.
	Top []Member
}

// Member is a top-level member of a trace.
type Member struct {
	// Key is the member's key, plain ASCII (it is quoted as Go quotes it).
	Key string
	// Value is the member's value as JSON text, which the caller checks.
	Value []byte
}

// BaseMember is the member that sets a trace's baseTimeNanoseconds.
func BaseMember(ns int64) Member {
	return Member{Key: "baseTimeNanoseconds", Value: strconv.AppendInt(nil, ns, 10)}
}

// RetimeWith is Retime with options: see RetimeOptions. With a base
// member in o.Top (BaseMember), fn's times are on that base.
func RetimeWith(src []byte, t *Trace, w io.Writer, fn func(i int, e *Event) (ts, dur int64), o RetimeOptions) error {
	spans, err := eventSpans(src)
	if err != nil {
		return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
	}
	if len(spans) != len(t.Events) {
		return fmt.Errorf("kineto: retime %s: its text holds %d events but %d were decoded (was an event filter used?)", t.Name, len(spans), len(t.Events))
	}
	edits, tail, err := topEdits(src, o.Top)
	if err != nil {
		return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
	}
	var buf []byte
	last := 0
	// flush writes src up to at (with the edits of the top-level object
	// that lie before it) into buf.
	flush := func(at int) {
		for len(edits) > 0 && edits[0].at < at {
			e := edits[0]
			buf = append(buf, src[last:e.at]...)
			buf = append(buf, e.text...)
			last = e.at + e.n
			edits = edits[1:]
		}
		buf = append(buf, src[last:at]...)
		last = at
	}
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
			flush(at)
			buf = chromejson.AppendMicros(buf, v, chromejson.Nanoseconds, chromejson.FixedOrWhole)
			last = at + len(val)
		}
		if len(buf) >= 1<<20 {
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
			}
			buf = buf[:0]
		}
	}
	flush(len(src))
	buf = append(buf, tail...)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("kineto: retime %s: %w", t.Name, err)
	}
	return nil
}

// An edit replaces src[at:at+n] with text.
type edit struct {
	at, n int
	text  []byte
}

// topEdits returns the edits of src's top-level object that set the
// members top (in the order of src), and what is appended after the
// (edited) src. For a bare array, the first edit opens an object around
// it and the tail closes it.
func topEdits(src []byte, top []Member) ([]edit, []byte, error) {
	if len(top) == 0 {
		return nil, nil, nil
	}
	seen := map[string]bool{}
	for _, m := range top {
		if seen[m.Key] {
			return nil, nil, fmt.Errorf("top-level member %q set twice", m.Key)
		}
		seen[m.Key] = true
	}
	i := skipSpace(src, 0)
	var edits []edit
	var added []byte
	appendMember := func(m Member) {
		added = append(added, ", "...)
		added = strconv.AppendQuote(added, m.Key)
		added = append(added, ": "...)
		added = append(added, m.Value...)
	}
	if src[i] == '[' {
		end := valueEnd(src, i)
		edits = append(edits, edit{at: i, text: []byte(`{"traceEvents": `)})
		for _, m := range top {
			appendMember(m)
		}
		added = append(added, '}')
		if end < len(src) {
			edits = append(edits, edit{at: end, text: added})
			return edits, nil, nil
		}
		return edits, added, nil
	}
	// The last member of each key wins, as for the decoder.
	at := map[string]edit{}
	m := newMembers(src[i:])
	lastEnd := -1 // just past the last member's value
	for {
		key, val, off, ok := m.next()
		if !ok {
			break
		}
		lastEnd = i + off + len(val)
		k, err := strconv.Unquote(string(key))
		if err != nil || !seen[k] {
			continue
		}
		at[k] = edit{at: i + off, n: len(val)}
	}
	for _, mb := range top {
		e, ok := at[mb.Key]
		if !ok {
			appendMember(mb)
			continue
		}
		e.text = mb.Value
		edits = append(edits, e)
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	if len(added) > 0 {
		if lastEnd < 0 { // an empty object: no comma before the first member
			lastEnd, added = valueEnd(src, i)-1, added[2:]
		}
		edits = append(edits, edit{at: lastEnd, text: added})
		slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	}
	return edits, nil, nil
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
