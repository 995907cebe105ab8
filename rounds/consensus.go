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
// e_j = global_j(C_j) − global_i(x) with C_j = x + α(x − ws) + β, and the
// rate disagreement is (1+α)(1 − drift_j) − (1 − drift_i). Both are averaged
// with weights 1/σ² and applied with the gain.
func (c *consensus) update(d *syncpb.NodeWindowData) {
	x := float64(d.WindowEndNs)
	span := x - float64(d.WindowStartNs)
	own := c.model.Global(x)
	slope := 1 - c.model.Drift
	var sw, se, swr, ser float64
	for _, e := range d.Edges {
		a := c.n.prober.PeerAdvert(world.NodeID(e.DstNodeId))
		if e.Insufficient || !a.Valid {
			continue
		}
		cj := x + e.Alpha*span + e.Beta
		w := 1 / (e.SigmaNs * e.SigmaNs)
		sw += w
		se += w * (a.Global(cj) - own)
		wr := 1 / (e.AlphaSigma * e.AlphaSigma)
		swr += wr
		ser += wr * ((1+e.Alpha)*(1-a.Drift) - slope)
	}
	gain := c.n.cfg.ConsensusGain
	next := c.model
	unc := math.Inf(1)
	if sw > 0 {
		next.Offset = x - (own + gain*se/sw)
		next.Drift = 1 - (slope + gain*ser/swr)
		next.Anchor = d.WindowEndNs
		unc = 1 / math.Sqrt(sw)
	}
	c.model = next
	c.n.prober.SetAdvert(next)
	c.rounds++
	rec := offsets.Offset{
		Type: "offset", RoundID: d.RoundId, WindowID: d.WindowId,
		WindowStartNS: d.WindowStartNs, WindowEndNS: d.WindowEndNs,
		NodeID: int(d.NodeId), DriftPPM: next.Drift * 1e6, UncertaintyNS: unc,
	}
	rec.OffsetNS = float64(d.WindowStartNs) - next.Global(float64(d.WindowStartNs))
	if math.IsInf(unc, 1) {
		rec.UncertaintyNS = -1
	}
	c.n.obs.Consensus(c.n.env.Node(), rec)
}
