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
	// The answer of the last covering lookup and the readings it holds for,
	// [from, until): successive readings of a trace mostly fall there.
	win         offsets.Offset
	from, until int64
	seg         int // the snapshot segment of the last reading (see Snapshots.toHost)
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
	t.Global = s
	if n.offs == nil {
		t.Flags |= NoOffsets
		t.Sigma = max(minSigma, sigma)
		return t
	}
	var o offsets.Offset
	covered := s >= n.from && s < n.until
	if covered {
		o = n.win
	} else {
		var until int64
		o, covered, until = n.offs.LookupUntil(n.id, s)
		if covered {
			n.win, n.from, n.until = o, s, until
		}
	}
	if o.NodeID != n.id || (o == offsets.Offset{}) {
		t.Flags |= NoOffsets
		t.Sigma = max(minSigma, sigma)
		return t
	}
	if !covered {
		t.Flags |= OutsideWindows
	}
	corr := o.OffsetNS + o.DriftPPM*1e-6*diff(s, o.WindowStartNS)
	t.Global = s - int64(math.Round(corr))
	t.Sigma = max(minSigma, math.Hypot(sigma, o.UncertaintyNS))
	return t
}
