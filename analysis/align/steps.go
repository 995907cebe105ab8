package align

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
)

// HostStep is a step of a node's host clock S: when it read At, it jumped
// by Size (ns; negative: back). GraphCalc's records carry them (see
// offsets.Step); a tracer clock R does not step with its host.
type HostStep struct {
	At   int64
	Size float64
	// AtSigma is how far from At it may have been, ns (the records'
	// at_uncertainty_ns).
	AtSigma float64
}

// stepRef is where a HostStep came from: the record (by round and window
// start) and its index among the record's steps.
type stepRef struct {
	round uint64
	start int64
	k     int
}

// StepsOf returns node's host clock steps from its records in ix, in the
// order they happened (records by window start, each record's in order).
func StepsOf(ix *offsets.Index, node int) []HostStep {
	steps, _ := stepsOf(ix, node)
	return steps
}

func stepsOf(ix *offsets.Index, node int) ([]HostStep, []stepRef) {
	if ix == nil {
		return nil, nil
	}
	var steps []HostStep
	var refs []stepRef
	for _, o := range ix.Records(node) {
		for k, s := range o.Steps {
			steps = append(steps, HostStep{At: s.AtNS, Size: s.SizeNS, AtSigma: s.AtUncertaintyNS})
			refs = append(refs, stepRef{o.RoundID, o.WindowStartNS, k})
		}
	}
	return steps, refs
}

// tracerStep is a HostStep placed on the tracer clock: readings at or
// after r were taken after it. A step the records do not carry (found in
// the pairs themselves, see unrecorded) is not recorded, and a reading
// in (lo, hi) may lie on either side of it; for a recorded one, (lo, hi)
// is where its records place it.
type tracerStep struct {
	r        int64
	size     float64
	recorded bool
	lo, hi   int64
}

// unrecordedStep is the smallest jump of the host clock against the
// tracer clock between two successive pairs that is taken for a step the
// records do not carry, ns: far above a pair's noise (ns to µs) and above
// what a rate differing from the pairs' median by 100 ppm moves S over a
// 4 s sampling period. The records carry far smaller steps (the sync
// protocol finds them down to its links' noise); this catches a large one
// they missed.
const unrecordedStep = 500_000

// NewSnapshotsStepped is NewSnapshots for a host clock that stepped:
// pairs read after a step have their S taken back by its size, so that
// the mapping runs through one unbroken host clock (S as if it had never
// stepped), and each step is placed on the tracer clock, which did not
// step, for Node to add the steps back to the readings after them.
//
// Which pairs follow a step: those whose S reached At, and (a backward
// step makes S read some values twice) those whose S is beyond At + Size;
// between the two, the pairs after the one chord of successive pairs
// whose S advanced by Size more than the clocks' usual rate says. The
// step's R is where the unbroken mapping reads At before the step.
//
// A step the records do not carry is found in the pairs: a chord whose S
// advanced by more than unrecordedStep beyond the usual rate (the records
// may put a step on another node when too few nodes say which stepped, or
// miss one between two snapshots of a burst). It is taken out and added
// back like the others, placed halfway between the two pairs.
func NewSnapshotsStepped(pairs []Pair, burstGap int64, steps []HostStep) (*Snapshots, error) {
	if len(pairs) < 2 {
		return nil, fmt.Errorf("%w: %d pairs, need at least 2", ErrSnapshots, len(pairs))
	}
	p := slices.Clone(pairs)
	slices.SortStableFunc(p, func(a, b Pair) int { return cmp.Compare(a.Tracer, b.Tracer) })
	p = mergeEqualR(p)
	actual := make([]int64, len(p)) // S as read, with every step in it
	for i, q := range p {
		actual[i] = q.Sys
	}
	rate := typicalRate(p)
	placed := make([]tracerStep, 0, len(steps))
	cum := 0.0 // the steps placed so far, taken out of p
	for _, st := range steps {
		b := boundary(p, actual, st, rate)
		size := int64(math.Round(st.Size))
		for i := b; i < len(p); i++ {
			p[i].Sys -= size
		}
		at := float64(st.At) - cum // on the unbroken clock
		r := tracerAt(p, b, at, rate)
		u := int64(st.AtSigma / rate)
		placed = append(placed, tracerStep{r: r, size: st.Size, recorded: true, lo: r - u, hi: r + u})
		cum += float64(size)
	}
	placed = append(placed, unrecorded(p, rate, placed)...)
	if len(placed) == 0 {
		return NewSnapshots(pairs, burstGap)
	}
	slices.SortStableFunc(placed, func(a, b tracerStep) int { return cmp.Compare(a.r, b.r) })
	m, err := NewSnapshots(p, burstGap)
	if err != nil {
		return nil, fmt.Errorf("%w (after taking out %d host clock steps)", err, len(placed))
	}
	m.steps = placed
	return m, nil
}

