package rounds

import (
	"context"
	"slices"
	"time"

	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// master drives the rounds: it lives on the master node beside that node's
// own agent, to which it talks by direct calls. It is the driver of
// masterCore on a world.Env: it turns the world's callbacks (streams,
// timers, the heartbeat, the own node's reports) into the core's events
// and carries out the actions the core returns (sends, closes, the
// deadline timer, the solve, logs, the observer), in their order.
type master struct {
	n      *Node
	core   *masterCore
	solver *Solver
	// deadline is the core's deadline timer (the start, round-end or
	// gather timer), the last armed.
	deadline world.Timer
	// streams and ids map the core's connections to the world's streams
	// and back; next numbers the next one.
	streams map[connID]world.Stream
	ids     map[world.Stream]connID
	next    connID
	// queue holds the events that arrive while an action is carried out
	// (none do on the worlds of today: a stream's Send and Close call no
	// handler back), so that the core takes one event at a time.
	queue []coreEvent
	busy  bool
}

func newMaster(n *Node) (*master, error) {
	m := &master{
		n:       n,
		streams: map[connID]world.Stream{},
		ids:     map[world.Stream]connID{},
	}
	m.core = newMasterCore(n.cfg, n.env.Nodes(), n.features(), m.now)
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
	m.step(evStart{})
	return m, nil
}

func (m *master) now() int64 { return int64(m.n.env.Host().Now()) }

// step hands the core one event and carries out what it returns; a
// solve the core asks for is done here, at once, and its solution
// handed back as the next event. On a world that charges modelled work
// (world.Charger: the simulator, whose time stands still while the
// solve runs) the solve costs graphcalc.SolveCost of the node's time,
// and its solution is handed back when that time has passed: what the
// core does with it (the next round's start, the results) waits for
// the solve, as on a real master.
func (m *master) step(ev coreEvent) {
	m.queue = append(m.queue, ev)
	if m.busy {
		return
	}
	m.busy = true
	defer func() { m.busy = false }()
	for len(m.queue) > 0 {
		ev := m.queue[0]
		m.queue[0] = nil
		m.queue = m.queue[1:]
		m.core.Step(ev)
		for {
			solve, ok := m.drain()
			if !ok {
				break
			}
			sum, offs, edges, err := m.solver.Solve(solve.Round, solve.Nodes)
			solved := evSolved{Round: solve.Round, Summary: sum, Offsets: offs, Edges: edges, Err: err, Notes: m.solver.Notes()}
			if c, ok := m.n.env.(world.Charger); ok {
				c.Charge(graphcalc.SolveCost(inputEdges(solve.Nodes)))
				m.n.env.AfterFunc(0, func() { m.step(solved) })
				break
			}
			m.core.Step(solved)
		}
	}
	m.queue = m.queue[:0]
}

// inputEdges counts the edges the reports bring to a solve.
func inputEdges(reports []*syncpb.NodeWindowData) int {
	n := 0
	for _, d := range reports {
		if d != nil {
			n += len(d.Edges)
		}
	}
	return n
}

// drain carries out the core's actions; it returns the solve asked for,
// if any.
func (m *master) drain() (solve actSolve, asked bool) {
	log := m.n.env.Logger()
	results := 0 // bytes of the RoundResults sent
	for _, a := range m.core.Ready() {
		switch a := a.(type) {
		case actSend:
			s := m.streams[a.Conn]
			if s == nil {
				continue
			}
			if err := s.Send(a.Data); err != nil {
				switch a.Purpose {
				case sendEcho:
					log.Warn("heartbeat echo failed", "node", a.Node, "err", err)
				case sendResult:
					log.Warn("send failed", "to", s.RemoteAddr(), "kind", wire.Kind(a.Env), "err", err)
				default:
					log.Warn("send failed", "to", s.RemoteAddr(), "err", err)
				}
				continue
			}
			if a.Purpose == sendResult {
				results += len(a.Data)
			}
		case actClose:
			if s := m.streams[a.Conn]; s != nil {
				s.Close()
				m.unmap(a.Conn)
			}
		case actLocal:
			local, env := m.n, a.Env
			local.env.AfterFunc(0, func() { local.handle(env) })
		case actTimer:
			k := a.Timer
			m.deadline = m.n.env.AfterFunc(a.After, func() { m.step(evTimer{Timer: k}) })
		case actStop:
			if m.deadline != nil {
				m.deadline.Stop()
			}
		case actSolve:
			solve, asked = a, true
		case actLog:
			log.Log(context.Background(), a.Level, a.Msg, a.Args...)
		case actRound:
			a.Report.Figures.ResultBytes = results
			results = 0
			m.n.obs.Round(a.Report)
		}
	}
	return solve, asked
}

// conn returns the core's name of s, naming it if new.
func (m *master) conn(s world.Stream) connID {
	if id, ok := m.ids[s]; ok {
		return id
	}
	m.next++
	m.ids[s], m.streams[m.next] = m.next, s
	return m.next
}

// unmap forgets a connection.
func (m *master) unmap(id connID) {
	if s, ok := m.streams[id]; ok {
		delete(m.ids, s)
		delete(m.streams, id)
	}
}

// report takes the master's own node's report (or, in tests, any
// node's), as if it came on the node's connection.
func (m *master) report(node int, d *syncpb.NodeWindowData, size int) {
	m.step(evReport{Node: node, Data: d, Size: size})
}

// heartbeat is the master node's tick.
func (m *master) heartbeat() { m.step(evTick{}) }

// finish fires the gather deadline now (tests).
func (m *master) finish() { m.step(evTimer{Timer: timerGather}) }

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
