package kineto

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// at returns the byte offset of the n-th (from 0) occurrence of sub in s.
func at(s, sub string, n int) int {
	off := 0
	for range n {
		off += strings.Index(s[off:], sub) + len(sub)
	}
	return off + strings.Index(s[off:], sub)
}

// decodeBoth decodes in plain and gzipped and checks that both fail with
// want (at the same, decompressed, offset for gzip) as an *Error.
func decodeBoth(t *testing.T, in, want string) {
	t.Helper()
	tr, err := Decode(strings.NewReader(in), "x.json")
	if err == nil {
		t.Fatalf("no error (base %d), want %s", tr.BaseTimeNs, want)
	}
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Offset < 0 || e.Offset > int64(len(in)) {
		t.Errorf("error %#v is not an *Error with an offset in [0, %d]", err, len(in))
	}
	_, err = Decode(bytes.NewReader(gzipped(t, []byte(in))), "x.json")
	if wantGz := strings.Replace(want, ": byte ", ": decompressed byte ", 1); err == nil || err.Error() != wantGz {
		t.Errorf("gzipped: error\n got %v\nwant %s", err, wantGz)
	}
}

// TestDecodeTimesOutOfRange (issue 18 item 3a): a time beyond MaxTimeNs,
// alone or summed (ts + dur, baseTimeNanoseconds + ts, + dur), wherever
// baseTimeNanoseconds is in the document, is an error naming the field,
// the value and the limit, at the value's offset; it used to wrap around
// (baseTimeNanoseconds 9e18 + ts 9e15 µs gave a negative time base).
func TestDecodeTimesOutOfRange(t *testing.T) {
	const limit = "4000000000000000000 ns"
	baseLast := `{"traceEvents": [{"ph": "X", "ts": 9e15, "dur": 1}], "baseTimeNanoseconds": 9000000000000000000}`
	baseFirst := `{"baseTimeNanoseconds": 9000000000000000000, "traceEvents": [{"ph": "X", "ts": 9e15, "dur": 1}]}`
	sumLate := `{"traceEvents": [{"ph": "E", "ts": 1}, {"ph": "E", "ts": 1000000000000000}, {"ph": "E", "ts": 2}], "baseTimeNanoseconds": 3500000000000000000}`
	sumEarly := `{"baseTimeNanoseconds": -3500000000000000000, "traceEvents": [{"ph": "E", "ts": 1}, {"ph": "E", "ts": -1000000000000000, "dur": 5}]}`
	endLate := `{"traceEvents": [{"ph": "E", "ts": 1}, {"ph": "E", "ts": 10, "dur": 3999999999999990}], "baseTimeNanoseconds": 1000000}`
	durString := `{"traceEvents": [{"ph": "E", "ts": 1, "dur": "-4000000000000000.001"}]}`
	sumEnd := `{"traceEvents": [{"ph": "E", "ts": 3000000000000000, "dur": 1000000000000000.001}]}`
	cases := []struct{ name, in, err string }{
		{"reported: base 9e18 after ts 9e15 µs", baseLast, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[0].ts: 9e15 µs is out of range (|ts| ≤ 4000000000000000 µs)`, at(baseLast, "9e15", 0))},
		{"reported: base 9e18 before ts 9e15 µs", baseFirst,
			`read x.json: byte 24: baseTimeNanoseconds: 9000000000000000000 ns is out of range (|baseTimeNanoseconds| ≤ ` + limit + `)`},
		{"base beyond int64", `{"baseTimeNanoseconds": 1e30, "traceEvents": []}`,
			`read x.json: byte 24: baseTimeNanoseconds: 1e30 ns is out of range (|baseTimeNanoseconds| ≤ ` + limit + `)`},
		{"base a string", `{"baseTimeNanoseconds": "-4000000000000000001", "traceEvents": []}`,
			`read x.json: byte 24: baseTimeNanoseconds: "-4000000000000000001" ns is out of range (|baseTimeNanoseconds| ≤ ` + limit + `)`},
		{"ts beyond int64", `{"traceEvents": [{"ts": 1e16}]}`,
			`read x.json: byte 24: traceEvents[0].ts: 1e16 µs is out of range (|ts| ≤ 4000000000000000 µs)`},
		{"dur a string", durString, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[0].dur: "-4000000000000000.001" µs is out of range (|dur| ≤ 4000000000000000 µs)`, at(durString, `"-4`, 0))},
		{"ts + dur", sumEnd, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[0].dur: ts + dur = 3000000000000000000 + 1000000000000000001 ns is out of range (|ts + dur| ≤ `+limit+`)`,
			at(sumEnd, "1000000000000000.001", 0))},
		{"base + ts, base last", sumLate, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[1].ts: baseTimeNanoseconds + ts = 3500000000000000000 + 1000000000000000000 ns is out of range (|baseTimeNanoseconds + ts| ≤ `+limit+`)`,
			at(sumLate, "1000000000000000", 0))},
		{"base + ts, negative", sumEarly, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[1].ts: baseTimeNanoseconds + ts = -3500000000000000000 + -1000000000000000000 ns is out of range (|baseTimeNanoseconds + ts| ≤ `+limit+`)`,
			at(sumEarly, "-1000000000000000", 0))},
		{"base + ts + dur", endLate, fmt.Sprintf(
			`read x.json: byte %d: traceEvents[1].dur: baseTimeNanoseconds + ts + dur = 1000000 + 10000 + 3999999999999990000 ns is out of range (|baseTimeNanoseconds + ts + dur| ≤ `+limit+`)`,
			at(endLate, "3999999999999990", 0))},
		{"rank beyond int64", `{"distributedInfo": {"rank": 1e19}, "traceEvents": []}`,
			`read x.json: byte 29: distributedInfo.rank: 1e19 is out of the int64 range`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { decodeBoth(t, tc.in, tc.err) })
	}

	// A dropped event is checked all the same.
	_, err := DecodeFilter(strings.NewReader(sumLate), "x.json", func(Event) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "traceEvents[1].ts: baseTimeNanoseconds + ts") {
		t.Errorf("filtered: got %v, want the error of traceEvents[1]", err)
	}

	// At the limits, everything is read and adds up.
	edge := `{"baseTimeNanoseconds": 2000000000000000000, "traceEvents": [{"ph": "E", "ts": 1000000000000000, "dur": 1000000000000000}, {"ph": "E", "ts": -4000000000000000}]}`
	tr, err := Decode(strings.NewReader(edge), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.UnixNs(tr.Events[0].EndNs()); got != MaxTimeNs {
		t.Errorf("end at the limit: %d, want %d", got, int64(MaxTimeNs))
	}
	if err := tr.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestTraceCheck (issue 18 item 3a): a Trace built beyond the limits is
// refused by Check and ToXSpace, naming the field, the value and the
// limit; its UnixNs and EndNs saturate, and TimeBase does not wrap around.
func TestTraceCheck(t *testing.T) {
	ev := func(ts, dur int64) []Event { return []Event{{Name: "k", Ph: "X", TsNs: ts, DurNs: dur}} }
	cases := []struct {
		name string
		tr   Trace
		err  string
	}{
		{"reported: base 9e18 + ts 9e18", Trace{Name: "t.json", BaseTimeNs: 9e18, Events: ev(9e18, 0)},
			`kineto: t.json: baseTimeNanoseconds: 9000000000000000000 ns is out of range (|baseTimeNanoseconds| ≤ 4000000000000000000 ns)`},
		{"ts", Trace{Name: "t.json", Events: ev(math.MinInt64, 0)},
			`kineto: t.json: event 0 ("k"): ts: -9223372036854775808 ns is out of range (|ts| ≤ 4000000000000000000 ns)`},
		{"dur", Trace{Name: "t.json", Events: ev(0, math.MaxInt64)},
			`kineto: t.json: event 0 ("k"): dur: 9223372036854775807 ns is out of range (|dur| ≤ 4000000000000000000 ns)`},
		{"ts + dur", Trace{Name: "t.json", Events: ev(4e18, 4e18)},
			`kineto: t.json: event 0 ("k"): dur: ts + dur = 4000000000000000000 + 4000000000000000000 ns is out of range (|ts + dur| ≤ 4000000000000000000 ns)`},
		{"base + ts", Trace{Name: "t.json", BaseTimeNs: -4e18, Events: ev(-1, 0)},
			`kineto: t.json: event 0 ("k"): ts: baseTimeNanoseconds + ts = -4000000000000000000 + -1 ns is out of range (|baseTimeNanoseconds + ts| ≤ 4000000000000000000 ns)`},
		{"base + ts + dur", Trace{Name: "t.json", BaseTimeNs: 3e18, Events: ev(5e17, 5e17+1)},
			`kineto: t.json: event 0 ("k"): dur: baseTimeNanoseconds + ts + dur = 3000000000000000000 + 500000000000000000 + 500000000000000001 ns is out of range (|baseTimeNanoseconds + ts + dur| ≤ 4000000000000000000 ns)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.tr.Check(); err == nil || err.Error() != tc.err {
				t.Errorf("Check:\n got %v\nwant %s", err, tc.err)
			}
			if _, err := ToXSpace(&tc.tr); err == nil || err.Error() != tc.err {
				t.Errorf("ToXSpace:\n got %v\nwant %s", err, tc.err)
			}
		})
	}

	big := Trace{BaseTimeNs: 9e18, Events: ev(9e18, 0)}
	if got := big.UnixNs(9e18); got != math.MaxInt64 {
		t.Errorf("UnixNs(9e18) with base 9e18 = %d, want it saturated at %d", got, int64(math.MaxInt64))
	}
	if got := (&Event{TsNs: math.MinInt64, DurNs: -1}).EndNs(); got != math.MinInt64 {
		t.Errorf("EndNs = %d, want it saturated at %d", got, int64(math.MinInt64))
	}
	if got := big.TimeBase(); got <= 0 {
		t.Errorf("TimeBase of base 9e18 + ts 9e18 = %d, want it positive", got)
	}
	low := Trace{Events: ev(math.MinInt64, 0)}
	if got := low.TimeBase(); got > math.MinInt64+1e9 {
		t.Errorf("TimeBase of ts MinInt64 = %d, want it within a second of it", got)
	}
}

