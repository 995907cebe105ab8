// Package world is the seam between protocol code and the world it runs in.
//
// Protocol code (probing, rounds, snapshot sampling, traced workloads) is
// written once against the interfaces here and runs unchanged in the
// deterministic simulator (package sim) or on real clocks and sockets
// (package real). It reacts to one callback at a time — a timer, a datagram,
// a stream event — and acts only through its [Env]: it never reads the OS
// clock, sleeps, starts goroutines, opens OS sockets or uses global
// randomness.
//
// Every callback of one node runs on that node's single event loop, so
// protocol state needs no locks. Callbacks must not block.
package world

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Time is a clock reading in nanoseconds since that clock's epoch. Which clock
// (host S, tracer R) is always clear from where the value came from.
type Time int64

// Add returns t shifted by d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// NodeID identifies a node. Node IDs are dense: 0..N-1.
type NodeID int

// Addr is the address of a datagram or stream endpoint: a node and a port.
type Addr struct {
	Node NodeID
	Port uint16
}

// String formats the address as "n<node>:<port>".
func (a Addr) String() string { return fmt.Sprintf("n%d:%d", a.Node, a.Port) }

// Clock is a node-local clock. Now never blocks and never fails.
type Clock interface {
	// Now returns the clock's current reading.
	Now() Time
}

// Timer is a pending callback created by [Env.AfterFunc].
type Timer interface {
	// Stop cancels the timer. It reports whether the call stopped the timer
	// (false if it had already fired or been stopped).
	Stop() bool
}

// Packet is a received datagram. Data is valid only for the duration of the
// callback; copy it to keep it.
type Packet struct {
	From Addr
	To   Addr
	Data []byte
	// RxTime is the receiving node's host clock S read when the datagram
	// arrived, as a kernel software receive timestamp would be: it does not
	// include any delay in delivering the callback.
	RxTime Time
}

// PacketHandler receives datagrams on a [PacketConn].
type PacketHandler func(p Packet)

// PacketConn is an unreliable, unordered datagram endpoint (UDP).
type PacketConn interface {
	// LocalAddr returns the endpoint's own address.
	LocalAddr() Addr
	// Send transmits one datagram to the address. It returns the sender's
	// host clock S read as the datagram left, as a kernel software transmit
	// timestamp would be. A nil error does not mean the datagram arrives.
	Send(to Addr, data []byte) (txTime Time, err error)
	// Close releases the endpoint; no callback runs for it afterwards.
	Close() error
}

// TxSource says where a transmit timestamp came from.
type TxSource uint8

const (
	// TxKernel is the world's own record of when the datagram left: the
	// kernel's software transmit timestamp on the real backend, the send
	// instant in the simulator.
	TxKernel TxSource = iota + 1
	// TxUser is the fallback: the sender's clock read in user space just
	// before the datagram was handed to the kernel, because no kernel
	// timestamp came back in time.
	TxUser
)

// String returns "kernel" or "user".
func (s TxSource) String() string {
	switch s {
	case TxKernel:
		return "kernel"
	case TxUser:
		return "user"
	}
	return fmt.Sprintf("TxSource(%d)", uint8(s))
}

// AbsoluteTimers is implemented by an [Env] whose timers may fire late
// (the real backend's: a busy machine delays its loops). A periodic task
// there schedules each period at its due time on the host clock, so that
// lateness does not add up from one period to the next. An Env that does
// not implement it (the simulator's) fires every timer on time, where
// AfterFunc from the callback is the same thing.
type AbsoluteTimers interface {
	// AfterFuncAt runs f on the node's event loop once the node's host
	// clock reads at; an at already past runs f as soon as possible.
	AfterFuncAt(at Time, f func()) Timer
}

// SourcedSender is implemented by a [PacketConn] whose transmit timestamps
// can fall back to a user-space reading (the real backend's). A PacketConn
// that does not implement it (the simulator's) has no send path: a datagram
// leaves the instant Send is called, and its transmit timestamp is always
// of [TxKernel]'s kind.
type SourcedSender interface {
	// SendSourced is Send, also saying where txTime came from.
	SendSourced(to Addr, data []byte) (txTime Time, src TxSource, err error)
}

