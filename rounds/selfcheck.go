package rounds

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

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
// is not a miss; one that was not found is), and the round's solution did
// not reject it. The two directions of a link are one prediction, their
// residuals averaged (they measure one offset through the same two
// models), which counts for both of its nodes.

// selfCheck fills in each record's SelfCheck from the edges of this
// round and the records the Solver published the round before. doubt is,
// by node, a step of this round's window too small to attribute that may
// have been the node's (inWindowSteps.doubt): its edges' measurements may
// have moved by as much since the last round.
func (s *Solver) selfCheck(round uint64, reports []*syncpb.NodeWindowData, offs []offsets.Offset, rejected map[[2]int]bool, doubt map[int]float64) {
	checks := SelfCheck(round, s.published, reports, offs, rejected, func(p offsets.Offset, l int64) (float64, bool) {
		w, ok := s.wanderOver(p, l)
		return math.Hypot(w, doubt[p.NodeID]), ok
	})
	for i := range offs {
		offs[i].SelfCheck = checks[offs[i].NodeID]
	}
}

// SelfCheck predicts each sufficient edge of reports (one round's) from
// prev, every node's model of the round before, and returns each node's
// self-check (see the top of this file; nil for a node with no
// prediction). cur are the round's own models, whose steps keep their
// nodes' edges out; rejected are the edges (src, dst) the round's
// solution rejected as outliers, which are left out too (a measurement
// already known to disagree with the graph, and warned of, says nothing
// of the models' σ; nil for none); wander(p, l) is how far a node's model p may have
// missed its clock at reading l, past its window, for what the models
// cannot say (its wander, a step too small to attribute), and false while
// that cannot be told yet (the node's edges are then not predicted). The Solver runs it on every round;
// consensus mode, which has no Solver, on its records after a run.
func SelfCheck(round uint64, prev map[int]offsets.Offset, reports []*syncpb.NodeWindowData, cur []offsets.Offset, rejected map[[2]int]bool, wander func(p offsets.Offset, l int64) (float64, bool)) map[int]*offsets.SelfCheck {
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
	// Both directions of a link measure one offset (of opposite sign),
	// through the same two models and much the same path: they are one
	// prediction, their residuals averaged.
	links := map[[2]int]*linkResidual{}
	var order [][2]int
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
				!have[src] || !have[dst] || stepped[src] || stepped[dst] || rejected[[2]int{src, dst}] {
				continue
			}
			pred, lj := predictOffset(pi, pj, x)
			wi, ok1 := wander(pi, x)
			wj, ok2 := wander(pj, lj)
			if !ok1 || !ok2 {
				continue
			}
			r := linkResidual{
				r:      e.Beta - pred,
				models: sq(pi.SigmaAt(x)) + sq(pj.SigmaAt(lj)) + sq(wi) + sq(wj),
				meas:   e.SigmaNs,
				n:      1,
			}
			key := [2]int{min(src, dst), max(src, dst)}
			if src > dst {
				r.r = -r.r
			}
			if l := links[key]; l != nil {
				l.add(r)
				continue
			}
			links[key] = &r
			order = append(order, key)
		}
	}
	for _, key := range order {
		z := links[key].sigmas()
		count(key[0], z)
		count(key[1], z)
	}
	return checks
}

// linkResidual is a link's measured offset less its prediction, summed
// over the link's directions (n), each direction's residual signed as
// from the lower node id to the higher: models sums the variances of the
// predictions, meas the measurements' σ (added, not in quadrature: the
// two directions share the path's asymmetry).
type linkResidual struct {
	r, models, meas float64
	n               int
}

func (l *linkResidual) add(o linkResidual) {
	l.r += o.r
	l.models += o.models
	l.meas += o.meas
	l.n += o.n
}

// sigmas is the mean residual in units of its σ.
func (l *linkResidual) sigmas() float64 {
	n := float64(l.n)
	return math.Abs(l.r/n) / math.Sqrt(l.models/n+sq(l.meas/n))
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
// modelErr), and false before the node has a mismatch (the reference,
// whose model is exact by definition, always has 0). The rate's change
// is an RMS over few mismatches, which may have come out small by chance
// (one of a random walk's is below a tenth of its σ 8 % of the time):
// the self-check takes its 84 % upper bound, √(n/χ²ₙ(0.16)) times it
// (5 for one mismatch, 2.4 for two, 1.3 for eight), lest a wandering
// node's first rounds fail it while its records are honest.
func (s *Solver) wanderOver(p offsets.Offset, l int64) (float64, bool) {
	if p.NodeID == s.ref {
		return 0, true
	}
	me := s.wander.modelError(p.NodeID)
	if me.n == 0 {
		return 0, false
	}
	n := float64(me.n)
	upper := math.Sqrt(n / distuv.ChiSquared{K: n}.Quantile(0.16))
	mid := p.WindowStartNS + (p.WindowEndNS-p.WindowStartNS)/2
	return upper * me.curve * math.Abs(float64(l-mid)) / 2, true
}

func sq(v float64) float64 { return v * v }
