package rounds

import (
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
)

// A window's model is a line; a clock whose frequency wanders is not one,
// and its probes cannot tell (their noise is far larger than the
// curvature), but the next window's line starts where the wandered clock
// went, not where the last line pointed, and at the rate it has come to.
// So at every boundary between two windows the Solver measures how far
// each node's two models disagree, in offset (where the first window
// ends) and in rate, against what their uncertainties allow: its
// mismatches. A node's model error comes from its own last wanderMemory
// mismatches (a clock that wanders shows it, however quiet the others
// are); the mismatches of every node, pooled, give a floor (their median
// scale: see pooledOffsetError).
//
// What the mismatches say of a window's line: where two successive lines
// disagree by d at their boundary, beyond their uncertainties, each is
// off there by about d/√2 (the offset error, added to every later
// record's uncertainty_ns); where their rates disagree by Δ (a frequency
// that curved across the two windows, by Δ per window), a line of one
// window misses the curve by Δ·W/12 at the window's ends, a rate error of
// Δ/6 over the half window (added to drift_uncertainty_ppm), and by
// Δ·W/24 in its middle, where the rate's error adds nothing: Δ·W/12 (twice
// that, as the curve's own rate changes too) is added to uncertainty_ns.
// A curve bends the two lines alike where they meet, so it shows in the
// rates, not in d: 3 nodes swinging 5 ppm over 20 s put their windows'
// middles 77 ns off at 20 ns of σ before this term.
// Across a whole window, from one window's middle to the next, a line
// misses the curve by about Δ·W/2: the self-check and the carrying of
// models to the next window for steps between windows allow that much.
const wanderMemory = 8

// mismatch is how far two successive windows' models of a node disagree:
// in offset where the first ends and the second begins, d (ns), with the
// variance their uncertainties give it, v (both 0 when either model has a
// step: a step is not a mismatch); in rate, dr, with variance vr (a step
// does not move the rate).
type mismatch struct{ d, v, dr, vr float64 }

// wanderLog is the mismatches seen so far: each node's last wanderMemory,
// and every node's, for the pooled floor.
type wanderLog struct {
	byNode map[int][]mismatch
	all    []mismatch
}

// add records a mismatch of node.
func (w *wanderLog) add(node int, m mismatch) {
	if w.byNode == nil {
		w.byNode = map[int][]mismatch{}
	}
	h := append(w.byNode[node], m)
	if len(h) > wanderMemory {
		h = h[1:]
	}
	w.byNode[node] = h
	w.all = append(w.all, m)
}

// modelErr is a node's model error: offset, ns, the 1σ error of a
// window's line that its uncertainty leaves out; rate, that of its slope
// over the window (Δ/6); curve, how fast its rate moves between windows,
// per window (Δ): a line carried over a distance dt from its window's
// middle misses by curve·dt/2 more; n, how many mismatches of the node's
// these come from.
type modelErr struct {
	offset, rate, curve float64
	n                   int
}

// modelError is node's model error from its own mismatches, with the
// pooled offset error of every node's as a floor.
func (w *wanderLog) modelError(node int) modelErr {
	me := modelErr{offset: pooledOffsetError(w.all)}
	h := w.byNode[node]
	me.n = len(h)
	if len(h) == 0 {
		return me
	}
	var ex, exr float64
	n := 0
	for _, m := range h {
		if m.v > 0 {
			ex += m.d*m.d - m.v
			n++
		}
		exr += m.dr*m.dr - m.vr
	}
	if ex > 0 {
		me.offset = max(me.offset, math.Sqrt(ex/float64(n)/2))
	}
	if exr > 0 {
		me.curve = math.Sqrt(exr / float64(len(h)))
		me.rate = me.curve / 6
	}
	return me
}

// medianChi2One is the median of a χ² of one degree of freedom: of z² for
// a standard normal z.
const medianChi2One = 0.454936

// pooledOffsetError is the floor of every node's offset error, from the
// boundary mismatches of all nodes so far: their scale in units of their
// stated σ is the square root of the median z²/0.455 (the median, so that
// one node's wander or step does not raise every other node's), and the
// variance beyond 1 in that scale, shared by the two models of each
// mismatch, is the floor's. 0 while there are fewer than four mismatches
// or they are within their σ.
func pooledOffsetError(ms []mismatch) float64 {
	if len(ms) < 4 {
		return 0
	}
	var z2, v []float64
	for _, m := range ms {
		if m.v > 0 {
			z2, v = append(z2, m.d*m.d/m.v), append(v, m.v)
		}
	}
	if len(z2) < 4 {
		return 0
	}
	scale := stats.Median(z2) / medianChi2One
	if scale <= 1 {
		return 0
	}
	return math.Sqrt((scale - 1) * stats.Median(v) / 2)
}

// addModelError measures how far each node's model of this round
// disagrees with its model of the round before, and widens every
// uncertainty of this round by the node's model error (see modelError).
// The reference is left out of the measurements, and so is the offset
// of a node with a step recorded in either round.
func (s *Solver) addModelError(round uint64, offs []offsets.Offset) {
	last := s.prev
	s.prev = make(map[int]offsets.Offset, len(offs))
	for _, o := range offs {
		s.prev[o.NodeID] = o
		p, ok := last[o.NodeID]
		if !ok || o.NodeID == s.ref || p.RoundID+1 != round {
			continue
		}
		m := mismatch{
			dr: (p.DriftPPM - o.DriftPPM) * 1e-6,
			vr: (p.DriftUncertaintyPPM*p.DriftUncertaintyPPM + o.DriftUncertaintyPPM*o.DriftUncertaintyPPM) * 1e-12,
		}
		if len(p.Steps) == 0 && len(o.Steps) == 0 {
			at := o.WindowStartNS
			sp, so := p.SigmaAt(at), o.SigmaAt(at)
			m.d, m.v = p.Global(at)-o.Global(at), sp*sp+so*so
		}
		s.wander.add(o.NodeID, m)
	}
	for i := range offs {
		if offs[i].NodeID == s.ref {
			continue
		}
		me := s.wander.modelError(offs[i].NodeID)
		w := float64(offs[i].WindowEndNS - offs[i].WindowStartNS)
		offs[i].UncertaintyNS = math.Hypot(offs[i].UncertaintyNS, math.Hypot(me.offset, me.curve*w/12))
		offs[i].DriftUncertaintyPPM = math.Hypot(offs[i].DriftUncertaintyPPM, me.rate*1e6)
	}
}