// Stream is one end of a reliable, ordered, message-preserving connection
// (TCP with length-prefixed framing on the real backend).
type Stream interface {
	// LocalAddr returns this end's address.
	LocalAddr() Addr
	// RemoteAddr returns the peer's address.
	RemoteAddr() Addr
	// Send queues one message for delivery in order. It fails once the
	// stream is closed or when msg exceeds [MaxMessageSize].
	Send(msg []byte) error
	// Close closes the stream. The peer's handler gets OnClose with a nil
	// error; this end's handler gets no further callback.
	Close() error
}

// MaxMessageSize is the largest stream message any world accepts.
const MaxMessageSize = 16 << 20

// StreamHandler receives the events of streams. One handler may serve many
// streams; the stream argument tells them apart.
type StreamHandler interface {
	// OnOpen runs when a dialed stream is connected or a listener accepted
	// one.
	OnOpen(s Stream)
	// OnMessage runs once per message, in the order the peer sent them. msg
	// is valid only for the duration of the callback.
	OnMessage(s Stream, msg []byte)
	// OnClose runs once when the stream ends for a reason other than a
	// local Close: the peer closed it (err == nil), the connection broke, or
	// a dial failed (err != nil).
	OnClose(s Stream, err error)
}

// Listener accepts streams on a port until closed.
type Listener interface {
	// Addr returns the listening address.
	Addr() Addr
	// Close stops accepting; streams already accepted stay open.
	Close() error
}

// Env is everything a node's protocol code may use.
type Env interface {
	// Node returns this node's ID.
	Node() NodeID
	// Nodes returns how many nodes the world has.
	Nodes() int
	// Peers returns the node's out-neighbours in the topology, sorted: the
	// nodes it should probe. Any node can still be reached by address.
	Peers() []NodeID
	// Host returns the node's host clock S.
	Host() Clock
	// Tracer returns the node's tracer clock R (the GPU tracer's timestamp
	// domain).
	Tracer() Clock
	// AfterFunc runs f on the node's event loop once d has elapsed on the
	// node's host clock. d <= 0 runs f as soon as possible, after the
	// current callback returns.
	AfterFunc(d time.Duration, f func()) Timer
	// ListenPacket opens a datagram endpoint on port.
	ListenPacket(port uint16, h PacketHandler) (PacketConn, error)
	// Listen accepts streams on port; h serves every accepted stream.
	Listen(port uint16, h StreamHandler) (Listener, error)
	// Dial opens a stream to the address. The result arrives later as
	// h.OnOpen, or as h.OnClose with the error if the dial fails.
	Dial(to Addr, h StreamHandler) (Stream, error)
	// Rand returns the node's own random stream. In the simulator it is
	// derived from the scenario seed and the node's ID.
	Rand() *rand.Rand
	// Logger returns the node's structured logger.
	Logger() *slog.Logger
}

// PairReader is an Env whose host and tracer clocks it can read as one
// pair, closer together in time than a read of Host followed by one of
// Tracer: the real backend reads the two OS clocks back to back and only
// then evaluates its clock models, where two Clock reads lie a
// microsecond apart on a busy machine (the model's evaluation, a lock),
// which a (host, tracer) snapshot pair would carry as a bias. The
// simulator's clocks are read at one instant anyway and it has no such
// method. The snapshot sampler uses it where an Env has it.
type PairReader interface {
	ReadPair() (host, tracer Time)
}

// Charger is an Env whose time does not pass while a callback runs (the
// simulator): Charge makes the running callback cost d of the node's
// time, as the same work would on a real node, whose event loop runs one
// callback at a time. The node's later callbacks (timers, datagrams,
// stream messages) wait until that time has passed; what the callback
// sends leaves when it is called, and a timer set for after the work
// (AfterFunc(0, f) after Charge) runs when it ends. Real worlds have no
// such method: their callbacks take the time they take. Protocol code
// charges what it models, such as the master's solve.
type Charger interface {
	Charge(d time.Duration)
}

// Program is protocol code that runs on one node.
type Program interface {
	// Start runs once on the node's event loop when the node boots (and
	// again on a fresh Program after a crash and restart). It sets up
	// endpoints and timers and returns; everything else happens in
	// callbacks.
	Start(env Env) error
}

// ProgramFunc adapts a function to [Program].
type ProgramFunc func(env Env) error

// Start calls f(env).
func (f ProgramFunc) Start(env Env) error { return f(env) }
