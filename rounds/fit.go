package rounds

import (
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/analysis/graphcalc"
	"github.com/chronosync/chronosync/analysis/offsets"
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

// FitEdge fits one edge's window.
func FitEdge(b *probelog.Block, o estimate.Options) *syncpb.EdgeAlphaBeta {
	o.Origin = b.WindowStart
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
	e.StepDetected, e.StepAtNs, e.MarginNs = f.Step, f.StepAt, f.Margin
	return e
}

// errNoReference is returned when the reference node did not report: its
// window start anchors the global timeline.
var errNoReference = errors.New("the reference node did not report")

// Solve runs GraphCalc over one round's reports (indexed by anything; nil
// entries are skipped) and turns the solution into offsets.jsonl and
// rounds.jsonl records. nodes are the probe graph's nodes. On a
// disconnected graph it returns the reference's component's records with a
// *graphcalc.DisconnectedError.
func Solve(round uint64, reports []*syncpb.NodeWindowData, nodes []int, ref int, o graphcalc.Options) (*graphcalc.RoundSummary, []offsets.Offset, []offsets.Edge, error) {
	byNode := map[int]*syncpb.NodeWindowData{}
	inGraph := make(map[int]bool, len(nodes))
	for _, n := range nodes {
		inGraph[n] = true
	}
	var in graphcalc.Input
	in.Round, in.Reference, in.Nodes = round, ref, nodes
	var recs []offsets.Edge
	var used []int // recs index of each of in.Edges
	for _, d := range reports {
		if d == nil {
			continue
		}
		byNode[int(d.NodeId)] = d
		for _, e := range d.Edges {
			recs = append(recs, offsets.Edge{
				Type: "edge", RoundID: round, WindowID: d.WindowId,
				Src: int(e.SrcNodeId), Dst: int(e.DstNodeId),
				Alpha: e.Alpha, Beta: e.Beta, Sigma: e.SigmaNs,
				PairsCount: int(e.PairsCount), LostCount: int(e.LostCount),
				Insufficient: e.Insufficient, StepDetected: e.StepDetected,
			})
			if e.Insufficient || !inGraph[int(e.DstNodeId)] {
				continue
			}
			used = append(used, len(recs)-1)
			in.Edges = append(in.Edges, graphcalc.Edge{
				Src: int(e.SrcNodeId), Dst: int(e.DstNodeId),
				Alpha: e.Alpha, Beta: e.Beta, Sigma: e.SigmaNs, AlphaSigma: e.AlphaSigma,
				SrcStart: d.WindowStartNs,
			})
		}
	}
	rd, ok := byNode[ref]
	if !ok {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, errNoReference)
	}
	in.Origin = rd.WindowStartNs
	sum, err := graphcalc.Solve(in, o)
	var disc *graphcalc.DisconnectedError
	if err != nil && !errors.As(err, &disc) {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, err)
	}
	// Attach residuals to the records of the edges GraphCalc used.
	for k, i := range used {
		r := sum.Edges[k]
		res := r.Residual
		recs[i].Residual, recs[i].Rejected = &res, r.Rejected
	}
	refEnd := float64(rd.WindowEndNs)
	offs := make([]offsets.Offset, 0, len(sum.Nodes))
	for _, m := range sum.Nodes {
		rec := offsets.Offset{Type: "offset", RoundID: round, WindowID: rd.WindowId, NodeID: m.Node, DriftPPM: m.DriftPPM(), UncertaintyNS: m.Sigma}
		if d, ok := byNode[m.Node]; ok {
			rec.WindowID, rec.WindowStartNS, rec.WindowEndNS = d.WindowId, d.WindowStartNs, d.WindowEndNs
		} else {
			// A node that did not report: its window is the reference's,
			// mapped onto its clock.
			rec.WindowStartNS = int64(float64(in.Origin) + m.U)
			rec.WindowEndNS = int64(float64(in.Origin) + m.U + m.Rate*(refEnd-float64(in.Origin)))
		}
		rec.OffsetNS = m.OffsetAt(rec.WindowStartNS)
		offs = append(offs, rec)
	}
	return sum, offs, recs, err
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
