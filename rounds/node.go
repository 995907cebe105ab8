package rounds

import (
	"errors"
	"time"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// Bounds on the timing a node takes from the master's ROUND_START. The
// master decides the window and cadence of each round, but a node does not
// trust it to stay sane: a value outside them is refused with a logged
// error and counted ([NodeStats.RefusedTiming]), and the node keeps its
// previous setting for that field. The node's own configuration is local,
// so its values ([Config.Cadence], [Config.Window] and the adaptive bounds
// [Config.WindowMin] and [Config.WindowMax]) are always taken, and widen
// these bounds where they lie outside them.
const (
	// MinCadence is the shortest pair interval taken from the master: 100
	// µs. A shorter one (cadence_ns = 1) would make the prober send as fast
	// as its event loop turns.
	MinCadence = 100 * time.Microsecond
	// MinWindow is the shortest window taken from the master: 1 ms. The
	// cadence taken must also be no longer than the window.
	MinWindow = time.Millisecond
	// MaxWindow is the longest window taken from the master: 1 h. Where the
	// configuration bounds an adaptive window, the window taken must lie
	// within WindowMin..WindowMax instead. No configuration's window may
	// be longer either (Config.Validate): the run files and the master's
	// door refuse a longer one (offsets.MaxWindowNS, twice this on a
	// node's clock).
	MaxWindow = time.Hour
)

// NodeStats are a node's counters over its life.
type NodeStats struct {
	// RefusedTiming counts the ROUND_START fields (window_ns, cadence_ns)
	// the node refused as outside their bounds ([MinCadence], [MinWindow],
	// [MaxWindow]), keeping its previous setting.
	RefusedTiming int
	// Results counts the RoundResults the node took (and handed to its
	// [ModelObserver]).
	Results int
	// DroppedResults counts, by reason, the RoundResults the node's door
	// dropped: "connection" (not on its current connection to the
	// master), "node_id" (another node's), "reference_node",
	// "round_id" (a round the master did not start), "stale" (not newer
	// than the last taken), "window" (not the window the node reported for
	// the round), "sequence_skew_ns", "empty", or the field of the record
	// offsets.Offset.Check refuses ("offset_ns", "steps[0].at_ns", ...).
	// nil when none was.
	DroppedResults map[string]int
	// UnknownMessages counts the messages from the master of a kind this
	// version does not know (a newer master's), skipped.
	UnknownMessages int
}

// Node is the protocol program of one node: its prober, its agent (which
// talks to the master) and, on the master node, the master.
type Node struct {
	cfg         Config
	obs         Observer
	incarnation uint64

	env    world.Env
	prober *probe.Prober
	// tick and report are the node's role, chosen once at Start as etcd
	// raft sets r.tick and r.step when a node changes role, instead of
	// asking at every turn which role the node plays: tick runs at each
	// heartbeat (nil in consensus mode, which has none), report takes the
	// fits of each window the node closes. See becomeAgent, becomeMaster
	// and becomeConsensus.
	tick   func()
	report func(data *syncpb.NodeWindowData)
	master *master      // on the master node only
	conn   world.Stream // to the master; nil while disconnected
	heard  int64        // when the master was last heard from, local clock

	window  uint64 // windows this incarnation has opened
	round   uint64 // the round the open window belongs to
	length  time.Duration
	rotate  world.Timer // Variant A: the local window timer
	retries int
	stats   NodeStats
	agent   agentState // of the current connection to the master
}

// New returns the program of one node. incarnation tells restarts apart (the
// harness counts boots); obs may be nil.
func New(cfg Config, incarnation uint64, obs Observer) *Node {
	if obs == nil {
		obs = NopObserver{}
	}
	return &Node{cfg: cfg, obs: obs, incarnation: incarnation, length: cfg.Window}
}

// Stats returns the node's counters so far.
func (n *Node) Stats() NodeStats { return n.statsCopy() }

// Prober returns the node's prober (nil before Start).
func (n *Node) Prober() *probe.Prober { return n.prober }

// Start implements [world.Program].
func (n *Node) Start(env world.Env) error {
	if err := n.cfg.Validate(); err != nil {
		return err
	}
	n.env = env
	p, err := probe.New(env, env.Peers(), n.cfg.Cadence)
	if err != nil {
		return err
	}
	n.prober = p
	switch {
	case n.cfg.Mode == ModeConsensus:
		n.becomeConsensus()
		if n.participant() {
			n.openWindow(n.cfg.LastRound + 1) // after a restarted node's own records
		}
		return nil
	case env.Node() == n.cfg.Master:
		m, err := newMaster(n)
		if err != nil {
			return err
		}
		n.becomeMaster(m)
	default:
		n.becomeAgent()
		n.dial()
	}
	env.AfterFunc(n.cfg.Heartbeat, n.heartbeat)
	return nil
}

// becomeConsensus makes the node a consensus node: no master, no
// heartbeat; each window's fits move its own clock correction.
func (n *Node) becomeConsensus() {
	n.tick = nil
	n.report = newConsensus(n).update
}

// becomeMaster makes the node the master's node: its heartbeat is the
// master's, and its own reports reach the master by a direct call.
func (n *Node) becomeMaster(m *master) {
	n.master = m
	n.tick = m.heartbeat
	n.report = n.reportLocal
}

// becomeAgent makes the node an agent of the master on another node: its
// heartbeat keeps the stream to the master alive, and its reports go on
// it.
func (n *Node) becomeAgent() {
	n.tick = n.agentTick
	n.report = n.reportRemote
}

func (n *Node) participant() bool { return len(n.prober.Peers()) > 0 }

// dial connects to the master; the result arrives as OnOpen or OnClose.
func (n *Node) dial() {
	s, err := n.env.Dial(world.Addr{Node: n.cfg.Master, Port: Port}, agentConn{n})
	if err != nil {
		n.env.Logger().Warn("dial master failed", "err", err)
		n.env.AfterFunc(2*n.cfg.Heartbeat, n.dial)
		return
	}
	n.conn = s
	n.heard = int64(n.env.Host().Now())
}

// heartbeat runs the role's tick every heartbeat.
func (n *Node) heartbeat() {
	n.env.AfterFunc(n.cfg.Heartbeat, n.heartbeat)
	n.tick()
}

// agentTick is an agent's heartbeat: it drops the master connection when
// the master has been silent for three heartbeats, and otherwise sends a
// heartbeat on it.
func (n *Node) agentTick() {
	if n.conn == nil {
		return
	}
	now := int64(n.env.Host().Now())
	if time.Duration(now-n.heard) > 3*n.cfg.Heartbeat {
		n.env.Logger().Warn("master silent; reconnecting", "silent", time.Duration(now-n.heard))
		n.conn.Close()
		n.lost()
		return
	}
	n.send(&syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{SentNs: now}}})
}

