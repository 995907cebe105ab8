package rounds

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
	"google.golang.org/protobuf/proto"
)

// The master's door (issues 18 and 30): one message can cost at most its
// sender's part of one round, never the run. Every field of a report is
// checked here against the bounds the run files' writers enforce
// (analysis/offsets: Offset.Check, Edge.Check, CheckWindow, and the
// constants beside them), tightened where GraphCalc needs more
// (graphcalc.Edge.Check), so that nothing the door lets in can make a
// writer fail. A report whose node, window, node-wide uncertainty or edge
// count is wrong is refused whole (the node is missing from the round);
// an edge with a value out of bounds is dropped from the report. Each
// refusal is logged, counted by reason (RoundReport.Refused) and noted in
// the round. The master leaves out, as a last resort, any record of the
// solution a writer would still refuse (see writable).

// maxReportEdges is the most edges one report may carry in a probe graph of
// nodes nodes: one to each other node.
func maxReportEdges(nodes int) int { return max(nodes-1, 0) }

// refusal is why the door refused a report or dropped an edge: the part
// ("report", "edge") and the field it is counted under, and what is wrong.
type refusal struct {
	part, field string
	msg         string
}

func (r *refusal) Error() string { return r.msg }

// reason is the key r is counted under in RoundReport.Refused, e.g.
// "edge pairs_count".
func (r *refusal) reason() string { return r.part + " " + r.field }

func refuseReport(field, format string, args ...any) *refusal {
	return &refusal{part: "report", field: field, msg: fmt.Sprintf(format, args...)}
}

func refuseEdge(field, format string, args ...any) *refusal {
	return &refusal{part: "edge", field: field, msg: fmt.Sprintf(format, args...)}
}

// reasonOf is the reason err, from checkReport or screenEdges, is counted
// under; "other" for an error that is no refusal.
func reasonOf(err error) string {
	var r *refusal
	if errors.As(err, &r) {
		return r.reason()
	}
	return "other"
}

// fitBound is the range of one value of a fitted line at the door.
type fitBound struct {
	field  string
	lo, hi float64
	limit  string // where the bound comes from, for messages
}

// fitBounds are the bounds of a sufficient edge's fit, and of the fit
// before each of its steps: alpha and beta those of the run files
// (rounds.jsonl's Edge.Check; TestDoorBounds holds them within
// GraphCalc's), the uncertainties GraphCalc's; in the order checkFit
// takes the values.
func fitBounds() [fitValues]fitBound {
	return [fitValues]fitBound{
		{"alpha", -offsets.MaxEdgeAlpha, offsets.MaxEdgeAlpha, "offsets.MaxEdgeAlpha"},
		{"beta", -offsets.MaxEdgeBetaNS, offsets.MaxEdgeBetaNS, "offsets.MaxEdgeBetaNS"},
		{"sigma_ns", graphcalc.MinSigma, graphcalc.MaxSigma, "graphcalc.MinSigma, MaxSigma"},
		{"alpha_sigma", graphcalc.MinAlphaSigma, graphcalc.MaxAlphaSigma, "graphcalc.MinAlphaSigma, MaxAlphaSigma"},
		{"asym_sigma_ns", 0, graphcalc.MaxSigma, "graphcalc.MaxSigma"},
		{"miss_sigma_ns", 0, graphcalc.MaxSigma, "graphcalc.MaxSigma"},
	}
}

// fitValues is the number of values of a fit the door bounds.
const fitValues = 6

// checkFit says which value of a fit (in fitBounds' order) is out of its
// bounds, as a refusal of field prefix+name.
func checkFit(prefix string, vs [fitValues]float64) *refusal {
	for i, b := range fitBounds() {
		if v := vs[i]; !(v >= b.lo && v <= b.hi) { // NaN fails both
			return refuseEdge(prefix+b.field, "%s %v; want finite and within [%g, %g] (%s)", b.field, v, b.lo, b.hi, b.limit)
		}
	}
	return nil
}

