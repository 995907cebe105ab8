package kineto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// fuzzSeeds are small traces in the shapes torch.profiler and the Kineto
// on-demand tracer write, and a few broken ones near them.
var fuzzSeeds = []string{
	// A trace with a base, distributedInfo, metadata, CPU ops, a collective
	// kernel on a labelled GPU, a flow and a memcpy.
	`{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85520809984}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
  "baseTimeNanoseconds": 1682725000000000000,
  "traceEvents": [
    {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "GPU 1"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 84, "args": {"name": "stream 84 \"nccl\""}},
    {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 4045, "tid": 4045, "ts": 898109008, "dur": 200.0},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 4045, "tid": "4045", "ts": 898109010.125, "dur": 3.5,
     "args": {"External id": 7, "Sequence number": 12, "Fwd thread id": 0, "Input Dims": [[2, 3], []], "Input type": ["float", ""], "Ev Idx": 3}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     "pid": 1, "tid": 84, "ts": 898109310.5, "dur": 30669.25,
     "args": {"stream": 84, "device": 1, "grid": [16, 1, 1], "hlo_op": "x", "correlation": 18446744073709551615, "est. achieved occupancy %": 0.148, "ok": true, "nothing": null}},
    {"ph": "s", "id": 18, "pid": 4045, "tid": 4045, "ts": 898109011, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "f", "id": 18, "pid": 1, "tid": 84, "ts": 898109310.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 898109100, "dur": 1.001,
     "args": {"device": 0, "bytes": 1024, "memory bandwidth (GB/s)": 1e-3}},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 4045, "tid": 4045, "ts": 898109020, "s": "t"}
  ],
  "traceName": "rank1.pt.trace.json"
}`,
	// The bare-array form, absolute epoch times in µs, string times.
	`[{"ph": "X", "cat": "Kernel", "name": "rcclKernel", "pid": "0", "tid": "stream 7", "ts": "1682725898109310.5", "dur": "2"},
  {"ph": "X", "name": "step", "pid": -0, "tid": 1, "ts": 1682725898109000, "dur": 1000}]`,
	// Escapes and unicode in names, keys and args.
	`{"traceEvents": [{"ph": "X", "name": "a\u00e9\"b\\", "cat": "c\u0000", "pid": 1, "tid": 1, "ts": 1.5e3, "dur": 0.0005,
  "args": {"k\u00e9y": "v\nw", "nested": {"a": [1, {"b": "\u2603"}]}}}], "baseTimeNanoseconds": null, "distributedInfo": null}`,
	// Empty and near-empty documents.
	`{"traceEvents": []}`,
	`[]`,
	`{"traceEvents": [{}], "baseTimeNanoseconds": "-4000000000000000000"}`,
	// Limits: the largest ts, negative durations, a long time base.
	`{"traceEvents": [{"ph": "X", "ts": 4000000000000000, "dur": -1}, {"ph": "X", "ts": -3999999999999999.9995}]}`,
	`{"baseTimeNanoseconds": 3999999999999999999, "traceEvents": [{"ph": "X", "ts": 0.0004, "dur": 1e-4}]}`,
	// Broken: a syntax error, a truncation, a wrong type, trailing data.
	`{"traceEvents": [{"ph": "X", "ts": 1,, "dur": 2}]}`,
	`{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}`,
	`{"traceEvents": [{"ph": "X", "ts": "abc"}]}`,
	`{"traceEvents": []} {}`,
	"{\"traceEvents\": [{\"name\": \"\xff\xfe\", \"args\": {\"a\": \"\xe2\"}}]}",
	// Duplicate keys (issue 30): refused wherever they are.
	`{"baseTimeNanoseconds": 1, "traceEvents": [], "baseTimeNanoseconds": 2}`,
	`{"distributedInfo": {"rank": 0, "r\u0061nk": 1}, "traceEvents": []}`,
	`[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "args": {"o": {"k": 1, "k": 2}}}]`,
}

