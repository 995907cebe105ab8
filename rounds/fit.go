package rounds

import (
	"math"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// FitWindow fits every out-edge of one node's window with the estimator in
// o (its Origin is set to each block's window start) and returns the node's
// report. An edge with too few usable pairs is reported as insufficient,
// never as a zero fit.
func FitWindow(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options) *syncpb.NodeWindowData {
	d := &syncpb.NodeWindowData{NodeId: int32(node), Incarnation: incarnation}
	for i := range blocks {
		b := &blocks[i]
		if i == 0 {
			d.WindowId, d.RoundId = b.WindowID, b.RoundID
			d.WindowStartNs, d.WindowEndNs = b.WindowStart, b.WindowEnd
		}
		d.Edges = append(d.Edges, FitEdge(b, o))
	}
	return d
}

// FitOrigin is the x origin of every edge fit of a window [start, end) of
// the src clock: its middle, where the fitted offset's error is least and
// least correlated with the drift's. Beta and its sigma are at FitOrigin.
func FitOrigin(start, end int64) int64 { return start + (end-start)/2 }

// FitEdge fits one edge's window, with Beta at FitOrigin.
func FitEdge(b *probelog.Block, o estimate.Options) *syncpb.EdgeAlphaBeta {
	o.Origin = FitOrigin(b.WindowStart, b.WindowEnd)
	e := &syncpb.EdgeAlphaBeta{
		SrcNodeId: int32(b.Src), DstNodeId: int32(b.Dst),
		LostCount: int32(b.Lost), SentPairs: int32(b.SentPairs),
		Estimator: string(o.Kind),
	}
	f, err := estimate.Estimate(b.Probes, o)
	e.PairsCount, e.PurePairs = int32(f.Pairs), int32(f.Pure)
	if err != nil {
		// Report how many complete pairs there were: why it is insufficient.
		e.Insufficient = true
		e.PairsCount = int32(completePairs(b.Probes))
		return e
	}
	e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma = f.Alpha, f.Beta, f.Sigma, f.AlphaSigma
	e.StepDetected, e.StepAtNs, e.StepAfterNs, e.MarginNs, e.AsymSigmaNs = f.Step, f.StepAt, f.StepAfter, f.Margin, f.AsymSigma
	if p := f.Pre; p != nil {
		e.PreStep = &syncpb.EdgeFit{Alpha: p.Alpha, Beta: p.Beta, SigmaNs: p.Sigma, AlphaSigma: p.AlphaSigma, PairsCount: int32(p.Pairs), AsymSigmaNs: p.AsymSigma}
	}
	if floor := timestampFloor(b, o); floor > 0 {
		e.SigmaNs, e.AsymSigmaNs = math.Hypot(e.SigmaNs, floor), math.Hypot(e.AsymSigmaNs, floor)
		if p := e.PreStep; p != nil {
			p.SigmaNs, p.AsymSigmaNs = math.Hypot(p.SigmaNs, floor), math.Hypot(p.AsymSigmaNs, floor)
		}
	}
	return e
}

// timestampFloor is the systematic σ the window's timestamps carry that
// its probes cannot show, ns (see estimate.Options.TimestampSigma): the
// timestamps' own, and the user-space t3 readings' in proportion to how
// many probes have one.
func timestampFloor(b *probelog.Block, o estimate.Options) float64 {
	floor := float64(o.TimestampSigma)
	if o.UserT3Sigma > 0 && len(b.Probes) > 0 {
		_, user, _ := b.T3Sources()
		floor = math.Hypot(floor, float64(o.UserT3Sigma)*float64(user)/float64(len(b.Probes)))
	}
	return floor
}

// completePairs counts the pairs of which both probes were answered.
func completePairs(probes []estimate.Probe) int {
	n := 0
	for i := 1; i < len(probes); i++ {
		if probes[i].Pair == probes[i-1].Pair && probes[i].Slot != probes[i-1].Slot {
			n++
		}
	}
	return n
}
