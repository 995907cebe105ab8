package align

import (
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// Flags say what an aligned time had to assume.
type Flags uint8

const (
	// Extrapolated: the tracer reading lies before the first or after the
	// last snapshot pair.
	Extrapolated Flags = 1 << iota
	// OutsideWindows: no GraphCalc window covers the host reading; the
	// nearest window's model was used.
	OutsideWindows
	// NoOffsets: the node has no clock model at all; its host clock was
	// taken as global time.
	NoOffsets
	// Overflow: the reading's host or global time lies beyond the int64
	// range of ns (a clock model or snapshot pairs far out of range);
	// Global means nothing. A caller must refuse such a time.
	Overflow
	// AcrossStep: the span's start and end (AlignSpan) lie on either side
	// of a step of the node's host clock. Both are mapped through the
	// tracer clock, which did not step, so the span keeps its length.
	AcrossStep
)

// Time is an aligned reading: global time in ns, its 1σ uncertainty in ns,
// and what it assumed.
type Time struct {
	Global int64
	Sigma  float64
	Flags  Flags
}

// Node aligns one node's tracer readings.
type Node struct {
	id    int
	snaps *Snapshots     // nil: R is taken as S
	offs  *offsets.Index // nil: S is taken as global
	seg   int            // the snapshot segment of the last reading (see Snapshots.toHost)
	// The model of the last covering lookup, and the host readings it
	// holds for, [from, until) (empty: none yet): successive readings of a
	// trace mostly fall there.
	from, until     int64
	off, drift, unc float64 // OffsetNS, DriftPPM·1e-6 and UncertaintyNS²
	du, mid         float64 // DriftUncertaintyPPM·1e-6 and the window's middle
	windowStart     int64
	// The node's host clock steps (from its records; see StepsOf) and
	// where each came from.
	steps []HostStep
	refs  []stepRef
	// rec is the model of the last lookup when its window holds a step
	// (then nothing is cached), and first the index in steps of its first.
	rec   *offsets.Offset
	first int
}

// NewNode aligns node id's readings with its snapshot pairs and GraphCalc's
// offsets. snaps nil means the trace is already on the host clock S (or no
// snapshots exist: then R is taken as S, which the caller should flag);
// offs nil means no global correction. Where the node's host clock
// stepped, snaps should come from NewSnapshotsStepped with StepsOf(offs,
// id): then a reading's side of each step is known from the tracer clock;
// otherwise it is judged from the host reading (see
// offsets.Offset.StepsBefore), and the uncertainty near a step covers the
// doubt.
func NewNode(id int, snaps *Snapshots, offs *offsets.Index) *Node {
	n := &Node{id: id, snaps: snaps, offs: offs}
	n.steps, n.refs = stepsOf(offs, id)
	return n
}

// stepAware reports whether the snapshot mapping places the host clock's
// recorded steps on the tracer clock.
func (n *Node) stepAware() bool { return n.snaps != nil && len(n.steps) > 0 && len(n.snaps.steps) > 0 }

// Align maps a tracer reading r to global time. A Node is not safe for
// concurrent use (it remembers its last window).
func (n *Node) Align(r int64) Time {
	a := n.align(r)
	return Time{Global: a.global, Sigma: n.sigma(a.q, a.unc), Flags: a.flags}
}

// alignSpan is AlignSpan for any readings (see span.go for the common
// ones).
func (n *Node) alignSpan(r0, r1 int64) (start, end Time) {
	a, b := n.align(r0), n.align(r1)
	if a.steps != b.steps {
		a.flags |= AcrossStep
		b.flags |= AcrossStep
	}
	var sigma float64
	if a.unc == b.unc {
		// The uncertainty grows with q for a given unc (every step of
		// sigma is monotonic, rounding included).
		sigma = n.sigma(max(a.q, b.q), a.unc)
	} else {
		sigma = max(n.sigma(a.q, a.unc), n.sigma(b.q, b.unc))
	}
	return Time{Global: a.global, Sigma: sigma, Flags: a.flags}, Time{Global: b.global, Sigma: sigma, Flags: b.flags}
}

// reading is an aligned reading before its uncertainty is worked out.
type reading struct {
	global int64
	q      float64 // the snapshot mapping's variance, ns² (see Snapshots.toHostQ); 0 without snapshots
	unc    float64 // the clock model's variance, ns²; −1 without one
	flags  Flags
	steps  int // the host clock steps the reading comes after
}

// align is Align but for the uncertainty.
func (n *Node) align(r int64) reading {
	a := reading{global: r, unc: -1}
	if n.snaps != nil {
		a.global, a.q, a.flags = n.snaps.toHostQ(r, &n.seg)
		if len(n.snaps.steps) > 0 {
			// The mapping is of the unbroken host clock: put back the
			// steps the reading came after, as the clock read.
			var shift, doubt float64
			a.steps, shift, doubt = n.snaps.stepsBefore(r)
			a.global += int64(shift)
			a.q += doubt
		}
	}
	s := a.global
	if s < n.from || s >= n.until { // not the last window's
		if !n.lookup(s, &a.flags) {
			return a
		}
	}
	if n.rec != nil {
		return n.alignStepped(a, s)
	}
	corr := n.off + n.drift*diff(s, n.windowStart)
	c := round(corr)
	a.global = s - c
	// Overflowed: the difference went the wrong way, or the correction
	// was beyond round's reach (or NaN).
	if (a.global > s) != (c < 0) || !(corr >= -1<<63 && corr < 1<<63) {
		a.flags |= Overflow
	}
	d := n.du * (float64(s) - n.mid)
	a.unc = n.unc + d*d
	return a
}

// alignStepped maps host reading s with the model of a window that holds
// a step: of its steps, those the reading came after (by the tracer clock
// when the mapping knows the steps, else by s itself).
func (n *Node) alignStepped(a reading, s int64) reading {
	o := n.rec
	var g float64
	if n.stepAware() {
		j := max(0, min(a.steps-n.first, len(o.Steps)))
		g, a.unc = o.GlobalAfter(s, j), o.SigmaAfter(s, j)*o.SigmaAfter(s, j)
	} else {
		a.steps = o.StepsBefore(s)
		g, a.unc = o.Global(s), o.SigmaAt(s)*o.SigmaAt(s)
	}
	if !(g >= -1<<63 && g < 1<<63) {
		a.flags |= Overflow
		return a
	}
	a.global = int64(math.Round(g))
	return a
}

// sigma is the uncertainty of a reading whose snapshot mapping has the
// variance q (see Snapshots.toHostQ; 0 without snapshots) and whose clock
// model has the variance unc (−1: none).
func (n *Node) sigma(q, unc float64) float64 {
	// Not math.Hypot, which guards against overflow at a third of the
	// cost of the whole alignment: these are ns², far from overflowing.
	return sigmaOf(q + max(0, unc))
}

// lookup finds the model for host reading s, sets n's to it and adds to
// flags what it assumed; it reports false, flagging NoOffsets, when the
// node has none. A model that covers s is kept for the readings after s
// that it covers too.
func (n *Node) lookup(s int64, flags *Flags) bool {
	if n.offs == nil || !n.offs.Has(n.id) {
		*flags |= NoOffsets
		return false
	}
	o, covered, until := n.offs.LookupUntil(n.id, s)
	if o.NodeID != n.id {
		*flags |= NoOffsets
		return false
	}
	n.off, n.drift, n.unc, n.windowStart = o.OffsetNS, o.DriftPPM*1e-6, o.UncertaintyNS*o.UncertaintyNS, o.WindowStartNS
	n.du, n.mid = o.DriftUncertaintyPPM*1e-6, float64(o.WindowStartNS)/2+float64(o.WindowEndNS)/2
	n.from, n.until, n.rec = 0, 0, nil
	if !covered {
		*flags |= OutsideWindows
	}
	if len(o.Steps) > 0 {
		n.rec = &o
		n.first = slices.Index(n.refs, stepRef{o.RoundID, o.WindowStartNS, 0})
		return true
	}
	if covered {
		n.from, n.until = s, until
	}
	return true
}
