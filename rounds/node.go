package rounds

import (
	"time"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// Node is the protocol program of one node: its prober, its agent (which
// talks to the master) and, on the master node, the master.
type Node struct {
	cfg         Config
	obs         Observer
	incarnation uint64

	env    world.Env
	prober *probe.Prober
	master *master      // on the master node only
	conn   world.Stream // to the master; nil while disconnected
	heard  int64        // when the master was last heard from, local clock

	window  uint64 // windows this incarnation has opened
	round   uint64 // the round the open window belongs to
	length  time.Duration
	rotate  world.Timer // Variant A: the local window timer
	retries int
	cons    *consensus
}

// New returns the program of one node. incarnation tells restarts apart (the
// harness counts boots); obs may be nil.
func New(cfg Config, incarnation uint64, obs Observer) *Node {
	if obs == nil {
		obs = NopObserver{}
	}
	return &Node{cfg: cfg, obs: obs, incarnation: incarnation, length: cfg.Window}
}

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
		n.cons = newConsensus(n)
		if n.participant() {
			n.openWindow(1)
		}
		return nil
	case env.Node() == n.cfg.Master:
		m, err := newMaster(n)
		if err != nil {
			return err
		}
		n.master = m
	default:
		n.dial()
	}
	env.AfterFunc(n.cfg.Heartbeat, n.heartbeat)
	return nil
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

// heartbeat keeps the master connection alive and drops it when the master
// has been silent for three heartbeats.
func (n *Node) heartbeat() {
	n.env.AfterFunc(n.cfg.Heartbeat, n.heartbeat)
	if n.master != nil {
		n.master.heartbeat()
		return
	}
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
		n.startRound(b.RoundStart)
	case *syncpb.Envelope_RoundEnd:
		if n.prober.Opened() && n.round == b.RoundEnd.RoundId {
			n.closeWindow()
		}
	case *syncpb.Envelope_Heartbeat:
	default:
		n.env.Logger().Warn("unexpected message from master", "kind", wire.Kind(env))
	}
}

func (n *Node) startRound(rs *syncpb.RoundStart) {
	if rs.WindowNs > 0 {
		n.length = time.Duration(rs.WindowNs)
	}
	if rs.CadenceNs > 0 {
		n.prober.SetCadence(time.Duration(rs.CadenceNs))
	}
	if !n.participant() {
		return
	}
	if n.cfg.Mode == ModeWindows && n.prober.Opened() {
		return // Variant A rotates by itself once started
	}
	n.openWindow(rs.RoundId)
}

// openWindow starts probing for round; in Variant A and consensus mode it
// also schedules the window's own end.
func (n *Node) openWindow(round uint64) {
	n.window++
	n.round = round
	n.prober.Open(round, n.window)
	if n.cfg.Mode != ModeRounds {
		n.rotate = n.env.AfterFunc(n.length, n.rotateWindow)
	}
}

func (n *Node) rotateWindow() {
	n.closeWindow()
	if n.cfg.Rounds > 0 && n.round >= uint64(n.cfg.Rounds) {
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
	if n.cons != nil {
		n.cons.update(data)
		return
	}
	env := &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: data}}
	if n.master != nil {
		b, err := wire.Marshal(env, n.cfg.MaxFrame)
		if err == nil {
			m := n.master
			n.env.AfterFunc(0, func() { m.report(int(n.env.Node()), data, len(b)) })
		}
		return
	}
	n.send(env)
}

// agentConn is the handler of the node's stream to the master.
type agentConn struct{ n *Node }

func (a agentConn) OnOpen(s world.Stream) {
	n := a.n
	if s != n.conn {
		return
	}
	n.heard = int64(n.env.Host().Now())
	n.send(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{
		NodeId: int32(n.env.Node()), Incarnation: n.incarnation, LastRoundId: n.round,
	}}})
}

func (a agentConn) OnMessage(s world.Stream, msg []byte) {
	n := a.n
	if s != n.conn {
		return
	}
	env, err := wire.Unmarshal(msg, n.cfg.MaxFrame)
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
