package kineto

import (
	"fmt"
	"io"
	"strconv"

	"github.com/klauspost/compress/gzip"

	"github.com/chronosync/chronosync/trace/chromejson"
)

// The writer of simulated traces: the harness's traced runs write each
// node's trace as torch.profiler (Kineto) writes one per rank, gzipped
// Chrome JSON with Kineto's layout (its header, each event's members in
// Kineto's order and white space), so that [Read] and the tools that read
// real traces (HTA, Perfetto) take it for one. Times are exact: ts and dur
// in µs with three decimals, ts counted from baseTimeNanoseconds, the
// trace's earliest time rounded down to the whole second. The same events
// give the same bytes.

// WriteEvent is one event of a trace to write: ts and dur in ns on the
// host clock (dur for ph X only), Flow the id of a flow (ph s, f).
type WriteEvent struct {
	Ph, Cat, Name string
	Pid, Tid      int64
	Ts, Dur, Flow int64
	Args          []Arg
}

// Arg is one arg of a [WriteEvent]: the string Str when Quoted, else the
// integer Num.
type Arg struct {
	Key, Str string
	Num      int64
	Quoted   bool
}

// IntArg is the integer arg k: v.
func IntArg(k string, v int64) Arg { return Arg{Key: k, Num: v} }

// StrArg is the string arg k: v.
func StrArg(k, v string) Arg { return Arg{Key: k, Str: v, Quoted: true} }

// Add appends args to e's.
func (e *WriteEvent) Add(a ...Arg) { e.Args = append(e.Args, a...) }

// Header is what a written trace says of its job besides its events.
type Header struct {
	// Name is the traceName, the file's base name.
	Name string
	// Rank and WorldSize are distributedInfo's rank and world_size.
	Rank, WorldSize int
}

// Metadata returns the metadata events Kineto writes for the host process
// host (and its launching thread, tid host) and for GPU 0 (pid 0) and its
// streams, at the profiler's start.
func Metadata(host int64, streams int, start int64) []WriteEvent {
	m := func(name string, pid, tid int64, arg Arg) WriteEvent {
		return WriteEvent{Ph: "M", Name: name, Pid: pid, Tid: tid, Ts: start, Args: []Arg{arg}}
	}
	out := []WriteEvent{
		m("process_name", host, 0, StrArg("name", "python")),
		m("process_labels", host, 0, StrArg("labels", "CPU")),
		m("process_sort_index", host, 0, IntArg("sort_index", host)),
		m("process_name", 0, 0, StrArg("name", "python")),
		m("process_labels", 0, 0, StrArg("labels", "GPU 0")),
		m("process_sort_index", 0, 0, IntArg("sort_index", 5000000)),
		m("thread_name", host, host, StrArg("name", fmt.Sprintf("thread %d (python)", host))),
		m("thread_sort_index", host, host, IntArg("sort_index", host)),
	}
	for s := range int64(streams) {
		out = append(out, m("thread_name", 0, s, StrArg("name", fmt.Sprintf("stream %d", s))),
			m("thread_sort_index", 0, s, IntArg("sort_index", s)))
	}
	return out
}

// WriteGzip writes the trace of evs (not empty), gzipped, to w.
func WriteGzip(w io.Writer, h Header, evs []WriteEvent) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(Marshal(h, evs)); err != nil {
		return fmt.Errorf("kineto trace %s: %w", h.Name, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("kineto trace %s: %w", h.Name, err)
	}
	return nil
}

// Marshal returns the JSON text of the trace of evs (not empty) as Kineto
// lays it out, its base time the earliest ts rounded down to the second.
func Marshal(h Header, evs []WriteEvent) []byte {
	base := evs[0].Ts
	for _, e := range evs {
		base = min(base, e.Ts)
	}
	base = FloorSecond(base)
	b := []byte(`{
  "schemaVersion": 1,
  "deviceProperties": [
    {
    "id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
    "computeMajor": 9, "computeMinor": 4,
    "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536, "warpSize": 64,
    "sharedMemPerBlock": 65536, "numSms": 304
    }
  ],
`)
	b = fmt.Appendf(b, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n  \"traceEvents\": [", h.Rank, h.WorldSize)
	for i := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEvent(b, &evs[i], base)
	}
	b = append(b, "\n  ],\n  \"traceName\": "...)
	b = chromejson.AppendString(b, h.Name)
	return fmt.Appendf(b, ",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %d\n}\n", base)
}

// FloorSecond rounds ns down to the whole second.
func FloorSecond(ns int64) int64 {
	s := ns / 1e9
	if ns%1e9 < 0 {
		s--
	}
	return s * 1e9
}

// appendEvent appends one event, its members in Kineto's order.
func appendEvent(b []byte, e *WriteEvent, base int64) []byte {
	b = append(b, "\n  {\n    "...)
	switch e.Ph {
	case "M":
		b = append(b, `"name": `...)
		b = chromejson.AppendString(b, e.Name)
		b = append(b, `, "ph": "M", "ts": `...)
		b = fixedMicros(b, e.Ts-base)
		b = fmt.Appendf(b, `, "pid": %d, "tid": %d`, e.Pid, e.Tid)
	case "s", "f":
		b = fmt.Appendf(b, `"ph": %q, "id": %d, "pid": %d, "tid": %d, "ts": `, e.Ph, e.Flow, e.Pid, e.Tid)
		b = fixedMicros(b, e.Ts-base)
		b = append(b, `, "cat": "ac2g", "name": "ac2g", "bp": "e"`...)
	default:
		b = append(b, `"ph": "X", "cat": `...)
		b = chromejson.AppendString(b, e.Cat)
		b = append(b, `, "name": `...)
		b = chromejson.AppendString(b, e.Name)
		b = fmt.Appendf(b, `, "pid": %d, "tid": %d,`+"\n    "+`"ts": `, e.Pid, e.Tid)
		b = fixedMicros(b, e.Ts-base)
		b = append(b, `, "dur": `...)
		b = fixedMicros(b, e.Dur)
	}
	if len(e.Args) > 0 {
		b = append(b, ",\n    \"args\": {\n      "...)
		for i, a := range e.Args {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = chromejson.AppendString(b, a.Key)
			b = append(b, ": "...)
			if a.Quoted {
				b = chromejson.AppendString(b, a.Str)
			} else {
				b = strconv.AppendInt(b, a.Num, 10)
			}
		}
		b = append(b, "\n    }"...)
	}
	return append(b, "\n  }"...)
}

// fixedMicros appends ns as Kineto writes times: µs with three decimals.
func fixedMicros(b []byte, ns int64) []byte {
	return chromejson.AppendMicros(b, ns, chromejson.Nanoseconds, chromejson.Fixed)
}
