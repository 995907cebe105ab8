// Package kineto reads PyTorch profiler (Kineto) traces: Chrome trace-event
// JSON, plain or gzipped, as torch.profiler's export_chrome_trace and the
// Kineto on-demand tracer write them; and it writes the simulator's in
// the same layout.
//
// A trace is a top-level object with a "traceEvents" array and other keys
// (schemaVersion, deviceProperties, distributedInfo, baseTimeNanoseconds,
// ...); the bare-array form of the Chrome format (just the events) is read
// too. No object may have a key twice, and every event has its phase ("ph")
// and what its phase needs (see [Decode]). Events keep the fields a timeline
// needs: ph, name, cat, pid, tid, ts, dur and args. Kineto writes ts and dur
// in microseconds with a fractional part; they are converted to integer
// nanoseconds from the number's text, so that no precision is lost to float64
// at today's epoch microseconds.
//
// Decoding streams: the top-level object is read token by token and
// traceEvents one element at a time, so memory is bounded by the events kept,
// not by the size of the file.
//
// [ToXSpace] converts a trace (read with DecodeOptions.Raw, to keep every
// arg's type and order) into XSpace planes: a /host:CPU plane with a line per
// thread, a /device:GPU:<n> plane per GPU with a line per stream, every event
// with its args as XLA-style stats, and times counted from a Unix time base
// (the time_base_ns plane stat) so that they fit XSpace's picoseconds.
//
// [Marshal] and [WriteGzip] write a trace as Kineto lays it out, for the
// simulator's traced runs ([WriteEvent], [Metadata]).
package kineto

import (
	"fmt"
	"strings"
)

// Trace is one Kineto trace file: the events and the metadata of the job.
type Trace struct {
	// Name is the name the trace was read under (its path, for Read).
	Name string
	// Rank is distributedInfo.rank, or -1 when the trace has none.
	Rank int
	// WorldSize is distributedInfo.world_size, or 0 when the trace has none.
	WorldSize int
	// Backend is distributedInfo.backend ("nccl", "gloo", ...), or "".
	Backend string
	// BaseTimeNs is baseTimeNanoseconds, or 0 when the trace has none.
	// Recent Kineto versions write ts relative to it: an event's Unix time
	// is BaseTimeNs + TsNs (see UnixNs), as PyTorch and HolisticTraceAnalysis
	// read it; older traces have no base and absolute ts. It is not added to
	// the events' timestamps.
	BaseTimeNs int64
	// Events are the trace's events in file order.
	Events []Event
}

// Event is one trace event.
type Event struct {
	// Name, Cat and Ph are the event's name, category ("kernel", "cpu_op",
	// "gpu_memcpy", "cuda_runtime", "user_annotation", ...) and phase ("X"
	// complete, "i" instant, "M" metadata, "s"/"f" flow, ...); "" when
	// absent.
	Name, Cat, Ph string
	// Pid and Tid are the process and thread ids: integers rendered in
	// decimal, strings (Kineto writes "Spans", "Traces", ...) as they are.
	// For GPU events Kineto puts the device index in Pid and the stream in
	// Tid.
	Pid, Tid string
	// TsNs and DurNs are ts and dur (microseconds in the file) in
	// nanoseconds, rounded to the nearest nanosecond, halves away from zero;
	// 0 when absent or null. TsNs is ts as written: relative to the
	// trace's BaseTimeNs when it has one.
	TsNs, DurNs int64
	// Args are the event's args: strings as they are, other scalars as their
	// JSON text (42, 0.148, true, null), arrays and objects as compact JSON.
	// Nil when the event has no args (or null).
	Args map[string]string
	// Raw is the event's JSON text as in the file, only when decoded with
	// DecodeOptions.Raw (nil otherwise).
	Raw []byte
}

// UnixNs returns the Unix time, in ns on the traced host's clock, of a
// timestamp of t's events: t.BaseTimeNs + tsNs. It is exact for the times
// of a trace within the limits (MaxTimeNs), as Decode and Check ensure;
// beyond them it saturates at the ends of the int64 range rather than wrap
// around.
func (t *Trace) UnixNs(tsNs int64) int64 { return addSat(t.BaseTimeNs, tsNs) }

// EndNs is TsNs + DurNs: exact within the limits (MaxTimeNs), as Decode
// and Trace.Check ensure; beyond them it saturates at the ends of the int64
// range rather than wrap around.
func (e *Event) EndNs() int64 { return addSat(e.TsNs, e.DurNs) }

// Kernel is one GPU collective kernel (NCCL or RCCL) of a trace.
type Kernel struct {
	// Name is the kernel's name, e.g.
	// "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)".
	Name string
	// StartNs and EndNs bound the kernel's execution, as the events' TsNs
	// (relative to Trace.BaseTimeNs when there is one).
	StartNs, EndNs int64
	// Device is the event's pid: the GPU's device index in Kineto traces.
	Device string
	// Stream is the event's tid: the GPU stream in Kineto traces.
	Stream string
	// Index is the event's position in Trace.Events.
	Index int
	// Args are the event's args (the same map, not a copy).
	Args map[string]string

	// What PyTorch recorded about the collective the kernel runs, from the
	// kernel's own args or the host ops that launched it (see
	// [Collectives]); zero where the trace does not say.

	// Collective names the collective, e.g. "all_reduce", "allreduce",
	// "_all_gather_base"; "" when unknown.
	Collective string
	// Group is the name of the collective's process group (PyTorch's
	// "Process Group Name"); "" when not recorded.
	Group string
	// Seq is the collective's sequence number in its process group, valid
	// when HasSeq.
	Seq int64
	// HasSeq reports that the trace records Seq.
	HasSeq bool
	// Size is the message size in elements; 0 when unknown.
	Size int64
}

// Key is the name by which a kernel is paired with its counterparts on
// other ranks: Collective when known, else the kernel's name.
func (k *Kernel) Key() string {
	if k.Collective != "" {
		return k.Collective
	}
	return k.Name
}

// Error is an error at one place of a trace's JSON text.
type Error struct {
	// Name is the name the trace was read under.
	Name string
	// Offset is the byte offset of the error in the JSON text, counted in
	// the decompressed stream when the file is gzipped (Decompressed): the
	// offending byte of a syntax error, the start of a value of the wrong
	// type, the number of bytes read for a truncated input or a read error.
	Offset int64
	// Decompressed reports that the file is gzipped, so Offset counts bytes
	// of the decompressed stream, not of the file.
	Decompressed bool
	// Where is the place in the document, e.g. "traceEvents[17].ts"; "" at
	// the top level.
	Where string
	// Err is what went wrong, e.g. `want a number, got "abc"`.
	Err error
}

// Error returns "read NAME: byte N: WHERE: ERR", with "decompressed byte N"
// for a gzipped file.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read %s: ", e.Name)
	if e.Decompressed {
		b.WriteString("decompressed ")
	}
	fmt.Fprintf(&b, "byte %d: ", e.Offset)
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
