package rounds

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// master drives the rounds: it lives on the master node beside that node's
// own agent, to which it talks by direct calls.
type master struct {
	n     *Node
	conns []world.Stream // by node ID; nil while not connected
	heard []int64        // when each connection was last heard from
	// features are what each connection's hello announced
	// (Hello.features, Feature*).
	features []uint64

	seq      uint64
	round    uint64
	started  bool
	gather   bool
	endAt    int64                    // local clock when ROUND_END went out
	deadline world.Timer              // the gather deadline, or the start timer
	reports  []*syncpb.NodeWindowData // by node ID, for the round being gathered
	bytes    int
	retries  int
	length   time.Duration
	history  []stability
	solver   *Solver
	// rejectedReports and rejectedEdges count, since the last round was
	// solved, the reports refused whole and the edges dropped from the
	// reports taken (see checkReport and screenEdges); finish reports
	// them in the round's Notes and log.
	rejectedReports, rejectedEdges int
	// refused counts the same by reason (see refusal), with the records
	// of the solution left out (see writable), for RoundReport.Refused.
	refused map[string]int
	// pending are the accepted streams that have not said hello yet, in
	// the order they opened, with when (local clock); heartbeat closes
	// those that stay silent (see helloWait).
	pending []pendingConn
}

// pendingConn is an accepted stream waiting for its hello.
type pendingConn struct {
	s  world.Stream
	at int64
}

func newMaster(n *Node) (*master, error) {
	m := &master{
		n:        n,
		conns:    make([]world.Stream, n.env.Nodes()),
		heard:    make([]int64, n.env.Nodes()),
		features: make([]uint64, n.env.Nodes()),
		reports:  make([]*syncpb.NodeWindowData, n.env.Nodes()),
		length:   n.cfg.Window,
		round:    n.cfg.LastRound,
	}
	nodes := make([]int, len(n.cfg.Nodes))
	for i, v := range n.cfg.Nodes {
		nodes[i] = int(v)
	}
	m.solver = NewSolver(nodes, int(n.cfg.Reference), n.cfg.GraphCalc, n.cfg.Estimate.StepThreshold)
	if _, err := n.env.Listen(Port, masterConn{m}); err != nil {
		return nil, err
	}
	// Start once every participant has said hello, or after one gather
	// deadline with whoever has.
	m.deadline = n.env.AfterFunc(n.cfg.GatherDeadline, m.begin)
	return m, nil
}

func (m *master) now() int64 { return int64(m.n.env.Host().Now()) }

// connected reports whether node can take part in this round.
func (m *master) connected(node world.NodeID) bool {
	return node == m.n.cfg.Master || m.conns[node] != nil
}

func (m *master) allConnected() bool {
	for _, p := range m.n.cfg.Participants {
		if !m.connected(p) {
			return false
		}
	}
	return true
}

// begin starts the first round.
func (m *master) begin() {
	if m.started {
		return
	}
	m.started = true
	if m.deadline != nil {
		m.deadline.Stop()
	}
	m.startRound()
}

// startRound sends ROUND_START for the next round.
func (m *master) startRound() {
	if m.n.cfg.Rounds > 0 && m.round-m.n.cfg.LastRound >= uint64(m.n.cfg.Rounds) {
		m.n.env.Logger().Info("all rounds done", "rounds", m.round)
		return
	}
	m.round++
	m.seq++
	rs := &syncpb.RoundStart{RoundId: m.round, SequenceNumber: m.seq, WindowNs: int64(m.length), CadenceNs: int64(m.n.cfg.Cadence)}
	m.broadcast(&syncpb.Envelope{Body: &syncpb.Envelope_RoundStart{RoundStart: rs}})
	if m.n.cfg.Mode == ModeRounds {
		m.deadline = m.n.env.AfterFunc(m.length, m.endRound)
	}
}

// broadcast sends env to every connected node and hands it to the local
// agent.
func (m *master) broadcast(env *syncpb.Envelope) {
	b, err := wire.Marshal(env, m.n.cfg.MaxFrame)
	if err != nil {
		m.n.env.Logger().Error("encode message", "kind", wire.Kind(env), "err", err)
		return
	}
	for _, s := range m.conns {
		if s != nil {
			if err := s.Send(b); err != nil {
				m.n.env.Logger().Warn("send failed", "to", s.RemoteAddr(), "err", err)
			}
		}
	}
	local := m.n
	local.env.AfterFunc(0, func() { local.handle(env) })
}

