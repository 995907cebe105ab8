package rounds

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// begin starts the first round.
func (c *masterCore) begin() {
	if c.started {
		return
	}
	c.started = true
	c.emit(actStop{})
	c.startRound()
}

// startRound sends ROUND_START for the next round.
func (c *masterCore) startRound() {
	if c.cfg.Rounds > 0 && c.round-c.cfg.LastRound >= uint64(c.cfg.Rounds) {
		c.log(slog.LevelInfo, "all rounds done", "rounds", c.round)
		return
	}
	c.round++
	c.seq++
	rs := &syncpb.RoundStart{RoundId: c.round, SequenceNumber: c.seq, WindowNs: int64(c.length), CadenceNs: int64(c.cfg.Cadence)}
	c.broadcast(&syncpb.Envelope{Body: &syncpb.Envelope_RoundStart{RoundStart: rs}})
	if c.cfg.Mode == ModeRounds {
		c.arm(timerRoundEnd, c.length)
	}
}

// broadcast sends env to every connected node and hands it to the local
// agent.
func (c *masterCore) broadcast(env *syncpb.Envelope) {
	b, err := wire.Marshal(env, c.cfg.MaxFrame)
	if err != nil {
		c.log(slog.LevelError, "encode message", "kind", wire.Kind(env), "err", err)
		return
	}
	for id, conn := range c.conns {
		if conn != 0 {
			c.emit(actSend{Conn: conn, Node: id, Env: env, Data: b, Purpose: sendBroadcast})
		}
	}
	c.emit(actLocal{Env: env})
}

// endRound sends ROUND_END and opens the gather.
func (c *masterCore) endRound() {
	c.endAt = c.clock()
	c.openGather()
	c.broadcast(&syncpb.Envelope{Body: &syncpb.Envelope_RoundEnd{RoundEnd: &syncpb.RoundEnd{RoundId: c.round, SequenceNumber: c.seq}}})
}

func (c *masterCore) openGather() {
	c.gather = true
	c.bytes = 0
	clear(c.reports)
	c.arm(timerGather, c.cfg.GatherDeadline)
}

// report takes one node's window data. A report that claims another node
// or carries more edges than a node has is refused whole; of one taken,
// every edge that is not the node's own, names a node outside the probe
// graph, repeats another or holds a value GraphCalc refuses is dropped.
// Each refusal is logged and counted, so that one node cannot spoil or
// fake the round.
func (c *masterCore) report(node int, d *syncpb.NodeWindowData, size int) {
	if d == nil || node < 0 || node >= len(c.reports) || int(d.NodeId) != node {
		c.log(slog.LevelWarn, "report for the wrong node", "from", node, "claims", d.GetNodeId())
		c.rejectedReports++
		c.count("report node_id")
		return
	}
	if err := checkReport(d, len(c.cfg.Nodes)); err != nil {
		c.log(slog.LevelWarn, "report rejected", "node", node, "round", d.RoundId, "err", err)
		c.rejectedReports++
		c.count(reasonOf(err))
		return
	}
	if c.cfg.Mode == ModeWindows && !c.gather && d.RoundId == c.round {
		// Variant A: the first report of a round opens its gather.
		c.endAt = c.clock()
		c.openGather()
	}
	if !c.gather || d.RoundId != c.round || c.reports[node] != nil {
		c.log(slog.LevelDebug, "stale report", "node", node, "round", d.RoundId, "current", c.round)
		return
	}
	d, dropped := screenEdges(node, d, c.cfg.Nodes)
	for _, err := range dropped {
		c.log(slog.LevelWarn, "report edge rejected", "node", node, "round", d.RoundId, "err", err)
		c.count(reasonOf(err))
	}
	c.rejectedEdges += len(dropped)
	c.reports[node] = d
	c.bytes += size
	c.checkGather()
}

// checkGather finishes the gather when no connected participant is still
// owed.
func (c *masterCore) checkGather() {
	for _, p := range c.cfg.Participants {
		if c.reports[p] == nil && c.connected(p) {
			return
		}
	}
	c.finish()
}

