package perfetto

import (
	"cmp"
	"slices"
)

// Slice is one slice of a line, for [Writer.Slices]: its start and end
// (ns, End ≥ Start) and the caller's index of it.
type Slice struct {
	Start, End int64
	Index      int
}

// Slices writes the slices of one line. A TrackEvent track needs its
// slices properly nested (a slice that starts inside another ends inside
// it too); a line's slices need not be (an XLA line of async work, a
// stream whose kernels overlap), so they are laid out on lanes: each slice
// goes on the first lane where it nests, a new lane is opened where it
// nests on none. track(lane) returns the track of lane (called once per
// lane, in order, as the lanes are needed: lane 0 first); begin writes the
// slice's TYPE_SLICE_BEGIN on the track (with Writer.Begin: its name, args
// and flows are the caller's), and Slices writes each slice's
// TYPE_SLICE_END at its end. A slice of zero length is begun (begin) like
// any other, and ended at once: begin may write it as an instant instead,
// and return instant = true. spans is sorted in place: by start, the
// longer of two slices that start together first, then by Index.
// Each lane's packets are in time order.
func (w *Writer) Slices(spans []Slice, track func(lane int) (Track, error), begin func(s Slice, t Track) (instant bool, err error)) error {
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
	// closeTo ends the open slices of l that end by t, innermost first.
	closeTo := func(l *lane, t int64) error {
		for len(l.open) > 0 && l.open[len(l.open)-1] <= t {
			if err := w.End(l.t, l.open[len(l.open)-1]); err != nil {
				return err
			}
			l.open = l.open[:len(l.open)-1]
		}
		return nil
	}
	for _, s := range spans {
		i := 0
		for ; i < len(lanes); i++ {
			l := &lanes[i]
			if err := closeTo(l, s.Start); err != nil {
				return err
			}
			if len(l.open) == 0 || s.End <= l.open[len(l.open)-1] {
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
		instant, err := begin(s, l.t)
		if err != nil {
			return err
		}
		if instant {
			continue
		}
		if s.End == s.Start {
			if err := w.End(l.t, s.End); err != nil {
				return err
			}
			continue
		}
		l.open = append(l.open, s.End)
	}
	for i := range lanes {
		if err := closeTo(&lanes[i], 1<<63-1); err != nil {
			return err
		}
	}
	return w.err
}
