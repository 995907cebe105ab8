package rounds

import "github.com/chronosync/chronosync/world"

// connOf returns node's connection as the master holds it (nil: none).
func (m *master) connOf(node int) world.Stream { return m.streams[m.core.conns[node]] }

// attachStream registers s as node's connection, as its hello would but
// without one (nil: node is not connected).
func (m *master) attachStream(node int, s world.Stream) {
	if s == nil {
		m.core.attach(node, 0)
		return
	}
	m.next++
	m.ids[s], m.streams[m.next] = m.next, s
	m.core.attach(node, m.next)
}

// openRound puts the master, started, in round round (sequence seq) with
// its gather open, as ROUND_END would.
func (m *master) openRound(round, seq uint64) {
	m.core.started, m.core.round, m.core.seq = true, round, seq
	m.core.openGather()
	m.drain()
}
