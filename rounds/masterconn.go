package rounds

import (
	"log/slog"
	"math"

	"github.com/chronosync/chronosync/world"
)

// masterConn is the handler of every stream the master accepted: it hands
// the master's core each stream event, the stream named by its connID.
type masterConn struct{ m *master }

func (c masterConn) OnOpen(s world.Stream) {
	c.m.step(evOpen{Conn: c.m.conn(s), From: s.RemoteAddr()})
}

func (c masterConn) OnMessage(s world.Stream, msg []byte) {
	c.m.step(evMessage{Conn: c.m.conn(s), From: s.RemoteAddr(), Data: msg})
}

func (c masterConn) OnClose(s world.Stream, err error) {
	id := c.m.conn(s)
	c.m.step(evClosed{Conn: id, Err: err})
	c.m.unmap(id)
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
func (c *masterCore) adapt(r *RoundReport) {
	cfg := &c.cfg
	if cfg.WindowMin == 0 || r.Summary == nil {
		return
	}
	cur := stability{drift: map[int]float64{}}
	for _, md := range r.Summary.Nodes {
		cur.drift[md.Node] = md.DriftPPM()
	}
	c.history = append(c.history, cur)
	if len(c.history) < 2 {
		return
	}
	prev := c.history[len(c.history)-2]
	worst := 0.0
	for node, d := range cur.drift {
		if p, ok := prev.drift[node]; ok {
			worst = math.Max(worst, math.Abs(d-p))
		}
	}
	next := c.length
	switch {
	case worst < stableDriftPPM:
		next = min(2*c.length, cfg.WindowMax)
	case worst > unstableDriftPPM:
		next = max(c.length/2, cfg.WindowMin)
	}
	if next != c.length {
		c.log(slog.LevelInfo, "window adapted", "from", c.length, "to", next, "drift_change_ppm", worst)
	}
	c.length = next
	if len(c.history) > 4 {
		c.history = c.history[1:]
	}
}

// Thresholds of the adaptive window, in ppm of drift change between rounds.
const (
	stableDriftPPM   = 0.02
	unstableDriftPPM = 0.1
)
