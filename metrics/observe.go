package metrics

import (
	"strconv"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// ns is the number of seconds in a nanosecond.
const ns = 1e-9

// ObserveRound records one round the master gathered and solved: the
// per-round metrics (on a master's Metrics), every solved node's model (as
// [Metrics.ObserveModel]), each participant's status (ok, unsolved,
// missing), every edge's fit and solver residual, and the probe counts of
// every reported edge. Call it from the master's rounds.Observer.Round; a
// nil r is ignored.
func (m *Metrics) ObserveRound(r *rounds.RoundReport) {
	if r == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rm := m.round; rm != nil {
		f := r.Figures
		rm.latency.Observe(f.EndToStart.Seconds())
		rm.latencyLast.Set(f.EndToStart.Seconds())
		rm.gatherWait.Set(f.GatherWait.Seconds())
		rm.skew.Set(f.SequenceSkew.Seconds())
		rm.window.Set(f.Window.Seconds())
		rm.retries.Add(float64(max(f.Retries, 0)))
		rm.bytes.Add(float64(max(f.MessageBytes, 0)))
		rm.missing.Set(float64(len(r.Missing)))
		for _, n := range r.Missing {
			rm.missedBy.WithLabelValues(strconv.Itoa(n)).Inc()
		}
		rm.results.WithLabelValues(result(r)).Inc()
		for reason, n := range r.Refused {
			rm.refused.WithLabelValues(reason).Add(float64(max(n, 0)))
		}
		rm.id.Set(float64(r.Round))
		rm.last.Set(float64(m.now().UnixNano()) * ns)
		if s := r.Summary; s != nil {
			rm.residualRMS.Set(s.RMSResidual * ns)
			rm.residualMax.Set(s.MaxResidual * ns)
			rm.birge.Set(s.Consistency.Birge)
			if !s.Consistency.Consistent {
				rm.inconsistent.Inc()
			}
		}
	}

	ref := -1
	if r.Summary != nil {
		ref = r.Summary.Reference
	}
	solved := map[int]bool{}
	for _, o := range r.Offsets {
		solved[o.NodeID] = true
		m.observeModelLocked(o, ref)
	}
	for _, d := range r.Nodes {
		if d == nil {
			continue
		}
		if !solved[int(d.NodeId)] {
			m.setStatusLocked(int(d.NodeId), StatusUnsolved)
		}
		for _, e := range d.Edges {
			m.countEdgeLocked(e, d.RoundId, d.WindowId)
		}
	}
	for _, n := range r.Missing {
		m.setStatusLocked(n, StatusMissing)
	}
	for _, e := range r.Edges {
		if m.noEdges {
			break
		}
		src, dst := strconv.Itoa(e.Src), strconv.Itoa(e.Dst)
		if !e.Insufficient {
			m.edgeOffset.WithLabelValues(src, dst).Set(e.Beta * ns)
			m.edgeSigma.WithLabelValues(src, dst).Set(e.Sigma * ns)
			m.edgeDrift.WithLabelValues(src, dst).Set(e.Alpha)
		}
		if e.Residual != nil {
			m.edgeResidual.WithLabelValues(src, dst).Set(*e.Residual * ns)
		} else {
			m.edgeResidual.DeleteLabelValues(src, dst)
		}
		if e.Rejected {
			m.edgeRejected.WithLabelValues(src, dst).Inc()
		}
	}
}

// result is r's label of chronosync_rounds_total.
func result(r *rounds.RoundReport) string {
	switch {
	case r.Summary == nil:
		return ResultUnsolved
	case r.Err != nil: // e.g. a *graphcalc.DisconnectedError
		return ResultPartial
	}
	return ResultSolved
}

// ObserveModel records node o.NodeID's model against global time, with
// ref the reference node (negative: unknown): its offset, drift and their
// σ, the round it is of, its clock steps and its self-check, and the
// status ok. A node calls it with the model it holds (in consensus mode
// rounds.Observer.Consensus gives it; a node of a master's round gets its
// model from the master); on the master ObserveRound calls it for every
// solved node. A model already counted (the same node and round) updates
// the gauges again but does not count its steps and self-check twice.
func (m *Metrics) ObserveModel(o offsets.Offset, ref int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.observeModelLocked(o, ref)
}

func (m *Metrics) observeModelLocked(o offsets.Offset, ref int) {
	n := strconv.Itoa(o.NodeID)
	m.nodeOffset.WithLabelValues(n).Set(o.OffsetNS * ns)
	m.nodeOffsetSigma.WithLabelValues(n).Set(o.UncertaintyNS * ns)
	m.nodeDrift.WithLabelValues(n).Set(o.DriftPPM * 1e-6)
	m.nodeDriftSigma.WithLabelValues(n).Set(o.DriftUncertaintyPPM * 1e-6)
	m.nodeModelRound.WithLabelValues(n).Set(float64(o.RoundID))
	m.setStatusLocked(o.NodeID, StatusOK)
	m.setReferenceLocked(ref)
	if last, ok := m.modelRound[o.NodeID]; ok && last == o.RoundID {
		return
	}
	m.modelRound[o.NodeID] = o.RoundID
	m.nodeSteps.WithLabelValues(n).Add(float64(len(o.Steps)))
	if sc := o.SelfCheck; sc != nil {
		m.selfPredictions.WithLabelValues(n).Add(float64(max(sc.Predictions, 0)))
		m.selfWithin.WithLabelValues(n).Add(float64(max(sc.Within3Sigma, 0)))
		m.selfWorst.WithLabelValues(n).Set(sc.MaxSigma)
	}
}

// ObserveWindow records a window node closed: where each probe's t3 came
// from, per out-edge (chronosync_edge_probe_t3_total), and, from data, each
// edge's fit and probe counts. Call it from the node's
// rounds.Observer.Window. Counts already taken for an edge's window (by
// ObserveRound on the master, which sees the same report) are not taken
// twice.
func (m *Metrics) ObserveWindow(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
	if m.noEdges {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range blocks {
		b := &blocks[i]
		k, w := [2]int{b.Src, b.Dst}, [2]uint64{b.RoundID, b.WindowID}
		if last, ok := m.t3Window[k]; ok && last == w {
			continue
		}
		m.t3Window[k] = w
		src, dst := strconv.Itoa(b.Src), strconv.Itoa(b.Dst)
		counts := map[string]int{}
		for j := range b.Probes {
			counts[b.Probes[j].T3Source.String()]++
		}
		for source, c := range counts {
			m.edgeT3.WithLabelValues(src, dst, source).Add(float64(c))
		}
	}
	if data == nil {
		return
	}
	for _, e := range data.Edges {
		if e == nil {
			continue
		}
		if !e.Insufficient {
			src, dst := strconv.Itoa(int(e.SrcNodeId)), strconv.Itoa(int(e.DstNodeId))
			m.edgeOffset.WithLabelValues(src, dst).Set(e.Beta * ns)
			m.edgeSigma.WithLabelValues(src, dst).Set(e.SigmaNs * ns)
			m.edgeDrift.WithLabelValues(src, dst).Set(e.Alpha)
		}
		m.countEdgeLocked(e, data.RoundId, data.WindowId)
	}
}

// countEdgeLocked adds e's probe counts, once per edge and window.
func (m *Metrics) countEdgeLocked(e *syncpb.EdgeAlphaBeta, round, window uint64) {
	if e == nil || m.noEdges {
		return
	}
	k, w := [2]int{int(e.SrcNodeId), int(e.DstNodeId)}, [2]uint64{round, window}
	if last, ok := m.edgeWindow[k]; ok && last == w {
		return
	}
	m.edgeWindow[k] = w
	src, dst := strconv.Itoa(int(e.SrcNodeId)), strconv.Itoa(int(e.DstNodeId))
	m.edgeSent.WithLabelValues(src, dst).Add(float64(max(e.SentPairs, 0)))
	m.edgeAnswered.WithLabelValues(src, dst).Add(float64(max(e.PairsCount, 0)))
	m.edgeImpure.WithLabelValues(src, dst).Add(float64(max(e.PairsCount-e.PurePairs, 0)))
	m.edgeLost.WithLabelValues(src, dst).Add(float64(max(e.LostCount, 0)))
	if e.Insufficient {
		m.edgeInsufficient.WithLabelValues(src, dst).Inc()
	}
}