// unrecorded finds the steps left in p (sorted by R, recorded steps
// taken out), takes them out of p and returns them placed on the tracer
// clock: where a recorded step's time (within its uncertainty) lies
// between the two pairs (the records knew when, not by how much: one that
// may have been this node's or another's), at its place, doubtful over
// where the two overlap; else halfway, doubtful between the pairs.
func unrecorded(p []Pair, rate float64, recorded []tracerStep) []tracerStep {
	var out []tracerStep
	for b := 1; b < len(p); b++ {
		excess := diff(p[b].Sys, p[b-1].Sys) - rate*diff(p[b].Tracer, p[b-1].Tracer)
		if math.Abs(excess) <= unrecordedStep {
			continue
		}
		size := int64(math.Round(excess))
		for i := b; i < len(p); i++ {
			p[i].Sys -= size
		}
		lo, hi := p[b-1].Tracer, p[b].Tracer
		st := tracerStep{r: lo + (hi-lo)/2 + 1, size: float64(size), lo: lo, hi: hi}
		for _, rs := range recorded {
			if rs.hi > lo && rs.lo <= hi {
				st.lo, st.hi = max(lo, rs.lo), min(hi, rs.hi)
				st.r = max(lo+1, min(hi, rs.r))
				break
			}
		}
		out = append(out, st)
	}
	return out
}

// Steps returns the host clock steps found in the pairs that the records
// did not carry (see NewSnapshotsStepped).
func (m *Snapshots) Steps() int {
	n := 0
	for _, s := range m.steps {
		if !s.recorded {
			n++
		}
	}
	return n
}

// typicalRate is the median dS/dR of the chords of successive pairs: a
// step bends one chord, not the median.
func typicalRate(p []Pair) float64 {
	var r []float64
	for i := 1; i < len(p); i++ {
		if dr := diff(p[i].Tracer, p[i-1].Tracer); dr > 0 {
			r = append(r, diff(p[i].Sys, p[i-1].Sys)/dr)
		}
	}
	if len(r) == 0 {
		return 1
	}
	return stats.Median(r)
}

// boundary is the index of the first pair read after step st (len(p) when
// none was), from the pairs' S as read (actual) and their S with the
// earlier steps taken out (p).
func boundary(p []Pair, actual []int64, st HostStep, rate float64) int {
	first := func(x float64) int { // the first pair whose S as read reached x
		for i, s := range actual {
			if float64(s) >= x {
				return i
			}
		}
		return len(p)
	}
	lo, hi := first(float64(st.At)+min(0, st.Size)), first(float64(st.At)+max(0, st.Size))
	best, bestErr := hi, math.Inf(1)
	for b := max(1, lo); b <= hi && b < len(p); b++ {
		excess := diff(p[b].Sys, p[b-1].Sys) - rate*diff(p[b].Tracer, p[b-1].Tracer)
		if e := math.Abs(excess - st.Size); e < bestErr {
			best, bestErr = b, e
		}
	}
	return best
}

// tracerAt is the R at which the unbroken mapping reads at, between pairs
// b−1 and b (extrapolated at the ends with rate).
func tracerAt(p []Pair, b int, at, rate float64) int64 {
	k := max(1, min(len(p)-1, b))
	a, c := p[k-1], p[k]
	slope := rate
	if dr := diff(c.Tracer, a.Tracer); dr > 0 && c.Sys != a.Sys {
		slope = diff(c.Sys, a.Sys) / dr
	}
	r := float64(a.Tracer) + (at-float64(a.Sys))/slope
	if b > 0 && b < len(p) {
		r = max(float64(p[b-1].Tracer)+1, min(float64(p[b].Tracer), r))
	}
	return int64(math.Round(r))
}

// stepsBefore counts the recorded steps placed on the tracer clock that
// reading r comes after, and returns the sum of the (whole ns) sizes of
// every step it comes after, and the variance of a reading that may lie
// on either side of an unrecorded step (the two pairs around it do not say
// when it fell), ns².
func (m *Snapshots) stepsBefore(r int64) (recorded int, shift, doubt float64) {
	for _, s := range m.steps {
		if !s.recorded && r > s.lo && r < s.hi {
			doubt += s.size * s.size
		}
		if r < s.r {
			continue
		}
		shift += math.Round(s.size)
		if s.recorded {
			recorded++
		}
	}
	return recorded, shift, doubt
}
