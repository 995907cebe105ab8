package rounds

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// A node learns its own clock model (issue 31): after each solved round the
// master sends every node it has a record for, and that asked for it, a
// RoundResult carrying the record the master writes to offsets.jsonl for
// that node. The node checks it at its door (checkResult) and hands it to
// its observer's Model method ([ModelObserver]), which corrects the node's
// local tracers, feeds chrony, exports metrics. An unsolved round sends
// nothing; a partial one sends the nodes it solved.

// Features are the bits of Hello.features: what an agent understands beyond
// the messages every version knows. A master sends a message of a feature
// only to the agents that announced it, so that an agent of an older
// version never sees a body it does not know.
const (
	// FeatureRoundResult: the agent takes a RoundResult after each solved
	// round. A node announces it when its observer is a [ModelObserver].
	FeatureRoundResult uint64 = 1 << iota
)

// Degraded says why a round's solution is degraded: a bit set, 0 when it
// is not. It travels in RoundResult.degraded.
type Degraded uint32

// The reasons a round's solution is degraded.
const (
	// DegradedPartial: the round was partially solved; some nodes have no
	// model (graphcalc.DisconnectedError).
	DegradedPartial Degraded = 1 << iota
	// DegradedInconsistent: the edges disagree beyond their σ (GraphCalc's
	// χ² test failed); the models' σ may be too small.
	DegradedInconsistent
	// DegradedUnsettled: the solution could not settle something (a clock
	// step it could not place, refused reports; RoundReport.Notes).
	DegradedUnsettled
	// DegradedMissing: participants did not report in the round.
	DegradedMissing
)

// String lists the reasons set in d, e.g. "partial,missing"; "ok" for none.
func (d Degraded) String() string {
	if d == 0 {
		return "ok"
	}
	var out []string
	for _, r := range []struct {
		bit  Degraded
		name string
	}{{DegradedPartial, "partial"}, {DegradedInconsistent, "inconsistent"}, {DegradedUnsettled, "unsettled"}, {DegradedMissing, "missing"}} {
		if d&r.bit != 0 {
			out = append(out, r.name)
			d &^= r.bit
		}
	}
	if d != 0 {
		out = append(out, fmt.Sprintf("0x%x", uint32(d)))
	}
	return strings.Join(out, ",")
}

// degradedOf is why r's solution is degraded.
func degradedOf(r *RoundReport) Degraded {
	var d Degraded
	if r.Err != nil {
		d |= DegradedPartial
	}
	if r.Summary != nil && !r.Summary.Consistency.Consistent {
		d |= DegradedInconsistent
	}
	if len(r.Notes) > 0 {
		d |= DegradedUnsettled
	}
	if len(r.Missing) > 0 {
		d |= DegradedMissing
	}
	return d
}

// Model is what a node learns of its own clock after a round: its record
// of the round as the master wrote it to offsets.jsonl, with the round's
// state and the control plane as the node saw it.
type Model struct {
	// Offset is the node's record of the round, equal to its line in the
	// master's offsets.jsonl: global = Offset.Global(local reading of the
	// node's host clock S), with σ Offset.SigmaAt.
	Offset offsets.Offset
	// Reference is the node whose clock is global time.
	Reference int
	// Sequence is the master's sequence number of the round.
	Sequence uint64
	// Degraded says why the round's solution is degraded; 0 when it is
	// not.
	Degraded Degraded
	// ReceivedAt is the node's host clock (S) when the model arrived, in
	// ns: a publisher's validity deadline counts from it.
	ReceivedAt int64
	// RoundLatency is the time from the round's ROUND_END to the next
	// ROUND_START on the node's clock, as the node received them; 0 where
	// it did not see both (mode windows, a node that joined late, the
	// last round of a run); about 0 on the master's own node, which hands
	// them to itself.
	RoundLatency time.Duration
	// SequenceSkew is the master's spread of the reporting nodes' window
	// starts on the global timeline in the round.
	SequenceSkew time.Duration
	// Retries counts the node's reconnections to the master over its life.
	Retries int
	// Dropped counts the RoundResults the node's door dropped over its
	// life (NodeStats.DroppedResults, all reasons).
	Dropped int
}

// ModelObserver is an [Observer] that also takes a node's own clock model
// after each round. A node whose observer implements it asks the master for
// its model (Hello.features) and calls Model on its event loop with each
// one its door takes; in consensus mode, with each update of its own
// model. A node whose observer does not asks for nothing and never calls
// it. Like the other methods, Model must not call back into the protocol.
type ModelObserver interface {
	Model(node world.NodeID, m Model)
}

