// Package perfetto writes Perfetto's native trace format (a .perfetto-trace
// file: a Trace message of TracePackets) in a stream, from tracks and
// events, encoding the protobuf wire format directly (protowire): nothing
// is held but the packet being built, the interning tables and a 64 KiB
// output buffer.
//
// The messages and field numbers are Perfetto's (perfetto.proto here is
// the subset written, with Perfetto's numbers; the tests decode the output
// with Perfetto's own protos, kept verbatim under testdata/).
//
// # The file a Writer writes
//
//   - One packet sequence: every packet has trusted_packet_sequence_id
//     [SequenceID]. The first packet has SEQ_INCREMENTAL_STATE_CLEARED and
//     the packet defaults (timestamp_clock_id [ClockGlobal]); the packets
//     that refer to interned names (slice begins, instants)
//     SEQ_NEEDS_INCREMENTAL_STATE; slice ends, counter values and track
//     descriptors need no incremental state and carry no flags.
//   - A ClockSnapshot in that first packet, before any timestamped packet,
//     defines the clock every timestamp is on (see below).
//   - Event names and debug annotation names are interned per sequence:
//     the packet that first uses a name carries it in interned_data, every
//     later one refers to it by iid.
//   - Tracks: [Writer.Process] (a process track with a ProcessDescriptor),
//     [Writer.Track] (a named child track), [Writer.Counter] (a counter
//     track); events [Writer.Begin] / [Writer.End] (TrackEvent has no
//     complete-event type: a slice is a TYPE_SLICE_BEGIN and a
//     TYPE_SLICE_END on the same track, properly nested there),
//     [Writer.Instant] and [Writer.Value].
//
// # Clocks
//
// Timestamps are ns of the trace's own time (for chronosync, global time:
// the reference node's host clock with its steps taken out), written on a
// sequence-scoped clock of the writer's own, [ClockGlobal] (id 64: ids
// 64–127 are defined per sequence by a ClockSnapshot on that sequence, so
// no id can clash with another producer's). Global time is not the clock
// of any one machine, so no builtin clock may stand for it on its own; the
// snapshot relates it to:
//
//   - BUILTIN_CLOCK_BOOTTIME, one for one, and names BOOTTIME the trace's
//     primary clock: Perfetto then shows global time as the trace's time
//     (a proto trace's default domain is BOOTTIME; naming it explicitly
//     keeps trace processors old and new on the same time axis);
//   - BUILTIN_CLOCK_REALTIME = time base + t, when the trace's times count
//     from a Unix time (Options.RealtimeBaseNS, a Kineto trace's base), so
//     that Perfetto can show wall-clock time; a simulated trace counts
//     from 0 and has no such relation, and then none is claimed.
//
// As a packet's timestamp is unsigned and global time may be negative
// (events before the time base), clock 64 reads Offset + t: the snapshot
// says so ({64: Offset, BOOTTIME: Offset}), and Perfetto, which shows times
// from the trace's start, shows the same picture.
package perfetto
