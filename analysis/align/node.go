package align

import "github.com/chronosync/chronosync/analysis/offsets"

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
	windowStart     int64
}

// NewNode aligns node id's readings with its snapshot pairs and GraphCalc's
// offsets. snaps nil means the trace is already on the host clock S (or no
// snapshots exist: then R is taken as S, which the caller should flag);
// offs nil means no global correction.
func NewNode(id int, snaps *Snapshots, offs *offsets.Index) *Node {
	return &Node{id: id, snaps: snaps, offs: offs}
}

// Align maps a tracer reading r to global time. A Node is not safe for
// concurrent use (it remembers its last window).
func (n *Node) Align(r int64) Time {
	a := n.align(r)
	return Time{Global: a.global, Sigma: n.sigma(a.q, a.unc), Flags: a.flags}
}

// AlignSpan aligns the start r0 and end r1 of an event as Align does,
// but gives both the larger of their two uncertainties, worked out once
// where they share a window.
func (n *Node) AlignSpan(r0, r1 int64) (start, end Time) {
	a, b := n.align(r0), n.align(r1)
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
}

// align is Align but for the uncertainty.
func (n *Node) align(r int64) reading {
	a := reading{global: r, unc: -1}
	if n.snaps != nil {
		var ext bool
		a.global, a.q, ext = n.snaps.toHostQ(r, &n.seg)
		if ext {
			a.flags |= Extrapolated
		}
	}
	s := a.global
	if s < n.from || s >= n.until { // not the last window's
		if !n.lookup(s, &a.flags) {
			return a
		}
	}
	corr := n.off + n.drift*diff(s, n.windowStart)
	a.global = s - round(corr)
	a.unc = n.unc
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
	if n.offs == nil {
		*flags |= NoOffsets
		return false
	}
	o, covered, until := n.offs.LookupUntil(n.id, s)
	if o.NodeID != n.id || (o == offsets.Offset{}) {
		*flags |= NoOffsets
		return false
	}
	n.off, n.drift, n.unc, n.windowStart = o.OffsetNS, o.DriftPPM*1e-6, o.UncertaintyNS*o.UncertaintyNS, o.WindowStartNS
	n.from, n.until = 0, 0
	if covered {
		n.from, n.until = s, until
	} else {
		*flags |= OutsideWindows
	}
	return true
}
