package halo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/world"
)

// Port is the stream port ranks listen on.
const Port uint16 = 7300

// Message kinds on a rank's streams.
const (
	kindData byte = iota + 1 // a halo
	kindRTS                  // rendezvous: request to send
	kindCTS                  // rendezvous: clear to send
)

// Directions a halo travels: left (it arrives as the left neighbour's
// right halo) or right.
const (
	goingLeft  = 0
	goingRight = 1
)

const headerSize = 6 // kind, direction, iteration (uint32)

// Rank is one PhaseGap rank as a world program. Create it with New.
type Rank struct {
	p     phasegap.Params
	d     phasegap.Derived
	costs Costs

	env         world.Env
	left, right world.Stream // to the left neighbour (accepted) and the right (dialed)
	self        bool         // a ring of one: both halos are the rank's own
	rightOpen   bool

	iter     int // the iteration in progress
	sample   report.Sample
	samples  []report.Sample
	inMPI    bool
	deferred [][]byte // rendezvous messages that arrived outside an MPI call
	// arrived[it] has bit dir set once the halo travelling dir for
	// iteration it is here (received, and noticed inside an MPI call).
	arrived  map[int]uint8
	received map[int]uint8 // on the wire, not yet noticed
	// sentData[it] has bit dir set once the halo travelling dir for
	// iteration it has left: at the post when eager, on the clear to send
	// when by rendezvous. A wait completes only with its sends (MPI's
	// Waitall completes the send requests too).
	sentData map[int]uint8
	started  bool // the first iteration began
	isPosted bool // the current iteration's exchange was started
	waiting  bool // in the completion phase, until both halos are here
	done     bool // both halos of the current iteration are here
	doneAt   world.Time
	tests    int
	polls    int
	finished bool
	err      error
	notify   func() // called once, when the rank finished or failed
	notified bool
	port     uint16 // the ranks' stream port
	dials    int    // dials of the right neighbour that never opened
	buf      []byte // the message being sent
	spin     time.Duration

	// The pure-communication pass, after the measured iterations (see
	// pureBegin): whether it runs, the exchanges done, the current one's
	// start, and the timed ones' durations.
	pure      bool
	pureDone  int
	pureStart world.Time
	pureComm  []int64
}

// maxDials is how many times a rank dials its right neighbour before it
// gives up; a dial that never opened is retried after a backoff.
const maxDials = 8

// New returns a rank running p (validated for ranks ranks) with costs.
func New(p phasegap.Params, ranks int, costs Costs) (*Rank, error) {
	d, err := p.Validate(ranks)
	if err != nil {
		return nil, err
	}
	if err := costs.Validate(); err != nil {
		return nil, err
	}
	return &Rank{p: p, d: d, costs: costs, port: Port, arrived: map[int]uint8{}, received: map[int]uint8{}, sentData: map[int]uint8{}}, nil
}

// Spin makes the rank's modelled work exact on a world whose timers fire
// late (the real backend's): each wait's timer is due lead early and the
// rest is spun on the host clock, keeping the rank's loop, as a computing
// rank keeps its CPU, busy (messages that arrive meanwhile wait, as they
// would for an MPI call). Set it before Start; 0, the default, spins
// never (the simulator's timers are exact).
func (r *Rank) Spin(lead time.Duration) { r.spin = lead }

// UsePort makes the rank listen and dial on port instead of Port. Call it
// before Start.
func (r *Rank) UsePort(port uint16) { r.port = port }

// Done reports whether the rank ran all its iterations.
func (r *Rank) Done() bool { return r.finished }

// Err is what stopped the rank early, if anything.
func (r *Rank) Err() error { return r.err }

// Notify makes the rank call f once, from its own callback, when it has
// run all its iterations or has failed (Err). Set it before Start.
func (r *Rank) Notify(f func()) { r.notify = f }

// ended calls the notification once the rank finished or failed.
func (r *Rank) ended() {
	if (r.finished || r.err != nil) && !r.notified && r.notify != nil {
		r.notified = true
		r.notify()
	}
}

// fail records the first error that stops the rank.
func (r *Rank) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.ended()
}

// Result is the rank's measured iterations (after the warmup).
func (r *Rank) Result() report.Rank {
	return report.Rank{Rank: int(r.env.Node()), Samples: r.samples, PureComm: r.pureComm}
}

// Start listens for the left neighbour and dials the right one; the
// iterations begin once both streams are open.
func (r *Rank) Start(env world.Env) error {
	r.env = env
	n := env.Nodes()
	if n == 1 {
		r.self = true
		env.AfterFunc(0, r.begin)
		return nil
	}
	if _, err := env.Listen(r.port, (*leftHandler)(r)); err != nil {
		return err
	}
	return r.dialRight()
}

// dialRight dials the right neighbour.
func (r *Rank) dialRight() error {
	right := world.NodeID((int(r.env.Node()) + 1) % r.env.Nodes())
	s, err := r.env.Dial(world.Addr{Node: right, Port: r.port}, (*rightHandler)(r))
	if err != nil {
		return err
	}
	r.right = s
	r.dials++
	return nil
}

// leftHandler serves the stream the left neighbour dialed; rightHandler
// the one this rank dialed.
type (
	leftHandler  Rank
	rightHandler Rank
)

