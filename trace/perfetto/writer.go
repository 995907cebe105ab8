package perfetto

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// SequenceID is the trusted_packet_sequence_id of a Writer's own
// sequence (the root track, and what the Writer's methods write).
const SequenceID = 1

// ClockGlobal is the sequence-scoped clock id of the trace's timestamps
// (see the package documentation).
const ClockGlobal = 64

// DefaultOffset is what clock ClockGlobal reads at time 0 unless
// Options.Offset says otherwise: 2^54 ns (208 days), room for every time
// an XSpace holds (int64 ps: ±106 days) on either side of the time base.
// Timestamps are deltas (the clock is incremental): the offset shows only
// in the clock snapshots.
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
	// Deflate compresses each sequence's packets in chunks of
	// DeflateChunk bytes, each written as a packet of compressed_packets
	// (zlib), as Perfetto's tracing service does with compression_type
	// DEFLATE: Perfetto's trace processor and UI read them as the packets
	// they hold. A chunk under 512 bytes is written as it is.
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

// Writer writes a Perfetto trace to an io.Writer: its own sequence
// (SequenceID; the root track, and what its Seq methods write, embedded)
// and the chunks of other sequences (Append), in the order given; see the
// package documentation. Its methods are not safe for concurrent use.
// After an error every later call returns it.
type Writer struct {
	*Seq
	w       io.Writer
	bytes   int64
	packets int64
	werr    error
}

// flushAt is the size of a Writer's output buffer without Deflate.
const flushAt = 64 << 10

// NewWriter starts a trace on w: its own sequence, whose first packet
// declares the root track's ordering (processes in the order of their
// rank). Nothing reaches w until a chunk is full, or Append or Flush is
// called.
func NewWriter(w io.Writer, c Options) *Writer {
	wr := &Writer{w: w, Seq: NewSeq(c, SequenceID)}
	wr.Seq.spill = wr.spill
	// The root track (uuid 0): processes in the order of their ranks.
	s := wr.Seq
	s.ev = protowire.AppendTag(s.ev[:0], fTrackUUID, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, 0)
	s.ev = protowire.AppendTag(s.ev, fTrackProcessOrder, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, processOrderingExplicit)
	s.descriptor()
	return wr
}

// spill writes the chunks the Writer's own sequence has cut.
func (w *Writer) spill() {
	c := Chunk{Data: w.Seq.done, Packets: w.Seq.packets}
	w.Seq.done, w.Seq.packets = w.Seq.done[:0], 0
	w.write(c)
}

// write writes c to the underlying writer.
func (w *Writer) write(c Chunk) {
	if w.werr != nil || len(c.Data) == 0 {
		return
	}
	n, err := w.w.Write(c.Data)
	w.bytes += int64(n)
	w.packets += c.Packets
	if err != nil {
		w.werr = fmt.Errorf("perfetto: write: %w", err)
		if w.Seq.err == nil {
			w.Seq.err = w.werr
		}
	}
}

// Append writes the chunk of another sequence (Seq.Take), after what the
// Writer's own sequence has written so far (so that the tracks it
// declared come before the events on them).
func (w *Writer) Append(c Chunk) error {
	if err := w.Flush(); err != nil {
		return err
	}
	w.write(c)
	return w.failed()
}

// failed is the Writer's error.
func (w *Writer) failed() error {
	if w.werr != nil {
		return w.werr
	}
	return w.Seq.err
}

// Flush writes what the Writer's own sequence has buffered; the trace is
// complete after any Flush (a Perfetto trace has no trailer). Writing may
// go on after it.
func (w *Writer) Flush() error {
	if err := w.failed(); err != nil {
		return err
	}
	c, err := w.Seq.Take()
	if err != nil {
		return err
	}
	w.write(c)
	return w.failed()
}

// Abort makes every later call fail, after an error elsewhere: what is
// not written is dropped.
func (w *Writer) Abort() {
	if w.Seq.err == nil {
		w.Seq.err = errAborted
	}
}

// errAborted is the error of a Writer after Abort.
var errAborted = errors.New("perfetto: writer aborted")

// Bytes is the size of the trace written so far.
func (w *Writer) Bytes() int64 { return w.bytes }

// Packets is the number of packets written so far (those inside
// compressed_packets counted, not them).
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