// lost forgets the master connection and dials again later.
func (n *Node) lost() {
	n.conn = nil
	n.retries++
	n.env.AfterFunc(2*n.cfg.Heartbeat, n.dial)
}

func (n *Node) send(env *syncpb.Envelope) int {
	if n.conn == nil {
		return 0
	}
	b, err := wire.Marshal(env, n.cfg.MaxFrame)
	if err != nil {
		n.env.Logger().Error("encode message", "kind", wire.Kind(env), "err", err)
		return 0
	}
	if err := n.conn.Send(b); err != nil {
		n.env.Logger().Warn("send to master failed", "kind", wire.Kind(env), "err", err)
		return 0
	}
	return len(b)
}

// handle applies one message from the master (or, on the master node, from
// the master itself).
func (n *Node) handle(env *syncpb.Envelope) {
	switch b := env.Body.(type) {
	case *syncpb.Envelope_RoundStart:
		n.agent.sawStart(b.RoundStart.RoundId, int64(n.env.Host().Now()))
		n.startRound(b.RoundStart)
	case *syncpb.Envelope_RoundEnd:
		n.agent.sawEnd(b.RoundEnd.RoundId, int64(n.env.Host().Now()))
		if n.prober.Opened() && n.round == b.RoundEnd.RoundId {
			n.closeWindow()
		}
	case *syncpb.Envelope_RoundResult:
		if b.RoundResult == nil {
			n.dropResult("empty", 0, "empty round_result")
			return
		}
		n.takeResult(b.RoundResult)
	case *syncpb.Envelope_Heartbeat:
	default:
		n.env.Logger().Warn("unexpected message from master", "kind", wire.Kind(env))
	}
}

func (n *Node) startRound(rs *syncpb.RoundStart) {
	n.applyTiming(rs)
	if !n.participant() {
		return
	}
	if n.cfg.Mode == ModeWindows && n.prober.Opened() {
		return // Variant A rotates by itself once started
	}
	n.openWindow(rs.RoundId)
}

