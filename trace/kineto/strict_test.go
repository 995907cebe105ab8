package kineto

import (
	"fmt"
	"strings"
	"testing"
)

// TestKinetoDuplicateKeys (issue 30): a key that an object of the trace
// has twice, wherever the object is, is refused at the second key's byte,
// naming the key and the first one's byte. The last one used to win: a
// second baseTimeNanoseconds moved the trace by 1.7e18 ns, a second rank
// or distributedInfo put it on another node, while a second traceEvents
// was refused: now one rule holds for all.
func TestKinetoDuplicateKeys(t *testing.T) {
	ev := `{"ph": "X", "name": "k", "ts": 1, "dur": 2}`
	cases := []struct {
		name, in string
		key      string // the key's text, as in the input
		first    int    // the occurrence in the input of the first one, from 0
		second   int    // and of the second
		where    string
	}{
		{"reported: baseTimeNanoseconds", `{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [` + ev + `], "baseTimeNanoseconds": 0}`,
			`"baseTimeNanoseconds"`, 0, 1, "baseTimeNanoseconds"},
		{"reported: distributedInfo", `{"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [], "distributedInfo": {"rank": 1, "world_size": 2}}`,
			`"distributedInfo"`, 0, 1, "distributedInfo"},
		{"reported: rank", `{"distributedInfo": {"rank": 0, "world_size": 2, "rank": 1}, "traceEvents": []}`,
			`"rank"`, 0, 1, "distributedInfo.rank"},
		{"traceEvents", `{"traceEvents": [` + ev + `], "traceEvents": []}`,
			`"traceEvents"`, 0, 1, "traceEvents"},
		{"a key inside an event", `{"traceEvents": [` + ev + `, {"ph": "X", "name": "a", "ts": 5, "dur": 1, "ts": 9}]}`,
			`"ts"`, 1, 2, "traceEvents[1].ts"},
		{"an event's arg", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 5, "args": {"device": 0, "stream": 7, "device": 1}}]}`,
			`"device"`, 0, 1, "traceEvents[0].args.device"},
		{"deep in an arg", `{"traceEvents": [{"ph": "i", "name": "a", "ts": 5, "args": {"dims": [[1], {"a": 1, "b": {}, "a": 2}]}}]}`,
			`"a"`, 1, 2, "traceEvents[0].args.dims[1].a"},
		{"in the bare array", `[` + ev + `, {"ph": "M", "name": "m", "name": "n"}]`,
			`"name"`, 1, 2, "traceEvents[1].name"},
		{"a deviceProperties entry", `{"deviceProperties": [{"id": 0, "name": "GPU"}, {"id": 1, "id": 0}], "traceEvents": []}`,
			`"id"`, 1, 2, "deviceProperties[1].id"},
		{"a top-level key read past", `{"schemaVersion": 1, "traceEvents": [], "schemaVersion": 2}`,
			`"schemaVersion"`, 0, 1, "schemaVersion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decodeBoth(t, tc.in, fmt.Sprintf("read x.json: byte %d: %s: duplicate key (first at byte %d)",
				at(tc.in, tc.key, tc.second), tc.where, at(tc.in, tc.key, tc.first)))
		})
	}

	// A key is what it decodes to: an escape or invalid UTF-8 does not
	// make it another.
	escaped := `{"distributedInfo": {"rank": 0, "r\u0061nk": 1}, "traceEvents": []}`
	decodeBoth(t, escaped, fmt.Sprintf("read x.json: byte %d: distributedInfo.rank: duplicate key (first at byte %d)",
		strings.Index(escaped, `"r\u0061nk"`), strings.Index(escaped, `"rank"`)))
	invalid := "[{\"ph\": \"M\", \"name\": \"m\", \"args\": {\"\xff\": 1, \"\xfe\": 2}}]"
	decodeBoth(t, invalid, fmt.Sprintf("read x.json: byte %d: traceEvents[0].args.\ufffd: duplicate key (first at byte %d)",
		strings.Index(invalid, "\"\xfe"), strings.Index(invalid, "\"\xff")))

	// Kineto's own writer never repeats a key: the real traces, and the
	// same keys in different objects, are read.
	if _, err := Decode(strings.NewReader(`{"distributedInfo": {"rank": 0}, "deviceProperties": [{"id": 0}, {"id": 1}],
	  "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "args": {"name": "a", "o": {"name": 1}}}, {"ph": "M", "name": "a", "args": {"name": 2}}]}`), "x.json"); err != nil {
		t.Errorf("the same keys in different objects: %v", err)
	}
}