// endRound sends ROUND_END and opens the gather.
func (m *master) endRound() {
	m.endAt = m.now()
	m.openGather()
	m.broadcast(&syncpb.Envelope{Body: &syncpb.Envelope_RoundEnd{RoundEnd: &syncpb.RoundEnd{RoundId: m.round, SequenceNumber: m.seq}}})
}

func (m *master) openGather() {
	m.gather = true
	m.bytes = 0
	clear(m.reports)
	m.deadline = m.n.env.AfterFunc(m.n.cfg.GatherDeadline, m.finish)
}

// report takes one node's window data. A report that claims another node
// or carries more edges than a node has is refused whole; of one taken,
// every edge that is not the node's own, names a node outside the probe
// graph, repeats another or holds a value GraphCalc refuses is dropped.
// Each refusal is logged and counted, so that one node cannot spoil or
// fake the round.
func (m *master) report(node int, d *syncpb.NodeWindowData, size int) {
	log := m.n.env.Logger()
	if d == nil || node < 0 || node >= len(m.reports) || int(d.NodeId) != node {
		log.Warn("report for the wrong node", "from", node, "claims", d.GetNodeId())
		m.rejectedReports++
		m.count("report node_id")
		return
	}
	if err := checkReport(d, len(m.n.cfg.Nodes)); err != nil {
		log.Warn("report rejected", "node", node, "round", d.RoundId, "err", err)
		m.rejectedReports++
		m.count(reasonOf(err))
		return
	}
	if m.n.cfg.Mode == ModeWindows && !m.gather && d.RoundId == m.round {
		// Variant A: the first report of a round opens its gather.
		m.endAt = m.now()
		m.openGather()
	}
	if !m.gather || d.RoundId != m.round || m.reports[node] != nil {
		log.Debug("stale report", "node", node, "round", d.RoundId, "current", m.round)
		return
	}
	d, dropped := screenEdges(node, d, m.n.cfg.Nodes)
	for _, err := range dropped {
		log.Warn("report edge rejected", "node", node, "round", d.RoundId, "err", err)
		m.count(reasonOf(err))
	}
	m.rejectedEdges += len(dropped)
	m.reports[node] = d
	m.bytes += size
	for _, p := range m.n.cfg.Participants {
		if m.reports[p] == nil && m.connected(p) {
			return
		}
	}
	m.finish()
}

// finish closes the gather, solves the round and starts the next one.
func (m *master) finish() {
	if !m.gather {
		return
	}
	m.gather = false
	m.deadline.Stop()
	cfg := &m.n.cfg
	r := &RoundReport{Round: m.round, Sequence: m.seq}
	for _, p := range cfg.Participants {
		if d := m.reports[p]; d != nil {
			r.Nodes = append(r.Nodes, d)
		} else {
			r.Missing = append(r.Missing, int(p))
		}
	}
	if ref := m.reports[cfg.Reference]; ref != nil {
		r.Window = ref.WindowId
	}
	r.Summary, r.Offsets, r.Edges, r.Err = m.solver.Solve(m.round, r.Nodes)
	r.Notes = m.solver.Notes()
	if m.refused == nil {
		m.refused = map[string]int{}
	}
	writable(r, m.refused)
	for _, n := range r.Notes {
		m.n.env.Logger().Warn("round not settled", "round", m.round, "note", n)
	}
	if m.rejectedReports > 0 || m.rejectedEdges > 0 {
		m.n.env.Logger().Warn("round input rejected", "round", m.round, "reports", m.rejectedReports, "edges", m.rejectedEdges)
		r.Notes = append(r.Notes, fmt.Sprintf("the master refused %d reports and dropped %d edges since the last round (see its log)", m.rejectedReports, m.rejectedEdges))
		m.rejectedReports, m.rejectedEdges = 0, 0
	}
	if len(m.refused) > 0 {
		r.Refused = m.refused
	}
	m.refused = nil
	r.Figures = Figures{
		Window:       m.length,
		GatherWait:   time.Duration(m.now() - m.endAt),
		Retries:      m.retries,
		MessageBytes: m.bytes,
		SequenceSkew: skew(r),
	}
	m.retries = 0
	if len(r.Missing) > 0 {
		m.n.env.Logger().Warn("round completed without nodes", "round", m.round, "missing", r.Missing)
	}
	if r.Summary != nil {
		if w := r.Summary.Consistency.Warning(); w != "" {
			m.n.env.Logger().Warn("round consistency", "round", m.round, "consistent", r.Summary.Consistency.Consistent, "warning", w)
		}
	}
	var disc *graphcalc.DisconnectedError
	if errors.As(r.Err, &disc) {
		m.n.env.Logger().Warn("round partially solved", "round", m.round, "err", r.Err)
	} else if r.Err != nil {
		m.n.env.Logger().Error("round unsolved", "round", m.round, "err", r.Err)
	}
	m.adapt(r)
	m.startRound()
	r.Figures.EndToStart = time.Duration(m.now() - m.endAt)
	r.Figures.ResultBytes = m.sendResults(r)
	m.n.obs.Round(r)
}

