package perfetto

import "google.golang.org/protobuf/encoding/protowire"

// descriptor writes the TrackDescriptor built in w.ev as a packet.
func (w *Writer) descriptor() {
	w.pkt = w.head(w.pkt[:0], false)
	w.pkt = protowire.AppendTag(w.pkt, fPacketTrackDesc, protowire.BytesType)
	w.pkt = protowire.AppendBytes(w.pkt, w.ev)
	w.endPacket()
}

// Track is a track's uuid.
type Track uint64

// trackHead starts a TrackDescriptor in w.ev: a new uuid, its parent (0:
// none), name (if any) and rank.
func (w *Writer) trackHead(parent Track, name string, rank int32) Track {
	uuid := w.next
	w.next++
	w.ev = protowire.AppendTag(w.ev[:0], fTrackUUID, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, uuid)
	if parent != 0 {
		w.ev = protowire.AppendTag(w.ev, fTrackParent, protowire.VarintType)
		w.ev = protowire.AppendVarint(w.ev, uint64(parent))
	}
	if name != "" {
		w.ev = appendString(w.ev, fTrackName, name)
	}
	w.ev = protowire.AppendTag(w.ev, fTrackRank, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, uint64(int64(rank)))
	return Track(uuid)
}

// Process declares a process track: pid and name (ProcessDescriptor's
// pid and process_name), labels (process_labels, shown beside the name),
// rank its place among the processes (lower first), its child tracks
// ordered by their ranks. It returns the track.
func (w *Writer) Process(pid int32, name string, labels []string, rank int32) (Track, error) {
	if w.err != nil {
		return 0, w.err
	}
	t := w.trackHead(0, "", rank)
	w.ev = protowire.AppendTag(w.ev, fTrackChildOrder, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, childOrderingExplicit)
	w.sub = protowire.AppendTag(w.sub[:0], fProcessPID, protowire.VarintType)
	w.sub = protowire.AppendVarint(w.sub, uint64(int64(pid)))
	w.sub = appendString(w.sub, fProcessName, name)
	for _, l := range labels {
		w.sub = appendString(w.sub, fProcessLabels, l)
	}
	w.ev = protowire.AppendTag(w.ev, fTrackProcess, protowire.BytesType)
	w.ev = protowire.AppendBytes(w.ev, w.sub)
	w.descriptor()
	return t, w.err
}

// Track declares a slice track named name under parent, rank its place
// among parent's children. Tracks of one parent with the same key are
// merged into one in Perfetto (sibling_merge_key_int): a line whose
// events overlap is written as several tracks with one key, each properly
// nested, and shows as one. description, if not "", is the track's
// description.
func (w *Writer) Track(parent Track, name, description string, rank int32, key uint64) (Track, error) {
	if w.err != nil {
		return 0, w.err
	}
	t := w.trackHead(parent, name, rank)
	if description != "" {
		w.ev = appendString(w.ev, fTrackDescription, description)
	}
	w.ev = protowire.AppendTag(w.ev, fTrackMerge, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, mergeBySiblingMergeKey)
	w.ev = protowire.AppendTag(w.ev, fTrackMergeKeyInt, protowire.VarintType)
	w.ev = protowire.AppendVarint(w.ev, key)
	w.descriptor()
	return t, w.err
}

// Counter declares a counter track named name under parent (rank its
// place), its values in ns when timeNS, else in unit (a unit name such as
// "ppm"; "" for none).
func (w *Writer) Counter(parent Track, name string, rank int32, timeNS bool, unit string) (Track, error) {
	if w.err != nil {
		return 0, w.err
	}
	t := w.trackHead(parent, name, rank)
	w.sub = w.sub[:0]
	if timeNS {
		w.sub = protowire.AppendTag(w.sub, fCounterUnit, protowire.VarintType)
		w.sub = protowire.AppendVarint(w.sub, counterUnitTimeNS)
	} else if unit != "" {
		w.sub = appendString(w.sub, fCounterUnitName, unit)
	}
	w.ev = protowire.AppendTag(w.ev, fTrackCounter, protowire.BytesType)
	w.ev = protowire.AppendBytes(w.ev, w.sub)
	w.descriptor()
	return t, w.err
}
