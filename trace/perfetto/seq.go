package perfetto

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/klauspost/compress/zlib"
	"google.golang.org/protobuf/encoding/protowire"
)

// MaxSequence bounds the sequence ids: a track's uuid holds its
// sequence's id in bits 32–61.
const MaxSequence = 1<<30 - 1

// Seq encodes one packet sequence in memory: its packets, its interning
// tables, its incremental clock and its tracks (see the package
// documentation). Sequences are independent of one another: several can be
// encoded at once, one per goroutine, and their chunks (Take) written in
// any fixed order (Writer.Append); a Seq's bytes depend only on the calls
// made on it since Reset. Its methods are not safe for concurrent use.
// After an error every later call returns it.
type Seq struct {
	o   Options
	id  uint32
	out []byte // framed packets not yet cut into done
	// done holds the chunks cut so far: compressed_packets packets
	// (Options.Deflate), else the packets as they are.
	done []byte
	// reset is where in out the sequence's first packet goes (−1: written).
	reset                 int
	pkt, ev, sub, interns []byte
	names, anns           map[string]uint64
	// last is clock ClockGlobal's reading at the sequence's last
	// timestamped packet (valid once snapped).
	last    uint64
	snapped bool
	next    uint64 // the next track number on the sequence
	packets int64
	err     error
	z       *zlib.Writer
	zbuf    bytes.Buffer
	// spill, when set (a Writer's own sequence), is called after each cut.
	spill func()
}

// NewSeq returns an encoder for the sequence id (1 ≤ id ≤ MaxSequence).
func NewSeq(o Options, id uint32) *Seq {
	if o.Offset <= 0 {
		o.Offset = DefaultOffset
	}
	s := &Seq{o: o, names: map[string]uint64{}, anns: map[string]uint64{}}
	s.Reset(id)
	return s
}

// Reset starts the sequence id afresh on s, keeping its buffers: what was
// not taken is dropped.
func (s *Seq) Reset(id uint32) {
	s.id = id
	s.out, s.done = s.out[:0], nil
	s.reset = 0
	s.interns = s.interns[:0]
	clear(s.names)
	clear(s.anns)
	s.last, s.snapped = 0, false
	s.next = 1
	s.packets = 0
	s.err = nil
	if id == 0 || id > MaxSequence {
		s.err = fmt.Errorf("perfetto: sequence id %d out of 1..%d", id, MaxSequence)
	}
}

// ID is the sequence's trusted_packet_sequence_id.
func (s *Seq) ID() uint32 { return s.id }

// defaultTrack is the track of the sequence's events that name none: its
// first track (Track, Counter).
func (s *Seq) defaultTrack() Track { return Track(uint64(s.id)<<32 | 1) }

// first writes the sequence's first packet at s.reset, before the packets
// written so far (track descriptors, which need no state): incremental
// state cleared, the packet defaults (clock ClockGlobal, the default
// track) and, when t is a time (timed), the ClockSnapshot that defines
// clock ClockGlobal from t on. Perfetto's SDK writes the same packet when
// a sequence starts.
func (s *Seq) first(t int64, timed bool) {
	var b []byte
	b = protowire.AppendTag(b, fPacketSequenceID, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(s.id))
	b = protowire.AppendTag(b, fPacketSeqFlags, protowire.VarintType)
	b = protowire.AppendVarint(b, seqIncrementalStateCleared)
	ted := protowire.AppendTag(nil, fEventDefaultsTrack, protowire.VarintType)
	ted = protowire.AppendVarint(ted, uint64(s.defaultTrack()))
	d := protowire.AppendTag(nil, fDefaultsClockID, protowire.VarintType)
	d = protowire.AppendVarint(d, ClockGlobal)
	d = protowire.AppendTag(d, fDefaultsTrackEvent, protowire.BytesType)
	d = protowire.AppendBytes(d, ted)
	b = protowire.AppendTag(b, fPacketDefaults, protowire.BytesType)
	b = protowire.AppendBytes(b, d)
	if timed {
		b = protowire.AppendTag(b, fPacketClockSnapshot, protowire.BytesType)
		b = protowire.AppendBytes(b, s.snapshot(t))
		s.last, s.snapped = uint64(t+s.o.Offset), true
	}
	var framed []byte
	framed = protowire.AppendTag(framed, fTracePacket, protowire.BytesType)
	framed = protowire.AppendBytes(framed, b)
	s.out = slices.Insert(s.out, s.reset, framed...)
	s.reset = -1
	s.packets++
}

// snapshot is the ClockSnapshot taken at t: clock ClockGlobal
// (incremental) and BOOTTIME read Offset + t, REALTIME (with a time base)
// RealtimeBaseNS + t.
func (s *Seq) snapshot(t int64) []byte {
	r := uint64(t + s.o.Offset)
	snap := clock(nil, ClockGlobal, r, true)
	snap = clock(snap, clockBoottime, r, false)
	if rt := s.o.RealtimeBaseNS + t; s.o.RealtimeBaseNS > 0 && rt >= 0 {
		snap = clock(snap, clockRealtime, uint64(rt), false)
	}
	snap = protowire.AppendTag(snap, fSnapshotPrimary, protowire.VarintType)
	return protowire.AppendVarint(snap, clockBoottime)
}