// checkReport says why a report must be refused whole, or nil: it carries
// more edges than maxReportEdges (a node of a graph of nodes nodes has at
// most that many out-edges; what is beyond is an attack on the master's
// time, not data), a window that is no window of the protocol's
// (offsets.CheckWindow: its offsets.jsonl record could not be written), or
// a node-wide uncertainty that is no number of ns.
func checkReport(d *syncpb.NodeWindowData, nodes int) error {
	if n, limit := len(d.Edges), maxReportEdges(nodes); n > limit {
		return refuseReport("edges", "%d edges; a node of a %d-node probe graph has at most %d", n, nodes, limit)
	}
	if field, msg := offsets.CheckWindow(d.WindowStartNs, d.WindowEndNs); field != "" {
		return refuseReport(field, "%s: %s", field, msg)
	}
	if m := d.MissSigmaNs; !(m >= 0 && m <= graphcalc.MaxSigma) {
		return refuseReport("miss_sigma_ns", "miss_sigma_ns %v; want finite and within [0, %g]", m, graphcalc.MaxSigma)
	}
	return nil
}

// screenEdges returns node's report d without the edges the round cannot
// take, and why each of those was dropped (nil, and d itself, when none
// was; otherwise a copy, d unchanged). An edge is dropped when checkEdge
// refuses it or it repeats an earlier edge's (src, dst).
func screenEdges(node int, d *syncpb.NodeWindowData, nodes []world.NodeID) (*syncpb.NodeWindowData, []error) {
	var dropped []error
	var kept []*syncpb.EdgeAlphaBeta
	seen := make(map[int32]int, len(d.Edges)) // dst → the edge that has it
	for i, e := range d.Edges {
		err := checkEdge(node, d, e, nodes)
		if err == nil {
			if k, dup := seen[e.DstNodeId]; dup {
				err = refuseEdge("repeat", "repeats edge %d", k)
			} else {
				seen[e.DstNodeId] = i
			}
		}
		if err != nil {
			dropped = append(dropped, fmt.Errorf("edge %d (%d->%d): %w", i, e.GetSrcNodeId(), e.GetDstNodeId(), err))
			if kept == nil {
				kept = slices.Clone(d.Edges[:i])
			}
			continue
		}
		if kept != nil {
			kept = append(kept, e)
		}
	}
	if dropped == nil {
		return d, nil
	}
	c := proto.Clone(d).(*syncpb.NodeWindowData)
	c.Edges = kept
	return c, dropped
}

// checkEdge says why e cannot be one of node's edges in its report d, or
// nil; it does not look for repeats. Every edge must be from node (a node
// reports its own out-edges: see FitReport) to another node of the probe
// graph (nodes, sorted), with counts ≥ 0, a known estimator (or none), a
// finite margin, its rounds.jsonl record within the run files' bounds
// (offsets.Edge.Check) and at most estimate.MaxSteps steps, each of a
// finite size within offsets.MaxOffsetNS, at times within a year of the
// window. A sufficient edge's fit, and the fit before each step, must
// also lie within fitBounds (GraphCalc's input); an insufficient edge's
// values nothing uses but its record.
func checkEdge(node int, d *syncpb.NodeWindowData, e *syncpb.EdgeAlphaBeta, nodes []world.NodeID) error {
	if e == nil {
		return refuseEdge("empty", "empty edge")
	}
	src, dst := int(e.SrcNodeId), int(e.DstNodeId)
	if src != node {
		return refuseEdge("src_node_id", "src %d is not the reporting node %d", src, node)
	}
	if _, ok := slices.BinarySearch(nodes, world.NodeID(dst)); !ok || dst == src {
		return refuseEdge("dst_node_id", "dst %d is not another node of the probe graph", dst)
	}
	for _, c := range []struct {
		field string
		v     int32
	}{{"pairs_count", e.PairsCount}, {"lost_count", e.LostCount}, {"pure_pairs", e.PurePairs}, {"sent_pairs", e.SentPairs}} {
		if c.v < 0 {
			return refuseEdge(c.field, "%s %d; want a count ≥ 0", c.field, c.v)
		}
	}
	if k := e.Estimator; k != "" {
		if _, err := estimate.ParseKind(k); err != nil {
			return refuseEdge("estimator", "estimator %q; want one of estimate.Kinds or none", k)
		}
	}
	if m := e.MarginNs; !(math.Abs(m) <= graphcalc.MaxSigma) {
		return refuseEdge("margin_ns", "margin_ns %v; want finite and within ±%g (graphcalc.MaxSigma)", m, graphcalc.MaxSigma)
	}
	if field, msg := edgeRecord(0, d, e).Check(); field != "" {
		return refuseEdge(field, "%s: %s", field, msg)
	}
	if n := len(e.Steps); n > estimate.MaxSteps {
		return refuseEdge("steps", "%d steps; a window has at most %d", n, estimate.MaxSteps)
	}
	for k, st := range e.Steps {
		if err := checkStep(d, st); err != nil {
			err.msg = fmt.Sprintf("step %d: %s", k, err.msg)
			return err
		}
	}
	if e.Insufficient {
		return nil
	}
	if err := checkFit("", [fitValues]float64{e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma, e.AsymSigmaNs, e.MissSigmaNs}); err != nil {
		return err
	}
	return nil // not a nil *refusal
}

