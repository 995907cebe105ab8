package rounds

import (
	"math"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// masterConn is the handler of every stream the master accepted.
type masterConn struct{ m *master }

func (c masterConn) OnOpen(s world.Stream) { c.m.await(s) }

func (c masterConn) OnMessage(s world.Stream, msg []byte) {
	m := c.m
	log := m.n.env.Logger()
	env, err := wire.Unmarshal(msg, m.n.cfg.MaxFrame)
	if err != nil {
		log.Warn("closing connection: bad message", "from", s.RemoteAddr(), "bytes", len(msg), "err", err)
		c.drop(s)
		return
	}
	if h, ok := env.Body.(*syncpb.Envelope_Hello); ok {
		m.greeted(s)
		c.hello(s, h.Hello)
		return
	}
	node := c.owner(s)
	if node < 0 {
		log.Warn("closing connection: message before hello", "from", s.RemoteAddr(), "kind", wire.Kind(env))
		c.drop(s)
		return
	}
	m.heard[node] = m.now()
	switch b := env.Body.(type) {
	case *syncpb.Envelope_Window:
		m.report(node, b.Window, len(msg))
	case *syncpb.Envelope_Heartbeat:
		if err := s.Send(msg); err != nil {
			log.Warn("heartbeat echo failed", "node", node, "err", err)
		}
	default:
		log.Warn("closing connection: unexpected message", "node", node, "kind", wire.Kind(env))
		c.drop(s)
	}
}

// hello registers the stream as node's connection, replacing an older one.
func (c masterConn) hello(s world.Stream, h *syncpb.Hello) {
	m := c.m
	node := int(h.NodeId)
	if node < 0 || node >= len(m.conns) || world.NodeID(node) == m.n.cfg.Master || int(s.RemoteAddr().Node) != node {
		m.n.env.Logger().Warn("closing connection: bad hello", "from", s.RemoteAddr(), "node", h.NodeId)
		c.drop(s) // a registered stream is forgotten too: it gets no OnClose
		return
	}
	if old := m.conns[node]; old != nil && old != s {
		old.Close()
	}
	if m.heard[node] != 0 {
		m.retries++
	}
	m.conns[node] = s
	m.features[node] = h.Features
	m.heard[node] = m.now()
	m.n.env.Logger().Info("node joined", "node", node, "incarnation", h.Incarnation, "last_round", h.LastRoundId)
	if !m.started && m.allConnected() {
		m.begin()
	}
}

func (c masterConn) owner(s world.Stream) int {
	for id, cs := range c.m.conns {
		if cs == s {
			return id
		}
	}
	return -1
}

// drop closes s and forgets it.
func (c masterConn) drop(s world.Stream) {
	s.Close()
	c.forget(s)
}

func (c masterConn) forget(s world.Stream) {
	c.m.greeted(s)
	if id := c.owner(s); id >= 0 {
		c.m.conns[id] = nil
		if c.m.gather {
			c.m.checkGather()
		}
	}
}

func (c masterConn) OnClose(s world.Stream, err error) {
	if id := c.owner(s); id >= 0 {
		c.m.n.env.Logger().Info("node connection closed", "node", id, "err", err)
	}
	c.forget(s)
}

// stability is what the adaptive window remembers of a round: each node's
// drift, to compare with the next round's.
type stability struct {
	drift map[int]float64
}

// adapt sets the next window's length from the stability of the last
// rounds: when every node's drift moved by less than stableDriftPPM since
// the previous round, the window doubles (up to WindowMax), since a
// longer window averages more probes; when any moved by more than
// unstableDriftPPM, it halves (down to WindowMin), since a changing
// frequency bends a long window's line.
func (m *master) adapt(r *RoundReport) {
	cfg := &m.n.cfg
	if cfg.WindowMin == 0 || r.Summary == nil {
		return
	}
	cur := stability{drift: map[int]float64{}}
	for _, md := range r.Summary.Nodes {
		cur.drift[md.Node] = md.DriftPPM()
	}
	m.history = append(m.history, cur)
	if len(m.history) < 2 {
		return
	}
	prev := m.history[len(m.history)-2]
	worst := 0.0
	for node, d := range cur.drift {
		if p, ok := prev.drift[node]; ok {
			worst = math.Max(worst, math.Abs(d-p))
		}
	}
	next := m.length
	switch {
	case worst < stableDriftPPM:
		next = min(2*m.length, cfg.WindowMax)
	case worst > unstableDriftPPM:
		next = max(m.length/2, cfg.WindowMin)
	}
	if next != m.length {
		m.n.env.Logger().Info("window adapted", "from", m.length, "to", next, "drift_change_ppm", worst)
	}
	m.length = next
	if len(m.history) > 4 {
		m.history = m.history[1:]
	}
}

// Thresholds of the adaptive window, in ppm of drift change between rounds.
const (
	stableDriftPPM   = 0.02
	unstableDriftPPM = 0.1
)