// gzipBytes compresses b.
func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decompressedLen is the number of bytes a gzip reader yields from data
// before it stops (at the end or at an error).
func decompressedLen(data []byte) int64 {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, zr)
	return n
}

// withoutRaw returns a copy of evs with Raw cleared.
func withoutRaw(evs []kineto.Event) []kineto.Event {
	out := make([]kineto.Event, len(evs))
	for i, e := range evs {
		e.Raw = nil
		out[i] = e
	}
	return out
}

// checkDecodeError checks err, Decode's error for data: an *Error whose
// offset lies within the JSON text (the decompressed stream for gzip) and
// whose message names that offset.
func checkDecodeError(t *testing.T, data []byte, err error) {
	t.Helper()
	var e *kineto.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %q (%T) is not a *kineto.Error", err, err)
	}
	limit := int64(len(data))
	if e.Decompressed {
		limit = decompressedLen(data)
	}
	if e.Offset < 0 || e.Offset > limit {
		t.Fatalf("error %q: offset %d outside [0, %d] (decompressed: %v)", err, e.Offset, limit, e.Decompressed)
	}
	if e.Err != nil && !strings.Contains(err.Error(), fmt.Sprintf("byte %d: ", e.Offset)) {
		t.Fatalf("error %q does not name its offset, byte %d", err, e.Offset)
	}
}

// badString describes the first string field of m, at any depth, that is
// not valid UTF-8, or returns "".
func badString(m protoreflect.Message, path string) string {
	bad := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := path + "." + string(fd.Name())
		check := func(v protoreflect.Value, kind protoreflect.Kind, at string) {
			switch {
			case bad != "":
			case kind == protoreflect.StringKind && !utf8.ValidString(v.String()):
				bad = fmt.Sprintf("%s: string %q is not valid UTF-8", at, v.String())
			case kind == protoreflect.MessageKind:
				bad = badString(v.Message(), at)
			}
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				check(l.Get(i), fd.Kind(), fmt.Sprintf("%s[%d]", p, i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				check(mv, fd.MapValue().Kind(), fmt.Sprintf("%s[%v]", p, k.Interface()))
				return bad == ""
			})
		default:
			check(v, fd.Kind(), p)
		}
		return bad == ""
	})
	return bad
}

var xspaceChecker = xspace.NewChecker((&xplanepb.XSpace{}).ProtoReflect().Descriptor())

// checkXSpace converts tr and, when that succeeds, checks that the XSpace
// has valid strings, marshals, that xspace's reader takes the bytes back
// as the same message, that every plane carries tr's time base and that
// every event but the metadata ones became one XEvent.
func checkXSpace(t *testing.T, tr *kineto.Trace, what string) {
	t.Helper()
	space, err := kineto.ToXSpace(tr)
	if err != nil {
		return
	}
	b, err := proto.Marshal(space)
	if err != nil {
		t.Fatalf("%s: ToXSpace gave an XSpace that does not marshal: %v; %s", what, err, badString(space.ProtoReflect(), "XSpace"))
	}
	if bad := badString(space.ProtoReflect(), "XSpace"); bad != "" {
		t.Fatalf("%s: %s", what, bad)
	}
	if err := xspaceChecker.Check(b); err != nil {
		t.Fatalf("%s: xspace.Checker refuses the marshalled XSpace: %v", what, err)
	}
	back := &xplanepb.XSpace{}
	if err := xspace.Unmarshal(b, back); err != nil {
		t.Fatalf("%s: xspace.Unmarshal refuses the marshalled XSpace: %v", what, err)
	}
	if !proto.Equal(space, back) {
		t.Fatalf("%s: the XSpace does not read back equal", what)
	}
	base := tr.TimeBase()
	events := 0
	for _, p := range space.Planes {
		if got, ok := xspace.TimeBase(p); !ok || got != base {
			t.Fatalf("%s: plane %q: time base %d, %v; want %d", what, p.Name, got, ok, base)
		}
		for _, l := range p.Lines {
			events += len(l.Events)
		}
	}
	want := 0
	for _, e := range tr.Events {
		if e.Ph != "M" {
			want++
		}
	}
	if events != want {
		t.Fatalf("%s: %d XEvents for %d events other than metadata", what, events, want)
	}
}