// checkStep says what is wrong with st, a step of an edge of report d, or
// nil. after_ns and at_ns are readings of src's clock on either side of
// the step: a step of src's backwards puts at_ns before after_ns (and a
// reading before the window's start), so their order says nothing, but no
// step moves a clock further than offsets.MaxOffsetNS.
func checkStep(d *syncpb.NodeWindowData, st *syncpb.EdgeStep) *refusal {
	if st == nil {
		return refuseEdge("steps", "empty")
	}
	if s := st.SizeNs; !(math.Abs(s) <= offsets.MaxOffsetNS) {
		return refuseEdge("steps.size_ns", "size_ns %v; want finite and within ±%g (offsets.MaxOffsetNS)", s, offsets.MaxOffsetNS)
	}
	lo, hi := float64(d.WindowStartNs)-offsets.MaxOffsetNS, float64(d.WindowEndNs)+offsets.MaxOffsetNS
	for _, t := range []struct {
		field string
		v     int64
	}{{"at_ns", st.AtNs}, {"after_ns", st.AfterNs}} {
		if t.field == "after_ns" && t.v == 0 {
			continue // no probe before the step
		}
		if v := float64(t.v); v < lo || v > hi {
			return refuseEdge("steps."+t.field, "%s %d; want within a year (offsets.MaxOffsetNS) of the window [%d, %d]", t.field, t.v, d.WindowStartNs, d.WindowEndNs)
		}
	}
	if p := st.Before; p != nil {
		if p.PairsCount < 0 {
			return refuseEdge("steps.before.pairs_count", "fit before it: pairs_count %d; want a count ≥ 0", p.PairsCount)
		}
		if err := checkFit("steps.before.", [fitValues]float64{p.Alpha, p.Beta, p.SigmaNs, p.AlphaSigma, p.AsymSigmaNs, p.MissSigmaNs}); err != nil {
			err.msg = "fit before it: " + err.msg
			return err
		}
	}
	return nil
}

// edgeRecord is e's rounds.jsonl record in round, from report d (without
// the solver's residual and rejection).
func edgeRecord(round uint64, d *syncpb.NodeWindowData, e *syncpb.EdgeAlphaBeta) offsets.Edge {
	return offsets.Edge{
		Type: "edge", RoundID: round, WindowID: d.WindowId,
		Src: int(e.SrcNodeId), Dst: int(e.DstNodeId),
		Alpha: e.Alpha, Beta: e.Beta, Sigma: e.SigmaNs, AsymSigma: e.AsymSigmaNs,
		PairsCount: int(e.PairsCount), LostCount: int(e.LostCount),
		Insufficient: e.Insufficient, StepDetected: e.StepDetected,
	}
}

// writable returns r's records without those a writer would refuse
// (offsets.Offset.Check, offsets.Edge.Check), says of each what it left out
// in r's notes, and counts it under "record FIELD" in refused. The door
// keeps every value such a record could come from out, so this is a last
// resort: a model the solution made from values each within bounds may
// still lie beyond them (two edges of a year each add up to two), and
// then the round loses that record, never the run its files.
func writable(r *RoundReport, refused map[string]int) {
	leftOut := func(what string, round uint64, field, msg string) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s's record of round %d left out: %s: %s", what, round, field, msg))
		refused["record "+field]++
	}
	r.Offsets = slices.DeleteFunc(r.Offsets, func(o offsets.Offset) bool {
		field, msg := o.Check()
		if field != "" {
			leftOut(fmt.Sprintf("node %d", o.NodeID), o.RoundID, field, msg)
		}
		return field != ""
	})
	r.Edges = slices.DeleteFunc(r.Edges, func(e offsets.Edge) bool {
		field, msg := e.Check()
		if field != "" {
			leftOut(fmt.Sprintf("edge %d->%d", e.Src, e.Dst), e.RoundID, field, msg)
		}
		return field != ""
	})
}
