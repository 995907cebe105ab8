package rounds

import (
	"log/slog"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// masterCore is the master's gather and round state with no I/O, as etcd
// raft's core: it takes events (Step) and returns the actions they call
// for (Ready), in the order they are to be carried out. It holds no
// stream, timer, clock, solver or logger: the driver (master, on a
// world.Env) turns world callbacks into events and carries out the
// actions, so that another driver (a tree of aggregators, a control plane
// over MPI) can run the same rounds.
//
// Connections are the driver's, named by connID. Time is the master's
// local clock, which the core reads through clock exactly where it needs
// a reading and no more (a reading of a simulated host clock is a draw of
// its read noise, so the readings' count and order are behaviour): a
// driver that knows the time passes a function that returns it. Timers
// are asked for as durations from the event. Solving is a seam: the core
// asks for it (actSolve) and takes the solution back as an event
// (evSolved), so that a driver may charge the solve's cost as time before
// it answers. Events that arrive meanwhile are taken as usual (the gather
// is closed: a report is stale).
type masterCore struct {
	cfg Config
	// local are the features of the master's own node (Hello.features,
	// FeatureRoundResult when it takes its RoundResults).
	local uint64

	conns  []connID       // by node ID; 0 while not connected
	owners map[connID]int // the node of each registered connection
	heard  []int64        // when each connection was last heard from
	// features and incarnation are what each connection's hello
	// announced (Hello.features, Feature*; the node's boot).
	features    []uint64
	incarnation []uint64

	seq     uint64
	round   uint64
	started bool
	gather  bool
	// solving is the round whose solution the core waits for (0: none).
	solving uint64
	solve   *RoundReport // the round being solved
	endAt   int64        // local clock when ROUND_END went out
	// gathered is the local clock when the gather closed (the round's
	// solve was asked for): GatherWait ends there, EndToStart after the
	// solve, whose modelled cost a simulated master charges.
	gathered int64
	reports  []*syncpb.NodeWindowData // by node ID, for the round being gathered
	bytes    int
	retries  int
	length   time.Duration
	history  []stability
	// rejectedReports and rejectedEdges count, since the last round was
	// solved, the reports refused whole and the edges dropped from the
	// reports taken (see checkReport and screenEdges); the round's Notes
	// and log report them.
	rejectedReports, rejectedEdges int
	// refused counts the same by reason (see refusal), with the records
	// of the solution left out (see writable), for RoundReport.Refused.
	refused map[string]int
	// pending are the accepted connections that have not said hello yet,
	// in the order they opened; a heartbeat closes those that stay silent
	// (see helloWait).
	pending []pendingConn

	clock func() int64 // reads the master's local clock
	ready []coreAction // the actions not yet handed out
	spare []coreAction // the other buffer (see Ready)
}

// connID names one of the driver's connections; 0 is none.
type connID uint64

// pendingConn is an accepted connection waiting for its hello.
type pendingConn struct {
	conn connID
	from world.Addr
	at   int64
}

// newMasterCore returns the core of a master with cfg on a world of size
// nodes, whose own node announces the features local, reading its local
// clock with clock.
func newMasterCore(cfg Config, size int, local uint64, clock func() int64) *masterCore {
	return &masterCore{
		cfg:         cfg,
		clock:       clock,
		local:       local,
		conns:       make([]connID, size),
		owners:      map[connID]int{},
		heard:       make([]int64, size),
		features:    make([]uint64, size),
		incarnation: make([]uint64, size),
		reports:     make([]*syncpb.NodeWindowData, size),
		length:      cfg.Window,
		round:       cfg.LastRound,
	}
}

// coreEvent is one input of masterCore.Step.
type coreEvent interface{ isEvent() }

// Events.
type (
	// evStart: the master is listening; it waits for every participant's
	// hello, or one gather deadline (timerStart).
	evStart struct{}
	// evOpen: the driver accepted conn from an address.
	evOpen struct {
		Conn connID
		From world.Addr
	}
	// evMessage: a frame arrived on conn.
	evMessage struct {
		Conn connID
		From world.Addr
		Data []byte
	}
	// evClosed: conn broke or its peer closed it (not one the core
	// closed: that gets no event).
	evClosed struct {
		Conn connID
		Err  error
	}
	// evReport: the master's own node's report, by a direct call, with
	// the size it would have on the wire.
	evReport struct {
		Node int
		Data *syncpb.NodeWindowData
		Size int
	}
	// evTick: a heartbeat.
	evTick struct{}
	// evTimer: the timer Timer (armed by actTimer) fired.
	evTimer struct {
		Timer timerKind
	}
	// evSolved: the solution of the round actSolve asked for, with the
	// solver's notes.
	evSolved struct {
		Round   uint64
		Summary *graphcalc.RoundSummary
		Offsets []offsets.Offset
		Edges   []offsets.Edge
		Err     error
		Notes   []string
	}
)

func (evStart) isEvent()   {}
func (evOpen) isEvent()    {}
func (evMessage) isEvent() {}
func (evClosed) isEvent()  {}
func (evReport) isEvent()  {}
func (evTick) isEvent()    {}
func (evTimer) isEvent()   {}
func (evSolved) isEvent()  {}

// timerKind is what the master's deadline timer does when it fires.
type timerKind uint8

// The master's timers: one deadline at a time (a new one replaces the
// last; actStop stops the current one).
const (
	timerStart    timerKind = iota + 1 // start round 1 with whoever said hello
	timerRoundEnd                      // end the round (ROUND_END)
	timerGather                        // the gather deadline: solve with what came
)

func (k timerKind) String() string {
	switch k {
	case timerStart:
		return "start"
	case timerRoundEnd:
		return "round_end"
	case timerGather:
		return "gather"
	}
	return "unknown"
}

// coreAction is one output of masterCore.Ready.
type coreAction interface{ isAction() }

// sendPurpose says why a frame goes out, for the driver's log when the
// send fails and its count of result bytes.
type sendPurpose uint8

// Why the master sends a frame.
const (
	sendBroadcast sendPurpose = iota + 1 // ROUND_START, ROUND_END
	sendEcho                             // a heartbeat echoed
	sendResult                           // a RoundResult
)

// Actions, to be carried out in the order given.
type (
	// actSend: send Data (Env encoded) on Conn, node Node's connection
	// (-1 where the core does not know the node).
	actSend struct {
		Conn    connID
		Node    int
		Env     *syncpb.Envelope
		Data    []byte
		Purpose sendPurpose
	}
	// actClose: close Conn; the driver forgets it (it gets no evClosed).
	actClose struct{ Conn connID }
	// actLocal: hand Env to the master's own node, after the current
	// callback.
	actLocal struct{ Env *syncpb.Envelope }
	// actTimer: arm the deadline timer to fire Timer After from now (on
	// the master's local clock), replacing the last one (which is not
	// stopped).
	actTimer struct {
		Timer timerKind
		After time.Duration
	}
	// actStop: stop the deadline timer.
	actStop struct{}
	// actSolve: solve Round from Nodes and answer with evSolved.
	actSolve struct {
		Round uint64
		Nodes []*syncpb.NodeWindowData
	}
	// actLog: log a record.
	actLog struct {
		Level slog.Level
		Msg   string
		Args  []any
	}
	// actRound: the round is done; hand Report to the observer. Its
	// Figures.ResultBytes are the driver's to fill: the bytes of the
	// sendResult frames of this batch that went out.
	actRound struct{ Report *RoundReport }
)

func (actSend) isAction()  {}
func (actClose) isAction() {}
func (actLocal) isAction() {}
func (actTimer) isAction() {}
func (actStop) isAction()  {}
func (actSolve) isAction() {}
func (actLog) isAction()   {}
func (actRound) isAction() {}

// Step takes one event; its actions wait in Ready.
func (c *masterCore) Step(ev coreEvent) {
	switch e := ev.(type) {
	case evStart:
		c.arm(timerStart, c.cfg.GatherDeadline)
	case evOpen:
		c.await(e.Conn, e.From)
	case evMessage:
		c.message(e.Conn, e.From, e.Data)
	case evClosed:
		if id, ok := c.owners[e.Conn]; ok {
			c.log(slog.LevelInfo, "node connection closed", "node", id, "err", e.Err)
		}
		c.forget(e.Conn)
	case evReport:
		c.report(e.Node, e.Data, e.Size)
	case evTick:
		c.heartbeat()
	case evTimer:
		switch e.Timer {
		case timerStart:
			c.begin()
		case timerRoundEnd:
			c.endRound()
		case timerGather:
			c.finish()
		}
	case evSolved:
		c.solved(e)
	}
}

// Ready returns the actions of the events taken since the last call, in
// order. The slice is the driver's until the next Ready: a Step while it
// is carried out (evSolved) writes elsewhere.
func (c *masterCore) Ready() []coreAction {
	out := c.ready
	clear(c.spare)
	c.ready, c.spare = c.spare[:0], out
	return out
}

// emit queues an action.
func (c *masterCore) emit(a coreAction) { c.ready = append(c.ready, a) }

// log queues a log record.
func (c *masterCore) log(level slog.Level, msg string, args ...any) {
	c.emit(actLog{Level: level, Msg: msg, Args: args})
}

// arm queues the deadline timer to fire k after d.
func (c *masterCore) arm(k timerKind, d time.Duration) {
	c.emit(actTimer{Timer: k, After: d})
}

// connected reports whether node can take part in this round.
func (c *masterCore) connected(node world.NodeID) bool {
	return node == c.cfg.Master || c.conns[node] != 0
}

func (c *masterCore) allConnected() bool {
	for _, p := range c.cfg.Participants {
		if !c.connected(p) {
			return false
		}
	}
	return true
}

// attach registers conn as node's connection (tests set up rounds with
// it, as a hello would).
func (c *masterCore) attach(node int, conn connID) {
	if old := c.conns[node]; old != 0 {
		delete(c.owners, old)
	}
	c.conns[node] = conn
	if conn != 0 {
		c.owners[conn] = node
	}
}