// count counts one refusal under reason (see refusal.reason).
func (m *master) count(reason string) {
	if m.refused == nil {
		m.refused = map[string]int{}
	}
	m.refused[reason]++
}

// skew is the spread of the reporting nodes' window starts on the global
// timeline: how far apart the nodes began probing.
func skew(r *RoundReport) time.Duration {
	if r.Summary == nil {
		return 0
	}
	var starts []float64
	for _, d := range r.Nodes {
		if md, ok := r.Summary.Model(int(d.NodeId)); ok {
			starts = append(starts, md.Linear().Global(d.WindowStartNs))
		}
	}
	if len(starts) == 0 {
		return 0
	}
	return time.Duration(slices.Max(starts) - slices.Min(starts))
}

// heartbeat drops connections that have been silent for three heartbeats.
func (m *master) heartbeat() {
	now := m.now()
	m.closeSilent(now)
	for id, s := range m.conns {
		if s != nil && time.Duration(now-m.heard[id]) > 3*m.n.cfg.Heartbeat {
			m.n.env.Logger().Warn("node silent; dropping its connection", "node", id)
			s.Close()
			m.conns[id] = nil
		}
	}
	if m.gather {
		m.checkGather()
	}
}

// helloWait is how many heartbeats an accepted stream may stay without a
// hello before the master closes it; maxPending bounds, per node, the
// streams that may wait at once (the oldest is closed beyond it), so that
// a peer that opens connections and says nothing holds neither sockets nor
// memory for long.
const (
	helloWait  = 3
	maxPending = 4
)

// closeSilent closes the accepted streams that have waited for their
// hello longer than helloWait heartbeats.
func (m *master) closeSilent(now int64) {
	keep := m.pending[:0]
	for _, p := range m.pending {
		if time.Duration(now-p.at) > helloWait*m.n.cfg.Heartbeat {
			m.n.env.Logger().Warn("closing connection: no hello", "from", p.s.RemoteAddr(), "waited", time.Duration(now-p.at))
			p.s.Close()
			continue
		}
		keep = append(keep, p)
	}
	clear(m.pending[len(keep):])
	m.pending = keep
}

// await records s, just accepted, as waiting for its hello, closing the
// oldest waiting stream when maxPending per node already wait.
func (m *master) await(s world.Stream) {
	if limit := maxPending * len(m.conns); len(m.pending) >= limit {
		old := m.pending[0]
		m.n.env.Logger().Warn("closing connection: too many connections without hello", "from", old.s.RemoteAddr(), "limit", limit)
		old.s.Close()
		m.pending = append(m.pending[:0], m.pending[1:]...)
	}
	m.pending = append(m.pending, pendingConn{s: s, at: m.now()})
}

// greeted forgets s as waiting for its hello (it said hello, or closed).
func (m *master) greeted(s world.Stream) {
	for i, p := range m.pending {
		if p.s == s {
			m.pending = append(m.pending[:i], m.pending[i+1:]...)
			return
		}
	}
}

// checkGather finishes the gather when no connected participant is still
// owed.
func (m *master) checkGather() {
	for _, p := range m.n.cfg.Participants {
		if m.reports[p] == nil && m.connected(p) {
			return
		}
	}
	m.finish()
}
