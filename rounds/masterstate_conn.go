package rounds

import (
	"log/slog"
	"time"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// helloWait is how many heartbeats an accepted stream may stay without a
// hello before the master closes it; maxPending bounds, per node, the
// streams that may wait at once (the oldest is closed beyond it), so that
// a peer that opens connections and says nothing holds neither sockets nor
// memory for long.
const (
	helloWait  = 3
	maxPending = 4
)

// message takes one frame that arrived on conn.
func (c *masterCore) message(conn connID, from world.Addr, msg []byte) {
	env, err := wire.Unmarshal(msg, c.cfg.MaxFrame)
	if err != nil {
		c.log(slog.LevelWarn, "closing connection: bad message", "from", from, "bytes", len(msg), "err", err)
		c.drop(conn)
		return
	}
	if h, ok := env.Body.(*syncpb.Envelope_Hello); ok {
		c.greeted(conn)
		c.hello(conn, from, h.Hello)
		return
	}
	node, ok := c.owners[conn]
	if !ok {
		c.log(slog.LevelWarn, "closing connection: message before hello", "from", from, "kind", wire.Kind(env))
		c.drop(conn)
		return
	}
	c.heard[node] = c.clock()
	switch b := env.Body.(type) {
	case *syncpb.Envelope_Window:
		c.report(node, b.Window, len(msg))
	case *syncpb.Envelope_Heartbeat:
		c.emit(actSend{Conn: conn, Node: node, Env: env, Data: msg, Purpose: sendEcho})
	default:
		c.log(slog.LevelWarn, "closing connection: unexpected message", "node", node, "kind", wire.Kind(env))
		c.drop(conn)
	}
}

// hello registers conn as node's connection, replacing an older one.
func (c *masterCore) hello(conn connID, from world.Addr, h *syncpb.Hello) {
	node := int(h.NodeId)
	if node < 0 || node >= len(c.conns) || world.NodeID(node) == c.cfg.Master || int(from.Node) != node {
		c.log(slog.LevelWarn, "closing connection: bad hello", "from", from, "node", h.NodeId)
		c.drop(conn) // a registered connection is forgotten too: it gets no evClosed
		return
	}
	if old := c.conns[node]; old != 0 && old != conn {
		c.emit(actClose{Conn: old})
	}
	if c.heard[node] != 0 {
		c.retries++
	}
	c.attach(node, conn)
	c.features[node] = h.Features
	c.incarnation[node] = h.Incarnation
	c.heard[node] = c.clock()
	c.log(slog.LevelInfo, "node joined", "node", node, "incarnation", h.Incarnation, "last_round", h.LastRoundId)
	if !c.started && c.allConnected() {
		c.begin()
	}
}

// drop closes conn and forgets it.
func (c *masterCore) drop(conn connID) {
	c.emit(actClose{Conn: conn})
	c.forget(conn)
}

// forget forgets conn (closed, or closing): as waiting for its hello, and
// as a node's connection, which the gather then no longer waits for.
func (c *masterCore) forget(conn connID) {
	c.greeted(conn)
	if id, ok := c.owners[conn]; ok {
		c.attach(id, 0)
		if c.gather {
			c.checkGather()
		}
	}
}

// heartbeat drops connections that have been silent for three heartbeats.
func (c *masterCore) heartbeat() {
	now := c.clock()
	c.closeSilent(now)
	for id, conn := range c.conns {
		if conn != 0 && time.Duration(now-c.heard[id]) > 3*c.cfg.Heartbeat {
			c.log(slog.LevelWarn, "node silent; dropping its connection", "node", id)
			c.emit(actClose{Conn: conn})
			c.attach(id, 0)
		}
	}
	if c.gather {
		c.checkGather()
	}
}

// closeSilent closes the accepted connections that have waited for their
// hello longer than helloWait heartbeats.
func (c *masterCore) closeSilent(now int64) {
	keep := c.pending[:0]
	for _, p := range c.pending {
		if time.Duration(now-p.at) > helloWait*c.cfg.Heartbeat {
			c.log(slog.LevelWarn, "closing connection: no hello", "from", p.from, "waited", time.Duration(now-p.at))
			c.emit(actClose{Conn: p.conn})
			continue
		}
		keep = append(keep, p)
	}
	clear(c.pending[len(keep):])
	c.pending = keep
}

// await records conn, just accepted, as waiting for its hello, closing the
// oldest waiting connection when maxPending per node already wait.
func (c *masterCore) await(conn connID, from world.Addr) {
	if limit := maxPending * len(c.conns); len(c.pending) >= limit {
		old := c.pending[0]
		c.log(slog.LevelWarn, "closing connection: too many connections without hello", "from", old.from, "limit", limit)
		c.emit(actClose{Conn: old.conn})
		c.pending = append(c.pending[:0], c.pending[1:]...)
	}
	c.pending = append(c.pending, pendingConn{conn: conn, from: from, at: c.clock()})
}

// greeted forgets conn as waiting for its hello (it said hello, or
// closed).
func (c *masterCore) greeted(conn connID) {
	for i, p := range c.pending {
		if p.conn == conn {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			return
		}
	}
}
