// Package xspace reads, writes and builds the files of the trace pipeline:
// XSpace traces (*.xplane.pb, package trace/xplanepb) and clock snapshots
// (package trace/snapshotpb).
//
// [Read] and [ReadSnapshots] report corrupt input with the file and the byte
// offset where its wire data stops parsing (a [*CorruptError] wrapping
// [ErrCorrupt]). [Write] and [WriteFile] replace a file atomically, so that
// a reader never sees half a trace. [PlaneBuilder] builds an XPlane
// deterministically, for the simulator and the combiner; [StartPs], [EndPs],
// [StatByName] and [StatString] read events and stats; [TimeBase] reads a
// plane's time base ([StatTimeBase]), for planes whose times count from a
// Unix time rather than from 0.
package xspace
