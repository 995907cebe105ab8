package perfetto

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers, Perfetto's (perfetto.proto lists the messages).
const (
	fTracePacket protowire.Number = 1 // Trace.packet

	// TracePacket.
	fPacketTimestamp     protowire.Number = 8
	fPacketClockSnapshot protowire.Number = 6
	fPacketSequenceID    protowire.Number = 10
	fPacketTrackEvent    protowire.Number = 11
	fPacketInterned      protowire.Number = 12
	fPacketSeqFlags      protowire.Number = 13
	fPacketDefaults      protowire.Number = 59
	fPacketTrackDesc     protowire.Number = 60
	fPacketCompressed    protowire.Number = 50

	// TracePacketDefaults and TrackEventDefaults.
	fDefaultsClockID    protowire.Number = 58
	fDefaultsTrackEvent protowire.Number = 11
	fEventDefaultsTrack protowire.Number = 11

	// ClockSnapshot and its Clock.
	fSnapshotClocks  protowire.Number = 1
	fSnapshotPrimary protowire.Number = 2
	fClockID         protowire.Number = 1
	fClockTimestamp  protowire.Number = 2
	fClockIncrement  protowire.Number = 3

	// InternedData, EventName and DebugAnnotationName.
	fInternedEventNames protowire.Number = 2
	fInternedAnnNames   protowire.Number = 3
	fInternedIID        protowire.Number = 1
	fInternedName       protowire.Number = 2

	// TrackEvent.
	fEventAnnotations protowire.Number = 4
	fEventType        protowire.Number = 9
	fEventNameIID     protowire.Number = 10
	fEventTrackUUID   protowire.Number = 11
	fEventDoubleValue protowire.Number = 44
	fEventFlowIDs     protowire.Number = 47
	fEventTermFlowIDs protowire.Number = 48

	// DebugAnnotation.
	fAnnNameIID protowire.Number = 1
	fAnnBool    protowire.Number = 2
	fAnnUint    protowire.Number = 3
	fAnnInt     protowire.Number = 4
	fAnnDouble  protowire.Number = 5
	fAnnString  protowire.Number = 6

	// TrackDescriptor.
	fTrackUUID         protowire.Number = 1
	fTrackName         protowire.Number = 2
	fTrackProcess      protowire.Number = 3
	fTrackParent       protowire.Number = 5
	fTrackCounter      protowire.Number = 8
	fTrackChildOrder   protowire.Number = 11
	fTrackRank         protowire.Number = 12
	fTrackDescription  protowire.Number = 14
	fTrackMerge        protowire.Number = 15
	fTrackMergeKeyInt  protowire.Number = 17
	fTrackProcessOrder protowire.Number = 19

	// ProcessDescriptor.
	fProcessPID    protowire.Number = 1
	fProcessName   protowire.Number = 6
	fProcessLabels protowire.Number = 8

	// CounterDescriptor.
	fCounterUnit     protowire.Number = 3
	fCounterUnitName protowire.Number = 6
)

// Enum values, Perfetto's.
const (
	seqIncrementalStateCleared = 1
	seqNeedsIncrementalState   = 2

	clockRealtime = 1 // BUILTIN_CLOCK_REALTIME
	clockBoottime = 6 // BUILTIN_CLOCK_BOOTTIME

	typeSliceBegin = 1
	typeSliceEnd   = 2
	typeInstant    = 3
	typeCounter    = 4

	childOrderingExplicit   = 3
	mergeBySiblingMergeKey  = 3
	processOrderingExplicit = 1
	counterUnitTimeNS       = 1
)