// TestErrorOffsets (issue 18 item 3b): an error's byte offset is where the
// offending token starts, whatever its text: invalid UTF-8 and escapes in a
// string used to move it by the difference with encoding/json's rendering
// (input "\xe2" quoted gave a negative offset).
func TestErrorOffsets(t *testing.T) {
	cases := []struct {
		name, in string
		off      int
		rest     string
	}{
		{"reported: a string of invalid UTF-8", `"` + "\xe2" + `"`, 0, `want a JSON object or array, got "` + "\ufffd" + `"`},
		{"invalid UTF-8, many bytes", ` "` + strings.Repeat("\xe2", 9) + `"`, 1, `want a JSON object or array, got "` + strings.Repeat("\ufffd", 9) + `"`},
		{"escapes encoding/json would not write", `"\u0061\u00e9"`, 0, `want a JSON object or array, got "aé"`},
		{"traceEvents of invalid UTF-8", `{"traceEvents": "` + "\xff\xfe" + `"}`, 16, `traceEvents: want an array, got "` + "\ufffd\ufffd" + `"`},
		{"traceEvents an escaped string", `{"traceEvents" :` + "\n\t" + ` "\/\/"}`, 19, `traceEvents: want an array, got "//"`},
		{"duplicate key with an escape", `{"traceEvents": [], "traceEv\u0065nts": []}`, 20, `traceEvents: duplicate key (first at byte 1)`},
		{"data after the top-level value", `{"traceEvents": []}` + " \n " + `"` + "\xe2\xe2" + `"`, 22, `unexpected data after the top-level value`},
		{"bare invalid byte", "\xe2", 0, `invalid character 'â' looking for beginning of value`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decodeBoth(t, tc.in, fmt.Sprintf("read x.json: byte %d: %s", tc.off, tc.rest))
		})
	}

	// Invalid UTF-8 anywhere in a trace: when it is an error, its offset is
	// inside the input.
	const good = `{"traceEvents": [{"ph": "X", "name": "n", "ts": 1, "args": {"a": "b"}}], "k": "v"}`
	for i := range len(good) + 1 {
		for _, bad := range []string{"\xe2", `"` + "\xe2\x82" + `"`, `"\u00e9"`} {
			in := good[:i] + bad + good[i:]
			_, err := Decode(strings.NewReader(in), "x.json")
			var e *Error
			if errors.As(err, &e) && (e.Offset < 0 || e.Offset > int64(len(in))) {
				t.Errorf("%q: offset %d outside [0, %d]: %v", in, e.Offset, len(in), err)
			}
		}
	}
}