// FuzzDecode (issue 18) decodes arbitrary bytes as a Kineto trace, plain or
// gzipped, with and without DecodeOptions.Raw. An error must be an *Error
// whose offset lies within the input and which its message names; both
// modes must agree; a decoded trace must pass Trace.Check; and ToXSpace
// must either refuse it or give an XSpace that marshals and that xspace's
// reader takes back as the same message.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add(gzipBytes(f, []byte(fuzzSeeds[0])))
	f.Add(gzipBytes(f, []byte(fuzzSeeds[9])))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := kineto.Decode(bytes.NewReader(data), "fuzz.json")
		raw, rawErr := kineto.DecodeWith(bytes.NewReader(data), "fuzz.json", kineto.DecodeOptions{Raw: true})
		if err != nil {
			checkDecodeError(t, data, err)
			if rawErr == nil || rawErr.Error() != err.Error() {
				t.Fatalf("Decode: %v; with Raw: %v", err, rawErr)
			}
			return
		}
		if rawErr != nil {
			t.Fatalf("Decode accepts the trace, with Raw: %v", rawErr)
		}
		if err := tr.Check(); err != nil {
			t.Fatalf("a decoded trace fails Check: %v", err)
		}
		if len(tr.Events) != len(raw.Events) || len(tr.Events) > 0 && !reflect.DeepEqual(tr.Events, withoutRaw(raw.Events)) {
			t.Fatalf("the events differ with Raw")
		}
		for i, e := range raw.Events {
			if e.Raw == nil {
				t.Fatalf("event %d has no Raw text", i)
			}
		}
		checkXSpace(t, tr, "without Raw")
		checkXSpace(t, raw, "with Raw")
	})
}

// FuzzDecodeDuplicateKeys (issue 30): whatever Decode accepts, the same
// document with one member of one of its objects written twice (the copy
// right after it) is refused, at the copy's key, as a duplicate key whose
// first appearance is the original's: one rule for every object of a
// trace, the top-level one, distributedInfo, events, args and whatever is
// nested in them.
func FuzzDecodeDuplicateKeys(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, pick uint16) {
		if _, err := kineto.Decode(bytes.NewReader(data), "fuzz.json"); err != nil || len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // refused already, or gzipped: the text is not data
		}
		objects := objectStarts(data)
		if len(objects) == 0 {
			return
		}
		start := objects[int(pick)%len(objects)]
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("no object at byte %d: %v %v", start, tok, err)
		}
		if !dec.More() {
			return // {}: no member to repeat
		}
		key := start + int(dec.InputOffset())
		for key < len(data) && strings.IndexByte(" \t\r\n", data[key]) >= 0 {
			key++
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			t.Fatal(err)
		}
		end := start + int(dec.InputOffset())
		dup := slices.Concat(data[:end], []byte(","), data[key:end], data[end:])
		_, err := kineto.Decode(bytes.NewReader(dup), "fuzz.json")
		want := fmt.Sprintf("byte %d: ", end+1)
		var e *kineto.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), want) ||
			e.Err.Error() != fmt.Sprintf("duplicate key (first at byte %d)", key) {
			t.Fatalf("member %q repeated at byte %d: got %v, want an error at %s duplicate key (first at byte %d)", data[key:end], end+1, err, want, key)
		}
	})
}

// objectStarts returns the offsets of the objects' '{' in data, JSON text.
func objectStarts(data []byte) []int {
	var out []int
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			out = append(out, i)
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return out
}
