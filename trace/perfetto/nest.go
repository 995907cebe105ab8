package perfetto

import (
	"cmp"
	"slices"
)

// Slice is one slice of a line, for [Seq.Slices]: its start and end
// (ns, End ≥ Start) and the caller's index of it.
type Slice struct {
	Start, End int64
	Index      int
}

// Slices writes the slices of one line on s. A TrackEvent track needs its
// slices properly nested (a slice that starts inside another ends inside
// it too); a line's slices need not be (an XLA line of async work, a
// stream whose kernels overlap), so they are laid out on lanes: each slice
// goes on the first lane where it nests, a new lane is opened where it
// nests on none. track(lane) returns the track of lane (called once per
// lane, in order, as the lanes are needed: lane 0 first); begin writes the
// slice's TYPE_SLICE_BEGIN on the track (with Seq.Begin: its name, args
// and flows are the caller's), and Slices writes each slice's
// TYPE_SLICE_END at its end. A slice of zero length is begun (begin) like
// any other, and ended at once: begin may write it as an instant instead,
// and return instant = true. spans is sorted in place: by start, the
// longer of two slices that start together first, then by Index.
// The packets are in time order: the ends of all lanes merged.
func (s *Seq) Slices(spans []Slice, track func(lane int) (Track, error), begin func(sl Slice, t Track) (instant bool, err error)) error {
	slices.SortFunc(spans, func(a, b Slice) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(b.End, a.End); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	type lane struct {
		t    Track
		open []int64 // ends of the open slices, innermost last
	}
	var lanes []lane
	// ends holds an entry per open slice, the earliest end first (ties:
	// the lower lane), so that the ends of every lane are written in time
	// order: a sequence's times do not go back.
	ends := &endHeap{}
	// closeTo ends the open slices that end by t, in time order.
	closeTo := func(t int64) error {
		for len(ends.e) > 0 && ends.e[0].end <= t {
			e := ends.pop()
			l := &lanes[e.lane]
			if err := s.End(l.t, e.end); err != nil {
				return err
			}
			l.open = l.open[:len(l.open)-1]
		}
		return nil
	}
	for _, sl := range spans {
		if err := closeTo(sl.Start); err != nil {
			return err
		}
		i := 0
		for ; i < len(lanes); i++ {
			l := &lanes[i]
			if len(l.open) == 0 || sl.End <= l.open[len(l.open)-1] {
				break
			}
		}
		if i == len(lanes) {
			t, err := track(i)
			if err != nil {
				return err
			}
			lanes = append(lanes, lane{t: t})
		}
		l := &lanes[i]
		instant, err := begin(sl, l.t)
		if err != nil {
			return err
		}
		if instant {
			continue
		}
		if sl.End == sl.Start {
			if err := s.End(l.t, sl.End); err != nil {
				return err
			}
			continue
		}
		l.open = append(l.open, sl.End)
		ends.push(endAt{end: sl.End, lane: i})
	}
	if err := closeTo(1<<63 - 1); err != nil {
		return err
	}
	return s.err
}

// endAt is an open slice's end and lane.
type endAt struct {
	end  int64
	lane int
}

// endHeap is a min-heap of open slices' ends, by end then lane.
type endHeap struct{ e []endAt }

func (a endAt) less(b endAt) bool { return a.end < b.end || a.end == b.end && a.lane < b.lane }

func (h *endHeap) push(x endAt) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.e[i].less(h.e[p]) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *endHeap) pop() endAt {
	top := h.e[0]
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e = h.e[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && h.e[l].less(h.e[m]) {
			m = l
		}
		if r < n && h.e[r].less(h.e[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.e[i], h.e[m] = h.e[m], h.e[i]
		i = m
	}
	return top
}
