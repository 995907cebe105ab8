package rounds

import (
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/rounds/syncpb"
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
func (s *Solver) selfCheck(round uint64, reports []*syncpb.NodeWindowData, offs []offsets.Offset) {
	checks := SelfCheck(round, s.published, reports, offs, func(p offsets.Offset, l int64) float64 {
		return s.wanderOver(p, l)
	})
	for i := range offs {
		offs[i].SelfCheck = checks[offs[i].NodeID]
	}
}

// SelfCheck predicts each sufficient edge of reports (one round's) from
// prev, every node's model of the round before, and returns each node's
// self-check (see the top of this file; nil for a node with no
// prediction). cur are the round's own models, whose steps keep their
// nodes' edges out; wander(p, l) is how far a node's model p may have
// missed its wandering clock at reading l, past its window (0 when
// nothing is known of its wander). The Solver runs it on every round;
// consensus mode, which has no Solver, on its records after a run.
func SelfCheck(round uint64, prev map[int]offsets.Offset, reports []*syncpb.NodeWindowData, cur []offsets.Offset, wander func(p offsets.Offset, l int64) float64) map[int]*offsets.SelfCheck {
	stepped := make(map[int]bool, len(cur))
	have := make(map[int]bool, len(cur))
	for _, o := range cur {
		have[o.NodeID] = true
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
	for _, d := range reports {
		if d == nil {
			continue
		}
		x := FitOrigin(d.WindowStartNs, d.WindowEndNs)
		for _, e := range d.Edges {
			src, dst := int(e.SrcNodeId), int(e.DstNodeId)
			pi, ok1 := prev[src]
			pj, ok2 := prev[dst]
			if e.Insufficient || !ok1 || !ok2 || pi.RoundID+1 != round || pj.RoundID+1 != round ||
				!have[src] || !have[dst] || stepped[src] || stepped[dst] {
				continue
			}
			pred, lj := predictOffset(pi, pj, x)
			sigma := math.Sqrt(sq(pi.SigmaAt(x)) + sq(pj.SigmaAt(lj)) + sq(e.SigmaNs) + sq(wander(pi, x)) + sq(wander(pj, lj)))
			z := math.Abs(e.Beta-pred) / sigma
			count(src, z)
			count(dst, z)
		}
	}
	return checks
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