// resultMessage is the RoundResult that carries rec, node's record of
// round r, whose reference is ref.
func resultMessage(rec offsets.Offset, ref int, r *RoundReport, degraded Degraded) *syncpb.RoundResult {
	msg := &syncpb.RoundResult{
		RoundId: rec.RoundID, SequenceNumber: r.Sequence, ReferenceNode: int32(ref), NodeId: int32(rec.NodeID),
		WindowId: rec.WindowID, WindowStartNs: rec.WindowStartNS, WindowEndNs: rec.WindowEndNS,
		OffsetNs: rec.OffsetNS, DriftPpm: rec.DriftPPM,
		UncertaintyNs: rec.UncertaintyNS, DriftUncertaintyPpm: rec.DriftUncertaintyPPM,
		Degraded: uint32(degraded), SequenceSkewNs: int64(r.Figures.SequenceSkew),
	}
	for _, s := range rec.Steps {
		msg.Steps = append(msg.Steps, &syncpb.ResultStep{AtNs: s.AtNS, AtUncertaintyNs: s.AtUncertaintyNS, SizeNs: s.SizeNS, SizeUncertaintyNs: s.SizeUncertaintyNS})
	}
	if c := rec.SelfCheck; c != nil {
		msg.SelfCheck = &syncpb.ResultSelfCheck{Predictions: int32(c.Predictions), WithinThreeSigma: int32(c.Within3Sigma), MaxSigma: c.MaxSigma}
	}
	return msg
}

// OffsetOfResult is the offsets.jsonl record a RoundResult carries: the
// inverse of what the master puts in it, exact (every number travels as
// the same int64 or float64). It does not check the record: see
// offsets.Offset.Check.
func OffsetOfResult(msg *syncpb.RoundResult) offsets.Offset {
	rec := offsets.Offset{
		Type: "offset", RoundID: msg.GetRoundId(), WindowID: msg.GetWindowId(),
		WindowStartNS: msg.GetWindowStartNs(), WindowEndNS: msg.GetWindowEndNs(), NodeID: int(msg.GetNodeId()),
		OffsetNS: msg.GetOffsetNs(), DriftPPM: msg.GetDriftPpm(),
		UncertaintyNS: msg.GetUncertaintyNs(), DriftUncertaintyPPM: msg.GetDriftUncertaintyPpm(),
	}
	for _, s := range msg.GetSteps() {
		rec.Steps = append(rec.Steps, offsets.Step{AtNS: s.GetAtNs(), AtUncertaintyNS: s.GetAtUncertaintyNs(), SizeNS: s.GetSizeNs(), SizeUncertaintyNS: s.GetSizeUncertaintyNs()})
	}
	if c := msg.GetSelfCheck(); c != nil {
		rec.SelfCheck = &offsets.SelfCheck{Predictions: int(c.GetPredictions()), Within3Sigma: int(c.GetWithinThreeSigma()), MaxSigma: c.GetMaxSigma()}
	}
	return rec
}

// maxReported is how many of its last reported windows a node remembers,
// to check the RoundResults of their rounds against.
const maxReported = 8

// reported is a window a node reported: a RoundResult of its round must
// be of it.
type reported struct {
	round, window uint64
	start, end    int64
}

// agentState is what a node's agent remembers of its current connection to
// the master, for its door and the control plane's figures; a new
// connection starts it afresh (a restarted master numbers its rounds from
// 1 again).
type agentState struct {
	// lastStart is the latest round the master started (or the node
	// reported) on the connection, lastResult the latest whose result
	// the node took.
	lastStart, lastResult uint64
	// reported are the node's last reported windows, oldest first.
	reported []reported
	// endRound and endAt are the last ROUND_END the node received and
	// when (its host clock); latRound and latency the round latency
	// measured last, of round latRound.
	endRound, latRound uint64
	endAt              int64
	latency            time.Duration
}

// sawStart notes ROUND_START of round at now: the latency of the round
// before, when the node saw its ROUND_END.
func (a *agentState) sawStart(round uint64, now int64) {
	a.lastStart = max(a.lastStart, round)
	if a.endRound != 0 && a.endRound+1 == round {
		a.latRound, a.latency = a.endRound, time.Duration(now-a.endAt)
	}
}

// sawEnd notes ROUND_END of round at now.
func (a *agentState) sawEnd(round uint64, now int64) { a.endRound, a.endAt = round, now }

// sawReport notes the node's report d.
func (a *agentState) sawReport(d *syncpb.NodeWindowData) {
	a.lastStart = max(a.lastStart, d.RoundId)
	a.reported = append(a.reported, reported{round: d.RoundId, window: d.WindowId, start: d.WindowStartNs, end: d.WindowEndNs})
	if n := len(a.reported); n > maxReported {
		a.reported = append(a.reported[:0], a.reported[n-maxReported:]...)
	}
}

