package perfetto

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// descriptor writes the TrackDescriptor built in s.ev as a packet (one
// that needs no sequence state).
func (s *Seq) descriptor() {
	s.pkt = s.head(s.pkt[:0], false)
	s.pkt = protowire.AppendTag(s.pkt, fPacketTrackDesc, protowire.BytesType)
	s.pkt = protowire.AppendBytes(s.pkt, s.ev)
	s.endPacket()
}

// Track is a track's uuid: a process track's is ProcessTrack(pid); the
// n-th other track a sequence declares has its sequence id in bits 32–61
// and n in bits 0–31, so that sequences encoded apart never declare the
// same uuid.
type Track uint64

// ProcessTrack is the uuid of the process track of pid (Seq.Process).
func ProcessTrack(pid int32) Track { return Track(1<<62 | uint64(uint32(pid))) }

// trackHead starts a TrackDescriptor in s.ev: the uuid given (0: the
// sequence's next), its parent (0: none), name (if any) and rank.
func (s *Seq) trackHead(uuid Track, parent Track, name string, rank int32) Track {
	if uuid == 0 {
		if s.next >= 1<<32 && s.err == nil {
			s.err = fmt.Errorf("perfetto: more than 2^32 tracks on sequence %d", s.id)
		}
		uuid = Track(uint64(s.id)<<32 | s.next)
		s.next++
	}
	s.ev = protowire.AppendTag(s.ev[:0], fTrackUUID, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, uint64(uuid))
	if parent != 0 {
		s.ev = protowire.AppendTag(s.ev, fTrackParent, protowire.VarintType)
		s.ev = protowire.AppendVarint(s.ev, uint64(parent))
	}
	if name != "" {
		s.ev = appendString(s.ev, fTrackName, name)
	}
	s.ev = protowire.AppendTag(s.ev, fTrackRank, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, uint64(int64(rank)))
	return uuid
}

// Process declares a process track: pid and name (ProcessDescriptor's
// pid and process_name), labels (process_labels, shown beside the name),
// rank its place among the processes (lower first), its child tracks
// ordered by their ranks. It returns the track, ProcessTrack(pid): a
// trace declares each pid once.
func (s *Seq) Process(pid int32, name string, labels []string, rank int32) (Track, error) {
	if s.err != nil {
		return 0, s.err
	}
	t := s.trackHead(ProcessTrack(pid), 0, "", rank)
	s.ev = protowire.AppendTag(s.ev, fTrackChildOrder, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, childOrderingExplicit)
	s.sub = protowire.AppendTag(s.sub[:0], fProcessPID, protowire.VarintType)
	s.sub = protowire.AppendVarint(s.sub, uint64(int64(pid)))
	s.sub = appendString(s.sub, fProcessName, name)
	for _, l := range labels {
		s.sub = appendString(s.sub, fProcessLabels, l)
	}
	s.ev = protowire.AppendTag(s.ev, fTrackProcess, protowire.BytesType)
	s.ev = protowire.AppendBytes(s.ev, s.sub)
	s.descriptor()
	return t, s.err
}

// Track declares a slice track named name under parent, rank its place
// among parent's children. Tracks of one parent with the same key are
// merged into one in Perfetto (sibling_merge_key_int): a line whose
// events overlap is written as several tracks with one key, each properly
// nested, and shows as one. description, if not "", is the track's
// description.
func (s *Seq) Track(parent Track, name, description string, rank int32, key uint64) (Track, error) {
	if s.err != nil {
		return 0, s.err
	}
	t := s.trackHead(0, parent, name, rank)
	if description != "" {
		s.ev = appendString(s.ev, fTrackDescription, description)
	}
	s.ev = protowire.AppendTag(s.ev, fTrackMerge, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, mergeBySiblingMergeKey)
	s.ev = protowire.AppendTag(s.ev, fTrackMergeKeyInt, protowire.VarintType)
	s.ev = protowire.AppendVarint(s.ev, key)
	s.descriptor()
	return t, s.err
}

// Counter declares a counter track named name under parent (rank its
// place), its values in ns when timeNS, else in unit (a unit name such as
// "ppm"; "" for none).
func (s *Seq) Counter(parent Track, name string, rank int32, timeNS bool, unit string) (Track, error) {
	if s.err != nil {
		return 0, s.err
	}
	t := s.trackHead(0, parent, name, rank)
	s.sub = s.sub[:0]
	if timeNS {
		s.sub = protowire.AppendTag(s.sub, fCounterUnit, protowire.VarintType)
		s.sub = protowire.AppendVarint(s.sub, counterUnitTimeNS)
	} else if unit != "" {
		s.sub = appendString(s.sub, fCounterUnitName, unit)
	}
	s.ev = protowire.AppendTag(s.ev, fTrackCounter, protowire.BytesType)
	s.ev = protowire.AppendBytes(s.ev, s.sub)
	s.descriptor()
	return t, s.err
}
