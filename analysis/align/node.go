package align

import (
	"math"

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
	var t Time
	s, sigma := r, 0.0
	if n.snaps != nil {
		var ext bool
		s, sigma, ext = n.snaps.toHost(r, &n.seg)
		if ext {
			t.Flags |= Extrapolated
		}
	}
	if s < n.from || s >= n.until { // not the last window's
		if !n.lookup(s, &t) {
			t.Global, t.Sigma = s, max(minSigma, sigma)
			return t
		}
	}
	corr := n.off + n.drift*diff(s, n.windowStart)
	t.Global = s - int64(math.Round(corr))
	// Not math.Hypot, which guards against overflow at a third of the
	// cost of the whole alignment: these are ns, far from overflowing.
	t.Sigma = max(minSigma, math.Sqrt(sigma*sigma+n.unc))
	return t
}

// lookup finds the model for host reading s, sets n's to it and flags t
// with what it assumed; it reports false, flagging NoOffsets, when the
// node has none. A model that covers s is kept for the readings after s
// that it covers too.
func (n *Node) lookup(s int64, t *Time) bool {
	if n.offs == nil {
		t.Flags |= NoOffsets
		return false
	}
	o, covered, until := n.offs.LookupUntil(n.id, s)
	if o.NodeID != n.id || (o == offsets.Offset{}) {
		t.Flags |= NoOffsets
		return false
	}
	n.off, n.drift, n.unc, n.windowStart = o.OffsetNS, o.DriftPPM*1e-6, o.UncertaintyNS*o.UncertaintyNS, o.WindowStartNS
	n.from, n.until = 0, 0
	if covered {
		n.from, n.until = s, until
	} else {
		t.Flags |= OutsideWindows
	}
	return true
}
