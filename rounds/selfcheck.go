package rounds

import (
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// The self-check asks of every round whether the uncertainties the last
// round published were honest, without ground truth: the last round's
// models predict each edge this round's window measured (dst's clock less
// src's at the middle of src's window, where the edge's offset is fitted),
// and the measurement is compared with the prediction in units of the
// prediction's σ: both models' published σ at that reading, the
// measurement's own, and each node's wander over the distance from its
// model's window (modelErr.curve). It is the normalized innovation test of
// a Kalman filter: where the σ are honest, 99.73 % of the predictions lie
// within 3σ. A clock step no detector found, a node whose wander its σ
// understates, a path whose asymmetry changed, all show as predictions
// beyond 3σ on that node's edges.
//
// An edge is predicted when both its nodes have a model of the round
// before and neither has a clock step recorded in this round (a step found
// is not a miss; one that was not found is). Each prediction counts for
// both of its nodes.

// selfCheck fills in each record's SelfCheck from the edges of this
// round and the records the Solver published the round before.
func (s *Solver) selfCheck(round uint64, edges []inEdge, offs []offsets.Offset) {
	stepped := make(map[int]bool, len(offs))
	at := make(map[int]int, len(offs))
	for i, o := range offs {
		at[o.NodeID] = i
		stepped[o.NodeID] = len(o.Steps) > 0
	}
	checks := map[int]*offsets.SelfCheck{}
	count := func(node int, z float64) {
		c := checks[node]
		if c == nil {
			c = &offsets.SelfCheck{}
			checks[node] = c
		}
		c.Predictions++
		if z <= 3 {
			c.Within3Sigma++
		}
		c.MaxSigma = max(c.MaxSigma, z)
	}
	for k := range edges {
		e := &edges[k]
		l := e.lines[len(e.lines)-1]
		pi, ok1 := s.published[e.src]
		pj, ok2 := s.published[e.dst]
		if !l.ok || !ok1 || !ok2 || pi.RoundID+1 != round || pj.RoundID+1 != round || stepped[e.src] || stepped[e.dst] {
			continue
		}
		if _, ok := at[e.src]; !ok {
			continue
		}
		if _, ok := at[e.dst]; !ok {
			continue
		}
		pred, lj := predictOffset(pi, pj, e.origin)
		sigma := math.Sqrt(sq(pi.SigmaAt(e.origin)) + sq(pj.SigmaAt(lj)) + sq(l.sigma) +
			sq(s.wanderOver(pi, e.origin)) + sq(s.wanderOver(pj, lj)))
		z := math.Abs(l.beta-pred) / sigma
		count(e.src, z)
		count(e.dst, z)
	}
	for node, c := range checks {
		offs[at[node]].SelfCheck = c
	}
}

// predictOffset is what the models pi (of src) and pj (of dst) say dst's
// clock less src's is when src reads x, and dst's reading then. Both
// clocks read the same global instant, x − offset_i(x) = L − offset_j(L),
// so the difference is offset_j(L) − offset_i(x): computed from the
// records' small terms (OffsetAfter), never from a global time near the
// epoch, where a float64 keeps only 256 ns.
func predictOffset(pi, pj offsets.Offset, x int64) (float64, int64) {
	oi := pi.OffsetAfter(x, len(pi.Steps))
	d := pj.OffsetAfter(x, len(pj.Steps)) - oi
	for range 3 {
		d = pj.OffsetAfter(x+int64(math.Round(d)), len(pj.Steps)) - oi
	}
	return d, x + int64(math.Round(d))
}

// wanderOver is how far a node's line of model p may have missed its
// wandering clock at the reading l, past its window: half its rate's
// change per window over the distance from the window's middle (see
// modelErr).
func (s *Solver) wanderOver(p offsets.Offset, l int64) float64 {
	mid := p.WindowStartNS + (p.WindowEndNS-p.WindowStartNS)/2
	return s.wander.modelError(p.NodeID).curve * math.Abs(float64(l-mid)) / 2
}

func sq(v float64) float64 { return v * v }