// manyDevices is a trace of n GPUs, each with its kernel (its pid is its
// device), in decreasing device order, and a CPU op.
func manyDevices(n int) *Trace {
	tr := &Trace{Name: "many.json", Rank: -1, BaseTimeNs: 1_700_000_000_000_000_000}
	tr.Events = append(tr.Events, Event{Ph: "X", Cat: "cpu_op", Name: "op", Pid: "1", Tid: "1", TsNs: 5, DurNs: 1})
	for d := n - 1; d >= 0; d-- {
		id := strconv.Itoa(d)
		tr.Events = append(tr.Events, Event{Ph: "X", Cat: "kernel", Name: "k" + id, Pid: id, Tid: "7", TsNs: int64(d), DurNs: 2})
	}
	return tr
}

// TestConvertManyDevices (issue 18 item 3c): a trace of 20,000 GPUs
// converts into the host plane and one plane per GPU, in device order, each
// with its kernel; finding an event's plane compares one plane, whatever
// the number of planes (it used to scan them all: quadratic, 1.45 s).
func TestConvertManyDevices(t *testing.T) {
	const n = 20_000
	tr := manyDevices(n)
	c := newConverter(tr)
	space, err := c.convert()
	if err != nil {
		t.Fatal(err)
	}
	if len(space.Planes) != n+1 {
		t.Fatalf("%d planes, want %d", len(space.Planes), n+1)
	}
	if p := space.Planes[0]; p.Name != "/host:CPU" || len(p.Lines) != 1 || len(p.Lines[0].Events) != 1 {
		t.Errorf("plane 0: %s with %d lines, want /host:CPU with the op", p.Name, len(p.Lines))
	}
	for d := range n {
		p := space.Planes[d+1]
		if want := "/device:GPU:" + strconv.Itoa(d); p.Name != want || p.Id != int64(d+1) {
			t.Fatalf("plane %d: %s (id %d), want %s (id %d)", d+1, p.Name, p.Id, want, d+1)
		}
		if len(p.Lines) != 1 || len(p.Lines[0].Events) != 1 || p.EventMetadata[p.Lines[0].Events[0].MetadataId].Name != "k"+strconv.Itoa(d) {
			t.Fatalf("plane %s does not hold just its kernel", p.Name)
		}
	}
	// One lookup for the host plane, one per event; a scan would compare
	// about n²/2 planes.
	if want := 1 + len(tr.Events); c.lookups > want {
		t.Errorf("plane lookups compared %d planes for %d lookups: not one each", c.lookups, want)
	}
}

// BenchmarkConvertManyDevices converts a trace of 20,000 GPUs, one kernel
// each; ns/device should not grow with the number of devices.
func BenchmarkConvertManyDevices(b *testing.B) {
	const n = 20_000
	tr := manyDevices(n)
	for b.Loop() {
		if _, err := ToXSpace(tr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/device")
}
