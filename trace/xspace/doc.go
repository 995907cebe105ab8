// Package xspace reads, writes and builds the files of the trace pipeline:
// XSpace traces (*.xplane.pb, package trace/xplanepb) and clock snapshots
// (package trace/snapshotpb).
//
// [Read] and [ReadSnapshots] report corrupt input with the file and the byte
// offset where its wire data stops parsing (a [*CorruptError] wrapping
// [ErrCorrupt]); a [Checker] tells the same without decoding, for readers
// that walk the wire format themselves and copy parts of it unparsed.
// [Write] and [WriteFile] replace a file atomically, so that a reader never
// sees half a trace. [PlaneBuilder] builds an XPlane deterministically, for
// the simulator and the combiner; [StartPs], [EndPs], [StatByName],
// [StatValue] and [StatString] read events and stats (a compressed string
// decompresses to at most [MaxDecompressedStat] bytes); [TimeBase] reads a
// plane's time base ([StatTimeBase]), for planes whose times count from a
// Unix time rather than from 0.
//
// For readers that walk the wire format themselves (the combiner), the
// wire-level API gives the schema's field numbers (FieldPlaneLines and the
// rest), the wire type each field must have ([SpaceSpec] and the other
// specs), a field iterator ([Next]) and varint helpers ([ConsumeVarint],
// [PutHead]).
package xspace