// TestKinetoEmptyEvent (issue 30): an event must say its phase, and have
// the members its phase needs: `{}` used to be read as an event (of no
// phase, no name, at time 0). The error is at the event's byte.
func TestKinetoEmptyEvent(t *testing.T) {
	cases := []struct{ name, event, err string }{
		{"reported: {}", `{}`, `want an event with "ph" (its phase, e.g. "X"), got none`},
		{"ph null", `{"ph": null, "name": "a", "ts": 1}`, `want an event with "ph" (its phase, e.g. "X"), got none`},
		{"ph empty", `{"ph": "", "name": "a", "ts": 1}`, `want an event with a phase in "ph" (e.g. "X"), got ""`},
		{"X without dur", `{"ph": "X", "name": "a", "ts": 1}`, `want "dur" (an event of phase "X" has ph, name, ts and dur), got none`},
		{"X without name and ts", `{"ph": "X", "dur": 1}`, `want "name" and "ts" (an event of phase "X" has ph, name, ts and dur), got none`},
		{"X with ts null", `{"ph": "X", "name": "a", "ts": null, "dur": 1}`, `want "ts" (an event of phase "X" has ph, name, ts and dur), got none`},
		{"instant without name", `{"ph": "i", "ts": 1}`, `want "name" (an event of phase "i" has ph, name and ts), got none`},
		{"metadata without name", `{"ph": "M", "pid": 1, "args": {"name": "x"}}`, `want "name" (an event of phase "M" has ph and name), got none`},
		{"flow without ts", `{"ph": "f", "id": 1, "name": "ac2g"}`, `want "ts" (an event of phase "f" has ph and ts), got none`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}}, ` + tc.event + `]}`
			decodeBoth(t, in, fmt.Sprintf("read x.json: byte %d: traceEvents[1]: %s", strings.Index(in, tc.event), tc.err))
		})
	}

	// What Kineto writes is enough: metadata without ts, flows and
	// instants with theirs, an unknown phase with ph and ts.
	ok := `[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
	  {"ph": "X", "name": "a", "ts": 1, "dur": 0}, {"ph": "s", "id": 1, "ts": 1}, {"ph": "f", "id": 1, "ts": 2, "bp": "e"},
	  {"ph": "i", "name": "b", "ts": 3, "s": "t"}, {"ph": "E", "ts": 4}, {"ph": "zz", "ts": 5}]`
	if tr, err := Decode(strings.NewReader(ok), "x.json"); err != nil || len(tr.Events) != 7 {
		t.Errorf("complete events: %v", err)
	}
}

// TestKinetoTopKeys (issue 30): the top-level object's keys, which the
// duplicate-key check keeps while the document streams, are at most
// MaxTopKeys; one more is refused at its byte, naming the limit.
func TestKinetoTopKeys(t *testing.T) {
	doc := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"traceEvents": []`)
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, `, "k%d": 0`, i)
		}
		b.WriteString("}")
		return b.String()
	}
	if _, err := Decode(strings.NewReader(doc(MaxTopKeys)), "x.json"); err != nil {
		t.Fatalf("%d keys: %v", MaxTopKeys, err)
	}
	in := doc(MaxTopKeys + 1)
	key := fmt.Sprintf("k%d", MaxTopKeys)
	decodeBoth(t, in, fmt.Sprintf("read x.json: byte %d: %s: one key more than the top-level object may have (%d, kineto.MaxTopKeys)",
		strings.Index(in, `"`+key+`"`), key, MaxTopKeys))
}