// checkResult says why node's door drops msg, a RoundResult from the master
// (the reason it is counted under, and what is wrong), or "", "". It takes
// only a result for node, of the configured reference, for a round the
// master started and newer than the last result taken, of the window the
// node reported for that round (where it reported one), whose record lies
// within the run files' bounds (offsets.Offset.Check).
func (n *Node) checkResult(msg *syncpb.RoundResult) (reason, what string) {
	a := &n.agent
	switch {
	case msg.GetNodeId() != int32(n.env.Node()):
		return "node_id", fmt.Sprintf("node_id %d; this is node %d", msg.GetNodeId(), n.env.Node())
	case msg.ReferenceNode != int32(n.cfg.Reference):
		return "reference_node", fmt.Sprintf("reference_node %d; the configuration's is %d", msg.ReferenceNode, n.cfg.Reference)
	case msg.RoundId == 0 || msg.RoundId > a.lastStart:
		return "round_id", fmt.Sprintf("round_id %d; the master started rounds up to %d on this connection", msg.RoundId, a.lastStart)
	case msg.RoundId <= a.lastResult:
		return "stale", fmt.Sprintf("round_id %d; the node took the result of round %d already", msg.RoundId, a.lastResult)
	case msg.SequenceSkewNs < 0:
		return "sequence_skew_ns", fmt.Sprintf("sequence_skew_ns %d; want ≥ 0", msg.SequenceSkewNs)
	}
	for _, w := range a.reported {
		if w.round == msg.RoundId && (w.window != msg.WindowId || w.start != msg.WindowStartNs || w.end != msg.WindowEndNs) {
			return "window", fmt.Sprintf("window %d [%d, %d]; the node reported window %d [%d, %d] for round %d",
				msg.WindowId, msg.WindowStartNs, msg.WindowEndNs, w.window, w.start, w.end, w.round)
		}
	}
	if field, why := OffsetOfResult(msg).Check(); field != "" {
		return field, field + ": " + why
	}
	return "", ""
}

// takeResult applies a RoundResult from the master: checked at the door,
// counted, and handed to the observer's Model.
func (n *Node) takeResult(msg *syncpb.RoundResult) {
	mo, ok := n.obs.(ModelObserver)
	if !ok {
		return // never asked for; an old master's bug or a forgery
	}
	if reason, what := n.checkResult(msg); reason != "" {
		n.dropResult(reason, msg.GetRoundId(), what)
		return
	}
	a := &n.agent
	a.lastResult = msg.RoundId
	n.stats.Results++
	m := Model{
		Offset: OffsetOfResult(msg), Reference: int(msg.ReferenceNode), Sequence: msg.SequenceNumber,
		Degraded: Degraded(msg.Degraded), ReceivedAt: int64(n.env.Host().Now()),
		SequenceSkew: time.Duration(msg.SequenceSkewNs), Retries: n.retries, Dropped: n.dropped(),
	}
	if a.latRound == msg.RoundId {
		m.RoundLatency = a.latency
	}
	mo.Model(n.env.Node(), m)
}

// dropResult logs and counts a RoundResult the node's door dropped.
func (n *Node) dropResult(reason string, round uint64, what string) {
	if n.stats.DroppedResults == nil {
		n.stats.DroppedResults = map[string]int{}
	}
	n.stats.DroppedResults[reason]++
	n.env.Logger().Warn("round result dropped", "round", round, "reason", reason, "err", what)
}

// dropped is the number of RoundResults the door dropped so far.
func (n *Node) dropped() int {
	d := 0
	for _, c := range n.stats.DroppedResults {
		d += c
	}
	return d
}

// consensusModel hands a consensus node's new record to its observer's
// Model, as a RoundResult would in the other modes.
func (n *Node) consensusModel(rec offsets.Offset) {
	if mo, ok := n.obs.(ModelObserver); ok {
		mo.Model(n.env.Node(), Model{Offset: rec, Reference: int(n.cfg.Reference), ReceivedAt: int64(n.env.Host().Now()), Retries: n.retries, Dropped: n.dropped()})
	}
}

// features are the Hello.features bits the node announces.
func (n *Node) features() uint64 {
	if _, ok := n.obs.(ModelObserver); ok {
		return FeatureRoundResult
	}
	return 0
}

// statsCopy is n.stats with its maps copied, for Stats.
func (n *Node) statsCopy() NodeStats {
	s := n.stats
	s.DroppedResults = maps.Clone(s.DroppedResults)
	return s
}