func (h *leftHandler) OnOpen(s world.Stream) {
	r := (*Rank)(h)
	r.left = s
	r.maybeBegin()
}
func (h *leftHandler) OnMessage(_ world.Stream, msg []byte) { (*Rank)(h).receive(msg) }
func (h *leftHandler) OnClose(_ world.Stream, err error)    { (*Rank)(h).closed(err) }

func (h *rightHandler) OnOpen(world.Stream) {
	r := (*Rank)(h)
	r.rightOpen = true
	r.maybeBegin()
}
func (h *rightHandler) OnMessage(_ world.Stream, msg []byte) {
	(*Rank)(h).receive(msg)
}
func (h *rightHandler) OnClose(_ world.Stream, err error) {
	r := (*Rank)(h)
	if r.rightOpen || r.dials >= maxDials {
		r.closed(err)
		return
	}
	// A dial that never opened (the neighbour not listening yet, a lost
	// handshake): again, after a backoff.
	backoff := time.Duration(10<<r.dials) * time.Millisecond
	r.env.Logger().Debug("halo: dial failed; retrying", "err", err, "after", backoff)
	r.env.AfterFunc(backoff, func() {
		if err := r.dialRight(); err != nil {
			r.fail(fmt.Errorf("rank %d: dial: %w", r.env.Node(), err))
		}
	})
}

func (r *Rank) closed(err error) {
	if !r.finished {
		r.fail(fmt.Errorf("rank %d: a neighbour's stream closed mid-run: %v", r.env.Node(), err))
	}
}

func (r *Rank) maybeBegin() {
	if r.left != nil && r.rightOpen && !r.started {
		r.begin()
	}
}

// now is the rank's clock.
func (r *Rank) now() world.Time { return r.env.Host().Now() }

// send writes a message of kind for iteration it travelling dir, with a
// payload of size bytes for data.
func (r *Rank) send(kind byte, dir, it, size int) {
	// Both worlds copy what Send is given: the buffer is the rank's own,
	// reused (a halo's payload is zeros: only its size matters here).
	if cap(r.buf) < headerSize+size {
		r.buf = make([]byte, headerSize+size)
	}
	msg := r.buf[:headerSize+size]
	msg[0], msg[1] = kind, byte(dir)
	if kind == kindData {
		r.sentData[it] |= 1 << dir
	}
	binary.BigEndian.PutUint32(msg[2:], uint32(it))
	if r.self {
		// A ring of one: the message is at once the rank's own.
		r.deliver(append([]byte(nil), msg[:headerSize]...))
		return
	}
	// A halo going left leaves on the left stream; a CTS answers the
	// side the halo comes from: a halo travelling right comes from the
	// left.
	s := r.right
	if dir == goingLeft && kind != kindCTS || dir == goingRight && kind == kindCTS {
		s = r.left
	}
	if err := s.Send(msg); err != nil {
		r.fail(fmt.Errorf("rank %d: send: %w", r.env.Node(), err))
	}
}

// receive takes a message from a neighbour.
func (r *Rank) receive(msg []byte) {
	if len(msg) < headerSize {
		r.fail(errors.New("halo: a message shorter than its header"))
		return
	}
	r.deliver(append([]byte(nil), msg[:headerSize]...)) // the header is all that is read
}

// deliver handles a message: a halo is received (noticed at the next MPI
// call); a rendezvous message waits for the next MPI call, unless the
// rank is in one or has a progress thread.
func (r *Rank) deliver(msg []byte) {
	kind, dir, it := msg[0], int(msg[1]), int(binary.BigEndian.Uint32(msg[2:]))
	if kind == kindData {
		r.received[it] |= 1 << dir
		if r.progressing() {
			r.progress()
		}
		return
	}
	r.deferred = append(r.deferred, msg[:headerSize])
	if r.progressing() {
		r.progress()
	}
}

// progressing reports whether MPI makes progress now: inside an MPI
// call, or always with a progress thread.
func (r *Rank) progressing() bool { return r.inMPI || r.p.Progress == "progress_thread" }

// progress is what an MPI call does: notice the halos received, answer a
// request to send with a clear to send, send a halo cleared to go.
func (r *Rank) progress() {
	for len(r.deferred) > 0 {
		msg := r.deferred[0]
		r.deferred = r.deferred[1:]
		kind, dir, it := msg[0], int(msg[1]), int(binary.BigEndian.Uint32(msg[2:]))
		switch kind {
		case kindRTS:
			r.send(kindCTS, dir, it, 0)
		case kindCTS:
			r.send(kindData, dir, it, r.msgBytes())
		}
	}
	for it, bits := range r.received {
		r.arrived[it] |= bits
		delete(r.received, it)
	}
	if !r.done && r.arrived[r.iter] == 3 && r.sentData[r.iter] == 3 && r.isPosted {
		r.done, r.doneAt = true, r.now()
		delete(r.arrived, r.iter)
		delete(r.sentData, r.iter)
		if r.waiting {
			r.waiting = false
			r.inMPI = false
			r.env.AfterFunc(0, r.completed)
		}
	}
}

func (r *Rank) msgBytes() int { return r.p.Halo * 8 }