// applyTiming takes the window length and cadence a ROUND_START sets (a
// zero field sets nothing) where they lie within their bounds; it refuses
// the others, logging an error that names the field and its bounds, and
// keeps the previous setting. The cadence taken must be no longer than the
// window in effect, and a window shorter than the cadence kept is refused
// (the configured cadence excepted: the configuration is the node's own).
func (n *Node) applyTiming(rs *syncpb.RoundStart) {
	wlo, whi := min(MinWindow, n.cfg.Window), max(MaxWindow, n.cfg.Window)
	if n.cfg.WindowMin > 0 {
		wlo, whi = n.cfg.WindowMin, n.cfg.WindowMax
	}
	window := n.length
	if rs.WindowNs != 0 {
		if d := time.Duration(rs.WindowNs); wlo <= d && d <= whi {
			window = d
		} else {
			n.refuse(rs, "window_ns", d, wlo, whi, n.length)
		}
	}
	cadence := n.prober.Cadence()
	if rs.CadenceNs != 0 {
		lo, hi := min(MinCadence, n.cfg.Cadence), max(window, n.cfg.Cadence)
		if d := time.Duration(rs.CadenceNs); lo <= d && d <= hi {
			cadence = d
		} else {
			n.refuse(rs, "cadence_ns", d, lo, hi, cadence)
		}
	}
	if cadence > window && cadence != n.cfg.Cadence {
		n.refuse(rs, "window_ns", window, max(wlo, cadence), whi, n.length)
		window = n.length
	}
	n.length = window
	n.prober.SetCadence(cadence)
}

// refuse logs and counts a ROUND_START field outside [lo, hi]; the node
// keeps kept.
func (n *Node) refuse(rs *syncpb.RoundStart, field string, got, lo, hi, kept time.Duration) {
	n.stats.RefusedTiming++
	n.env.Logger().Error("ROUND_START timing out of bounds: refused, previous setting kept",
		"round", rs.RoundId, "field", field, "value", got, "min", lo, "max", hi, "kept", kept)
}

// openWindow starts probing for round; in Variant A and consensus mode it
// also schedules the window's own end.
func (n *Node) openWindow(round uint64) {
	n.window++
	n.round = round
	if c := n.prober.Cadence(); c > 0 {
		n.prober.ExpectPairs(int(n.length / c))
	}
	n.prober.Open(round, n.window)
	if n.cfg.Mode != ModeRounds {
		n.rotate = n.env.AfterFunc(n.length, n.rotateWindow)
	}
}

func (n *Node) rotateWindow() {
	n.closeWindow()
	if n.cfg.Rounds > 0 && n.round-n.cfg.LastRound >= uint64(n.cfg.Rounds) {
		return
	}
	n.openWindow(n.round + 1)
}

// closeWindow stops probing, fits the edges and reports them.
func (n *Node) closeWindow() {
	blocks := n.prober.Close()
	if len(blocks) == 0 {
		return
	}
	data := FitWindow(int(n.env.Node()), n.incarnation, blocks, n.cfg.Estimate)
	n.obs.Window(n.env.Node(), blocks, data)
	n.report(data)
}

// reportLocal hands the master's own node's report to the master, by a
// direct call after the current callback, with the size it would have on
// the wire.
func (n *Node) reportLocal(data *syncpb.NodeWindowData) {
	n.agent.sawReport(data)
	b, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: data}}, n.cfg.MaxFrame)
	if err == nil {
		m := n.master
		n.env.AfterFunc(0, func() { m.report(int(n.env.Node()), data, len(b)) })
	}
}

// reportRemote sends an agent's report to the master.
func (n *Node) reportRemote(data *syncpb.NodeWindowData) {
	n.agent.sawReport(data)
	n.send(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: data}})
}

// agentConn is the handler of the node's stream to the master.
type agentConn struct{ n *Node }

func (a agentConn) OnOpen(s world.Stream) {
	n := a.n
	if s != n.conn {
		return
	}
	n.heard = int64(n.env.Host().Now())
	n.agent = agentState{}
	n.send(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{
		NodeId: int32(n.env.Node()), Incarnation: n.incarnation, LastRoundId: n.round, Features: n.features(),
	}}})
}

func (a agentConn) OnMessage(s world.Stream, msg []byte) {
	n := a.n
	if s != n.conn {
		if env, err := wire.Unmarshal(msg, n.cfg.MaxFrame); err == nil && env.GetRoundResult() != nil {
			n.dropResult("connection", env.GetRoundResult().GetRoundId(), "not on the node's current connection to the master")
		}
		return
	}
	env, err := wire.Unmarshal(msg, n.cfg.MaxFrame)
	if errors.Is(err, wire.ErrUnknownBody) {
		// A newer master's message: the stream is in step, skip it.
		n.heard = int64(n.env.Host().Now())
		n.stats.UnknownMessages++
		n.env.Logger().Debug("message of an unknown kind from master; skipped", "bytes", len(msg), "err", err)
		return
	}
	if err != nil {
		n.env.Logger().Warn("bad message from master; closing", "err", err)
		s.Close()
		n.lost()
		return
	}
	n.heard = int64(n.env.Host().Now())
	n.handle(env)
}

func (a agentConn) OnClose(s world.Stream, err error) {
	n := a.n
	if s != n.conn {
		return
	}
	n.env.Logger().Info("master connection closed", "err", err)
	n.lost()
}

var _ world.StreamHandler = agentConn{}
var _ world.Program = (*Node)(nil)