// clock appends one ClockSnapshot.Clock to b.
func clock(b []byte, id uint32, ts uint64, incremental bool) []byte {
	var c []byte
	c = protowire.AppendTag(c, fClockID, protowire.VarintType)
	c = protowire.AppendVarint(c, uint64(id))
	c = protowire.AppendTag(c, fClockTimestamp, protowire.VarintType)
	c = protowire.AppendVarint(c, ts)
	if incremental {
		c = protowire.AppendTag(c, fClockIncrement, protowire.VarintType)
		c = protowire.AppendVarint(c, 1)
	}
	b = protowire.AppendTag(b, fSnapshotClocks, protowire.BytesType)
	return protowire.AppendBytes(b, c)
}

// head starts a packet in b: its sequence id and, for a packet that
// needs the sequence's state (a timestamp on the incremental clock,
// interned names), SEQ_NEEDS_INCREMENTAL_STATE.
func (s *Seq) head(b []byte, needs bool) []byte {
	b = protowire.AppendTag(b, fPacketSequenceID, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(s.id))
	if needs {
		b = protowire.AppendTag(b, fPacketSeqFlags, protowire.VarintType)
		b = protowire.AppendVarint(b, seqNeedsIncrementalState)
	}
	return b
}

// endPacket frames the packet built in s.pkt as Trace.packet, and cuts
// a chunk once enough is buffered.
func (s *Seq) endPacket() {
	s.out = protowire.AppendTag(s.out, fTracePacket, protowire.BytesType)
	s.out = protowire.AppendBytes(s.out, s.pkt)
	s.packets++
	limit := flushAt
	if s.o.Deflate {
		limit = DeflateChunk
	}
	if s.reset < 0 && len(s.out) >= limit {
		s.cut()
	}
}

// rawBelow is the size under which a cut is not compressed: a few track
// descriptors gain nothing from a zlib stream of their own.
const rawBelow = 512

// cut moves the buffered packets to s.done, compressed into a
// compressed_packets packet with Options.Deflate (as Perfetto's tracing
// service does with compression_type DEFLATE: Perfetto's readers read
// them as the packets they hold).
func (s *Seq) cut() {
	if len(s.out) == 0 || s.err != nil {
		return
	}
	if !s.o.Deflate || len(s.out) < rawBelow {
		s.done = append(s.done, s.out...)
		s.out = s.out[:0]
		s.spilled()
		return
	}
	s.zbuf.Reset()
	if s.z == nil {
		var err error
		if s.z, err = zlib.NewWriterLevel(&s.zbuf, zlib.BestSpeed); err != nil {
			s.err = fmt.Errorf("perfetto: compress: %w", err)
			return
		}
	} else {
		s.z.Reset(&s.zbuf)
	}
	if _, err := s.z.Write(s.out); err != nil {
		s.err = fmt.Errorf("perfetto: compress: %w", err)
		return
	}
	if err := s.z.Close(); err != nil {
		s.err = fmt.Errorf("perfetto: compress: %w", err)
		return
	}
	n := uint64(s.zbuf.Len())
	inner := protowire.SizeTag(fPacketCompressed) + protowire.SizeVarint(n) + int(n)
	s.done = protowire.AppendTag(s.done, fTracePacket, protowire.BytesType)
	s.done = protowire.AppendVarint(s.done, uint64(inner))
	s.done = protowire.AppendTag(s.done, fPacketCompressed, protowire.BytesType)
	s.done = protowire.AppendVarint(s.done, n)
	s.done = append(s.done, s.zbuf.Bytes()...)
	s.out = s.out[:0]
	s.spilled()
}

func (s *Seq) spilled() {
	if s.spill != nil {
		s.spill()
	}
}

// Chunk is a sequence's encoded packets, to write with Writer.Append.
type Chunk struct {
	// Data is the bytes, whole Trace.packet fields.
	Data []byte
	// Packets is the number of packets Data holds, those inside
	// compressed_packets counted, not them.
	Packets int64
}

// Take returns what the sequence has encoded since Reset or the last
// Take, and its error; the chunk's bytes are the caller's. The sequence
// goes on after it.
func (s *Seq) Take() (Chunk, error) {
	if s.err == nil && s.reset >= 0 && len(s.out) > 0 {
		s.first(0, false) // only descriptors: no clock needed
	}
	s.cut()
	c := Chunk{Data: s.done, Packets: s.packets}
	s.done, s.packets = nil, 0
	return c, s.err
}

// errBackwards is a time before the sequence's previous one.
var errBackwards = errors.New("perfetto: time goes back on a sequence")

// timestamp appends to s.pkt the packet's timestamp field for t: the time
// since the sequence's previous timestamped packet on the incremental
// clock, writing the sequence's first packet (with the snapshot) before
// the first.
func (s *Seq) timestamp(t int64) error {
	if !s.Holds(t) {
		return fmt.Errorf("%w: %d ns is before −%d ns or too late", errTooEarly, t, s.o.Offset)
	}
	r := uint64(t + s.o.Offset)
	if !s.snapped {
		if s.reset >= 0 {
			s.first(t, true)
		} else {
			// Descriptors were taken before any time: a snapshot packet
			// of its own.
			s.pkt = s.head(s.pkt[:0], false)
			s.pkt = protowire.AppendTag(s.pkt, fPacketClockSnapshot, protowire.BytesType)
			s.pkt = protowire.AppendBytes(s.pkt, s.snapshot(t))
			s.endPacket()
			s.last, s.snapped = r, true
		}
	}
	if r < s.last {
		return fmt.Errorf("%w: %d ns after %d ns on sequence %d", errBackwards, t, int64(s.last)-s.o.Offset, s.id)
	}
	s.pkt = protowire.AppendTag(s.pkt[:0], fPacketTimestamp, protowire.VarintType)
	s.pkt = protowire.AppendVarint(s.pkt, r-s.last)
	s.last = r
	return nil
}
