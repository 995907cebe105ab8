// Package perfetto writes Perfetto's native trace format (a .perfetto-trace
// file: a Trace message of TracePackets) in a stream, from tracks and
// events, encoding the protobuf wire format directly (protowire): a
// sequence holds its interning tables and what it has encoded since it was
// last taken (a Writer's own, a 64 KiB or one DeflateChunk buffer).
//
// The messages and field numbers are Perfetto's (perfetto.proto here is
// the subset written, with Perfetto's numbers; the tests decode the output
// with Perfetto's own protos, kept verbatim under testdata/).
//
// # The file a Writer writes
//
//   - Packet sequences (trusted_packet_sequence_id): the Writer's own
//     ([SequenceID]: the root track, and what the Writer's methods write)
//     and any number of others, each encoded by a [Seq] of its own —
//     possibly at the same time, one goroutine each — and written whole
//     ([Seq.Take], [Writer.Append]) in an order the caller fixes: the file
//     is the same bytes however the encoding was scheduled. A chronosync
//     combine writes a sequence per XSpace line and per clock node.
//   - Each sequence's first packet (written before its first timestamped
//     packet, or with its first chunk) has SEQ_INCREMENTAL_STATE_CLEARED,
//     the packet defaults (timestamp_clock_id [ClockGlobal], and
//     track_event_defaults.track_uuid the sequence's first track, which
//     its events then need not name) and the ClockSnapshot that defines
//     the sequence's clock (below), as Perfetto's SDK writes when a
//     sequence starts. Every later packet with a timestamp or interned
//     names says SEQ_NEEDS_INCREMENTAL_STATE; track descriptors need no
//     state.
//   - Event names and debug annotation names are interned per sequence:
//     the packet that first uses a name carries it in interned_data, every
//     later one refers to it by iid.
//   - Tracks: [Seq.Process] (a process track with a ProcessDescriptor,
//     uuid [ProcessTrack](pid)), [Seq.Track] (a named child track),
//     [Seq.Counter] (a counter track), uuids that sequences encoded apart
//     cannot share; events [Seq.Begin] / [Seq.End] (TrackEvent has no
//     complete-event type: a slice is a TYPE_SLICE_BEGIN and a
//     TYPE_SLICE_END on the same track, properly nested there; [Seq.Slices]
//     lays a line's slices out so), [Seq.Instant] and [Seq.Value].
//   - With Options.Deflate, each sequence's packets are cut into chunks of
//     [DeflateChunk] bytes, each a compressed_packets packet (zlib), as
//     Perfetto's tracing service writes them.
//
// # Clocks
//
// Timestamps are ns of the trace's own time (for chronosync, global time:
// the reference node's host clock with its steps taken out), written on a
// sequence-scoped clock of the writer's own, [ClockGlobal] (id 64: ids
// 64–127 are defined per sequence by a ClockSnapshot on that sequence, so
// no id can clash with another producer's), incremental as Perfetto's SDK
// writes its own (is_incremental): a packet's timestamp is the time since
// the sequence's previous timestamped packet, the first one's since the
// snapshot. A delta is unsigned: a sequence's times must not go back
// (an error otherwise; [Seq.Slices] writes a line's begins and ends in
// time order). Global time is not the clock of any one machine, so no
// builtin clock may stand for it on its own; each sequence's snapshot,
// taken at its first event's time t, relates it to:
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
// As the snapshot's readings are unsigned and global time may be negative
// (events before the time base), clock 64 and BOOTTIME read Offset + t:
// Perfetto, which shows times from the trace's start, shows the same
// picture.
package perfetto
