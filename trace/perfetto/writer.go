package perfetto

import (
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// SequenceID is the trusted_packet_sequence_id of every packet a Writer
// writes.
const SequenceID = 1

// ClockGlobal is the sequence-scoped clock id of the trace's timestamps
// (see the package documentation).
const ClockGlobal = 64

// DefaultOffset is what clock ClockGlobal reads at time 0 unless
// Options.Offset says otherwise: 2^54 ns (208 days), room for every time
// an XSpace holds (int64 ps: ±106 days) on either side of the time base.
// A timestamp costs 8 bytes then, where 2^40 (18 minutes) would take 6:
// after deflate, 3 % more on BenchmarkCombine16x1MPerfetto's trace.
const DefaultOffset = 1 << 54

// Options configure a Writer: how the trace's times relate to wall-clock
// time, and whether packets are compressed.
type Options struct {
	// RealtimeBaseNS, when not 0, is the Unix time (ns) that time 0 of the
	// trace is: the snapshot then relates the trace's clock to
	// BUILTIN_CLOCK_REALTIME.
	RealtimeBaseNS int64
	// Offset is what the trace's clock reads at time 0 (0: DefaultOffset);
	// times before −Offset cannot be written.
	Offset int64
	// Deflate compresses the packets (all but the first two, the clock
	// snapshot and the root track) in chunks of DeflateChunk bytes, each
	// written as a packet of compressed_packets (zlib), as Perfetto's
	// tracing service does with compression_type DEFLATE: Perfetto's
	// trace processor and UI read them as the packets they hold.
	Deflate bool
}

// DeflateChunk is the size of the packets compressed into one
// compressed_packets packet: Perfetto wants each under 512 KB.
const DeflateChunk = 256 << 10

// Kind is the type of an Arg's value.
type Kind uint8

// The kinds of Arg values (DebugAnnotation's value fields).
const (
	KindString Kind = iota
	KindInt
	KindUint
	KindDouble
	KindBool
)

// Arg is one argument of an event, a DebugAnnotation of its TrackEvent.
type Arg struct {
	Name   string
	Kind   Kind
	Str    string
	Int    int64
	Uint   uint64
	Double float64
	Bool   bool
}

// Writer streams a Perfetto trace to an io.Writer; see the package
// documentation. Its methods are not safe for concurrent use. After an
// error every later call returns it.
type Writer struct {
	w       io.Writer
	out     []byte // packets not yet written to w
	pkt     []byte // the packet being built
	ev      []byte // the TrackEvent or TrackDescriptor being built
	sub     []byte // a nested message being built
	interns []byte // the packet's InternedData
	offset  int64
	names   map[string]uint64 // event name → iid
	anns    map[string]uint64 // debug annotation name → iid
	next    uint64            // the next track uuid
	first   bool              // the next packet is the sequence's first
	err     error
	bytes   int64
	packets int64
	// deflate is Options.Deflate; raw is the number of bytes at the
	// start of out not to compress (the first packets).
	deflate bool
	raw     int
	sink    *sink // nil: not started, or ended by Flush
}

// flushAt is the size of the output buffer.
const flushAt = 64 << 10

// NewWriter starts a trace on w: the first packet (incremental state
// cleared, the packet defaults and the ClockSnapshot) and the root track's
// ordering (processes in the order of their rank). Nothing reaches w until
// the buffer fills or Flush is called.
func NewWriter(w io.Writer, c Options) *Writer {
	off := c.Offset
	if off <= 0 {
		off = DefaultOffset
	}
	wr := &Writer{w: w, offset: off, names: map[string]uint64{}, anns: map[string]uint64{}, next: 1, first: true, deflate: c.Deflate}
	// The snapshot.
	snap := wr.clock(nil, ClockGlobal, uint64(off))
	snap = wr.clock(snap, clockBoottime, uint64(off))
	if c.RealtimeBaseNS > 0 {
		snap = wr.clock(snap, clockRealtime, uint64(c.RealtimeBaseNS))
	}
	snap = protowire.AppendTag(snap, fSnapshotPrimary, protowire.VarintType)
	snap = protowire.AppendVarint(snap, clockBoottime)
	wr.pkt = wr.head(wr.pkt[:0], false)
	defaults := protowire.AppendTag(nil, fDefaultsClockID, protowire.VarintType)
	defaults = protowire.AppendVarint(defaults, ClockGlobal)
	wr.pkt = protowire.AppendTag(wr.pkt, fPacketDefaults, protowire.BytesType)
	wr.pkt = protowire.AppendBytes(wr.pkt, defaults)
	wr.pkt = protowire.AppendTag(wr.pkt, fPacketClockSnapshot, protowire.BytesType)
	wr.pkt = protowire.AppendBytes(wr.pkt, snap)
	wr.endPacket()
	// The root track (uuid 0): processes in the order of their ranks.
	wr.ev = protowire.AppendTag(wr.ev[:0], fTrackUUID, protowire.VarintType)
	wr.ev = protowire.AppendVarint(wr.ev, 0)
	wr.ev = protowire.AppendTag(wr.ev, fTrackProcessOrder, protowire.VarintType)
	wr.ev = protowire.AppendVarint(wr.ev, processOrderingExplicit)
	wr.descriptor()
	wr.raw = len(wr.out)
	return wr
}

// clock appends one ClockSnapshot.Clock to b.
func (w *Writer) clock(b []byte, id uint32, ts uint64) []byte {
	var c []byte
	c = protowire.AppendTag(c, fClockID, protowire.VarintType)
	c = protowire.AppendVarint(c, uint64(id))
	c = protowire.AppendTag(c, fClockTimestamp, protowire.VarintType)
	c = protowire.AppendVarint(c, ts)
	b = protowire.AppendTag(b, fSnapshotClocks, protowire.BytesType)
	return protowire.AppendBytes(b, c)
}

// head starts a packet: its sequence id and flags: the first packet
// clears the incremental state; a packet that refers to interned names
// (needs) says it needs it; others (slice ends, counter values) need none.
func (w *Writer) head(b []byte, needs bool) []byte {
	b = protowire.AppendTag(b, fPacketSequenceID, protowire.VarintType)
	b = protowire.AppendVarint(b, SequenceID)
	flags := uint64(0)
	switch {
	case w.first:
		flags = seqIncrementalStateCleared
		w.first = false
	case needs:
		flags = seqNeedsIncrementalState
	}
	if flags != 0 {
		b = protowire.AppendTag(b, fPacketSeqFlags, protowire.VarintType)
		b = protowire.AppendVarint(b, flags)
	}
	return b
}

// endPacket frames the packet built in w.pkt as Trace.packet and buffers it.
func (w *Writer) endPacket() {
	w.out = protowire.AppendTag(w.out, fTracePacket, protowire.BytesType)
	w.out = protowire.AppendBytes(w.out, w.pkt)
	w.packets++
	switch {
	case w.deflate && len(w.out)-w.raw >= DeflateChunk:
		w.write()
	case !w.deflate && len(w.out) >= flushAt:
		w.write()
	}
}

// write hands the buffered packets to the sink goroutine (sink.go),
// which compresses them with Options.Deflate and writes them to w.w.
func (w *Writer) write() {
	if w.err != nil || len(w.out) == 0 {
		return
	}
	if w.sink == nil {
		w.sink = newSink(w.w, w.deflate)
	}
	var err error
	w.out, err = w.sink.send(w.out, w.raw)
	w.raw = 0
	if err != nil {
		w.err = err
	}
}

// Flush writes what is buffered to the underlying writer and waits until
// it is written; the trace is complete after any Flush (a Perfetto trace
// has no trailer). Writing may go on after it.
func (w *Writer) Flush() error {
	w.write()
	if w.sink != nil {
		err := w.sink.close()
		w.bytes += w.sink.bytes
		if err != nil && (w.err == nil || errors.Is(w.err, errSinkFailed)) {
			w.err = err // the goroutine's own error, for the sign of one
		}
		w.sink = nil
	}
	return w.err
}

// Abort ends the writing goroutine after an error elsewhere, once the
// chunk it is writing is written, and writes nothing more; every later
// call fails. A Writer that is not flushed must be aborted.
func (w *Writer) Abort() {
	if w.sink != nil {
		_ = w.sink.close()
		w.sink = nil
	}
	if w.err == nil {
		w.err = errAborted
	}
}

// errAborted is the error of a Writer after Abort.
var errAborted = errors.New("perfetto: writer aborted")

// Bytes is the size of the trace written by the Flush calls so far.
func (w *Writer) Bytes() int64 { return w.bytes }

// Packets is the number of packets written so far.
func (w *Writer) Packets() int64 { return w.packets }

// appendString appends a string field; invalid UTF-8 is replaced (proto2
// strings must be UTF-8 for Perfetto's readers to show them).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
