package rounds

import (
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// consensus is a node's clock correction in consensus mode: the node's
// global time is local − offset − drift·(local − anchor). Every node starts
// with its own clock as global time and, at the end of each window, moves
// its correction a fraction (the gain) of the way towards the weighted mean
// of what its peers' corrections say, as the Firefly/ChronoSync pull
// request does. Peers' corrections travel on probe replies.
type consensus struct {
	n      *Node
	model  probe.Advert
	rounds int
}

func newConsensus(n *Node) *consensus {
	c := &consensus{n: n, model: probe.Advert{Valid: true}}
	n.prober.SetAdvert(c.model)
	return c
}

// update applies one window's fits: for each out-edge i→j with a fit and a
// known correction of j, the disagreement at the window's end is
// e_j = global_j(C_j) − global_i(x) with C_j = x + α(x − o) + β (o the
// fits' origin, the window's middle), and the
// rate disagreement is (1+α)(1 − drift_j) − (1 − drift_i). Both are averaged
// with weights 1/σ² and applied with the gain.
func (c *consensus) update(d *syncpb.NodeWindowData) {
	x := float64(d.WindowEndNs)
	span := x - float64(FitOrigin(d.WindowStartNs, d.WindowEndNs))
	own := c.model.Global(d.WindowEndNs)
	slope := 1 - c.model.Drift
	var sw, se, see, swr, ser, sree float64
	for _, e := range d.Edges {
		a := c.n.prober.PeerAdvert(world.NodeID(e.DstNodeId))
		if e.Insufficient || !a.Valid {
			continue
		}
		cj := x + e.Alpha*span + e.Beta
		w := 1 / (e.SigmaNs * e.SigmaNs)
		ej := a.Global(int64(math.Round(cj))) - own
		sw += w
		se += w * ej
		see += w * ej * ej
		wr := 1 / (e.AlphaSigma * e.AlphaSigma)
		rj := (1+e.Alpha)*(1-a.Drift) - slope
		swr += wr
		ser += wr * rj
		sree += wr * rj * rj
	}
	if sw == 0 {
		// Nothing measured: the correction stands, with no record of an
		// uncertainty nobody can state.
		c.rounds++
		return
	}
	gain := c.n.cfg.ConsensusGain
	next := c.model
	next.Offset = x - (own + gain*se/sw)
	next.Drift = 1 - (slope + gain*ser/swr)
	next.Anchor = d.WindowEndNs
	c.model = next
	c.n.prober.SetAdvert(next)
	c.rounds++
	rec := offsets.Offset{
		Type: "offset", RoundID: d.RoundId, WindowID: d.WindowId,
		WindowStartNS: d.WindowStartNs, WindowEndNS: d.WindowEndNs,
		NodeID: int(d.NodeId), DriftPPM: next.Drift * 1e6,
		UncertaintyNS:       disagreement(sw, se, see, gain),
		DriftUncertaintyPPM: disagreement(swr, ser, sree, gain) * 1e6,
	}
	rec.OffsetNS = next.OffsetAt(d.WindowStartNs)
	c.n.obs.Consensus(c.n.env.Node(), rec)
	c.n.consensusModel(rec)
}

// disagreement is the uncertainty of a consensus correction moved gain of
// the way towards the weighted mean m = se/sw of its peers' views (weights
// sum sw, weighted sum of squares see): the mean's own 1/√sw, the part of
// the mean not yet applied, (1 − gain)·m, and the spread of the views
// about it, which no single node's correction can remove. Until the nodes
// agree their models are that far apart, whatever the probes' precision.
func disagreement(sw, se, see, gain float64) float64 {
	m := se / sw
	spread := max(0, see/sw-m*m)
	rest := (1 - gain) * m
	return math.Sqrt(1/sw + rest*rest + spread)
}