// finish closes the gather and asks for the round's solution (see
// solved).
func (c *masterCore) finish() {
	if !c.gather {
		return
	}
	c.gather = false
	c.emit(actStop{})
	r := &RoundReport{Round: c.round, Sequence: c.seq}
	for _, p := range c.cfg.Participants {
		if d := c.reports[p]; d != nil {
			r.Nodes = append(r.Nodes, d)
		} else {
			r.Missing = append(r.Missing, int(p))
		}
	}
	if ref := c.reports[c.cfg.Reference]; ref != nil {
		r.Window = ref.WindowId
	}
	c.solve, c.solving = r, c.round
	c.gathered = c.clock()
	c.emit(actSolve{Round: c.round, Nodes: r.Nodes})
}

// solved takes the solution of the round being solved: it reports the
// round, starts the next one and sends the results.
func (c *masterCore) solved(e evSolved) {
	r := c.solve
	if r == nil || e.Round != c.solving {
		c.log(slog.LevelWarn, "solution of a round not being solved; ignored", "round", e.Round, "solving", c.solving)
		return
	}
	c.solve, c.solving = nil, 0
	r.Summary, r.Offsets, r.Edges, r.Err = e.Summary, e.Offsets, e.Edges, e.Err
	r.Notes = e.Notes
	if c.refused == nil {
		c.refused = map[string]int{}
	}
	writable(r, c.refused)
	for _, n := range r.Notes {
		c.log(slog.LevelWarn, "round not settled", "round", r.Round, "note", n)
	}
	if c.rejectedReports > 0 || c.rejectedEdges > 0 {
		c.log(slog.LevelWarn, "round input rejected", "round", r.Round, "reports", c.rejectedReports, "edges", c.rejectedEdges)
		r.Notes = append(r.Notes, fmt.Sprintf("the master refused %d reports and dropped %d edges since the last round (see its log)", c.rejectedReports, c.rejectedEdges))
		c.rejectedReports, c.rejectedEdges = 0, 0
	}
	if len(c.refused) > 0 {
		r.Refused = c.refused
	}
	c.refused = nil
	r.Figures = Figures{
		Window:       c.length,
		GatherWait:   time.Duration(c.gathered - c.endAt),
		Retries:      c.retries,
		MessageBytes: c.bytes,
		SequenceSkew: skew(r),
	}
	c.retries = 0
	if len(r.Missing) > 0 {
		c.log(slog.LevelWarn, "round completed without nodes", "round", r.Round, "missing", r.Missing)
	}
	if r.Summary != nil {
		if w := r.Summary.Consistency.Warning(); w != "" {
			c.log(slog.LevelWarn, "round consistency", "round", r.Round, "consistent", r.Summary.Consistency.Consistent, "warning", w)
		}
	}
	var disc *graphcalc.DisconnectedError
	if errors.As(r.Err, &disc) {
		c.log(slog.LevelWarn, "round partially solved", "round", r.Round, "err", r.Err)
	} else if r.Err != nil {
		c.log(slog.LevelError, "round unsolved", "round", r.Round, "err", r.Err)
	}
	c.adapt(r)
	c.startRound()
	r.Figures.EndToStart = time.Duration(c.clock() - c.endAt)
	c.sendResults(r)
	c.emit(actRound{Report: r})
}

// count counts one refusal under reason (see refusal.reason).
func (c *masterCore) count(reason string) {
	if c.refused == nil {
		c.refused = map[string]int{}
	}
	c.refused[reason]++
}

// sendResults sends each node with a record in r that asked for it
// (FeatureRoundResult) its RoundResult, and hands the master's own node
// its own when it asked for it. Nothing goes out for a round without
// records (unsolved).
func (c *masterCore) sendResults(r *RoundReport) {
	if len(r.Offsets) == 0 {
		return
	}
	degraded := degradedOf(r)
	ref := int(c.cfg.Reference)
	for _, rec := range r.Offsets {
		node := world.NodeID(rec.NodeID)
		env := &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: resultMessage(rec, ref, r, degraded)}}
		if node == c.cfg.Master {
			if c.local&FeatureRoundResult != 0 {
				c.emit(actLocal{Env: env})
			}
			continue
		}
		if rec.NodeID < 0 || rec.NodeID >= len(c.conns) {
			continue
		}
		conn := c.conns[node]
		if conn == 0 || c.features[node]&FeatureRoundResult == 0 {
			continue
		}
		b, err := wire.Marshal(env, c.cfg.MaxFrame)
		if err != nil {
			c.log(slog.LevelError, "encode message", "kind", wire.Kind(env), "node", node, "err", err)
			continue
		}
		c.emit(actSend{Conn: conn, Node: int(node), Env: env, Data: b, Purpose: sendResult})
	}
}
