package sim

import (
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/sim/eventlog"
	"github.com/chronosync/chronosync/world"
)

// Errors a stream's OnClose may carry.
var (
	ErrRefused = errors.New("sim: connection refused")
	ErrBroken  = errors.New("sim: connection broken")
)

// Streams model an established TCP connection: messages are never lost and
// arrive in order, each after the link's base delay plus its serialization
// time at the link's rate. A path cut by a partition or a downed link
// breaks the stream after Config.StreamTimeout; a crash resets the peer's
// end after one base delay.

type listener struct {
	binding
	h world.StreamHandler
}

func (n *node) Listen(port uint16, h world.StreamHandler) (world.Listener, error) {
	b, err := bind(n, n.lsns, port, "listen")
	if err != nil {
		return nil, err
	}
	l := &listener{binding: b, h: h}
	n.lsns[port] = l
	return l, nil
}

func (l *listener) Addr() world.Addr { return l.addr }

func (l *listener) Close() error {
	return release(&l.binding, func() map[uint16]*listener { return l.n.lsns })
}

type stream struct {
	n       *node
	inc     uint64
	id      int64
	local   world.Addr
	remote  world.Addr
	h       world.StreamHandler
	peer    *stream
	open    bool
	closed  bool
	last    int64    // delivery time of the last message this end sent
	broken  bool     // a break check is scheduled
	pending [][]byte // messages sent while the path was cut
}

func (n *node) Dial(to world.Addr, h world.StreamHandler) (world.Stream, error) {
	if to.Node < 0 || int(to.Node) >= len(n.s.nodes) {
		return nil, fmt.Errorf("dial %v: no such node", to)
	}
	s := n.s
	s.sid++
	st := &stream{n: n, inc: n.inc, id: s.sid, local: world.Addr{Node: n.id, Port: uint16(40000 + s.sid%20000)}, remote: to, h: h}
	n.streams = append(n.streams, st)
	s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Dial, Peer: int32(to.Node), A: st.id, B: int64(to.Port)})
	if s.cut(n.id, to.Node) != 0 {
		st.breakAfter(s.timeout)
		return st, nil
	}
	s.k.After(s.oneway(n.id, to.Node, 0), streamEvent{st, evSyn}, 0)
	return st, nil
}

// oneway is the delay of a stream segment of size bytes from→to.
func (s *Sim) oneway(from, to world.NodeID, size int) int64 {
	p := s.link(from, to).Params()
	d := int64(p.Delay)
	if r := p.Rate.BitsPerSecond; r > 0 {
		d += int64(size+udpOverhead) * 8 * 1e9 / int64(r)
	}
	return d
}

type streamEventKind uint8

const (
	evSyn    streamEventKind = iota + 1 // the dial reaches the listener
	evAck                               // the accept reaches the dialer
	evRefuse                            // no listener: the dialer learns
	evMsg                               // a message reaches the peer
	evFin                               // the peer closed
	evReset                             // the peer crashed
	evBreak                             // the path stayed cut: the stream breaks
)

type streamEvent struct {
	st   *stream
	kind streamEventKind
}

type msgEvent struct {
	st   *stream // the receiving end
	data []byte
}

func (e streamEvent) Fire(arg uint64) {
	st := e.st
	n := st.n
	s := n.s
	if e.kind == evSyn {
		// st is the dialing end; the event happens at the listener's node.
		ln := s.nodes[st.remote.Node]
		l, ok := ln.lsns[st.remote.Port]
		if !ln.up || !ok {
			s.k.After(s.oneway(st.remote.Node, n.id, 0), streamEvent{st, evRefuse}, 0)
			return
		}
		s.sid++
		sv := &stream{n: ln, inc: ln.inc, id: s.sid, local: st.remote, remote: st.local, h: l.h, peer: st, open: true}
		st.peer = sv
		ln.streams = append(ln.streams, sv)
		s.record(eventlog.Record{Node: int32(ln.id), Kind: eventlog.Open, Peer: int32(n.id), A: sv.id})
		s.k.After(s.oneway(ln.id, n.id, 0), streamEvent{st, evAck}, 0)
		sv.h.OnOpen(sv)
		return
	}
	if st.closed || !n.alive(st.inc) {
		if e.kind == evAck && !st.peer.closed {
			// The dialer went away before the accept reached it.
			s.k.After(s.oneway(n.id, st.peer.n.id, 0), streamEvent{st.peer, evReset}, 0)
		}
		return
	}
	if n.deferIfSlow(e, arg) {
		return
	}
	switch e.kind {
	case evAck:
		st.open = true
		s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Open, Peer: int32(st.remote.Node), A: st.id})
		st.h.OnOpen(st)
	case evRefuse:
		st.end(eventlog.ReasonRefused, fmt.Errorf("dial %v: %w", st.remote, ErrRefused))
	case evFin:
		st.end(eventlog.ReasonPeer, nil)
	case evBreak:
		st.broken = false
		if st.peer != nil && s.cut(n.id, st.remote.Node) == 0 && s.cut(st.remote.Node, n.id) == 0 {
			// The path healed within the timeout: what was held goes now,
			// as TCP's retransmissions would deliver it.
			held := st.pending
			st.pending = nil
			for _, msg := range held {
				st.deliver(msg)
			}
			return
		}
		fallthrough
	case evReset:
		st.end(eventlog.ReasonBroken, fmt.Errorf("stream to %v: %w", st.remote, ErrBroken))
	}
}

func (e msgEvent) Fire(arg uint64) {
	st := e.st
	n := st.n
	if st.closed || !n.alive(st.inc) {
		return
	}
	if n.deferIfSlow(e, arg) {
		return
	}
	n.s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Msg, Peer: int32(st.remote.Node), A: st.id, B: int64(len(e.data))})
	st.h.OnMessage(st, e.data)
}

// end closes this end because of the peer or the network and tells the
// handler.
func (st *stream) end(why int64, err error) {
	st.closed = true
	st.n.forget(st)
	st.n.s.record(eventlog.Record{Node: int32(st.n.id), Kind: eventlog.Close, Peer: int32(st.remote.Node), A: st.id, B: why})
	st.h.OnClose(st, err)
}

func (n *node) forget(st *stream) {
	for i, o := range n.streams {
		if o == st {
			n.streams = append(n.streams[:i], n.streams[i+1:]...)
			return
		}
	}
}

// breakAfter checks both ends after d: if the path is still cut then,
// the stream breaks; if it healed, held messages go out.
func (st *stream) breakAfter(d int64) {
	for _, e := range [2]*stream{st, st.peer} {
		if e != nil && !e.broken {
			e.broken = true
			e.n.s.k.After(d, streamEvent{e, evBreak}, 0)
		}
	}
}

// reset is called on every stream of a crashing node: its peer learns
// after one base delay.
func (st *stream) reset() {
	st.closed = true
	if p := st.peer; p != nil && !p.closed {
		s := st.n.s
		s.k.After(s.oneway(st.n.id, p.n.id, 0), streamEvent{p, evReset}, 0)
	}
}

func (st *stream) LocalAddr() world.Addr  { return st.local }
func (st *stream) RemoteAddr() world.Addr { return st.remote }

func (st *stream) Send(msg []byte) error {
	n := st.n
	if st.closed || !n.alive(st.inc) {
		return ErrClosed
	}
	if !st.open || st.peer == nil {
		return fmt.Errorf("send on stream to %v: not connected yet", st.remote)
	}
	if len(msg) > world.MaxMessageSize {
		return fmt.Errorf("send on stream to %v: message of %d bytes exceeds %d", st.remote, len(msg), world.MaxMessageSize)
	}
	msg = append([]byte(nil), msg...)
	if s := n.s; s.cut(n.id, st.remote.Node) != 0 || len(st.pending) > 0 {
		st.pending = append(st.pending, msg)
		st.breakAfter(s.timeout)
		return nil
	}
	st.deliver(msg)
	return nil
}

// deliver sends msg to the peer, in order after everything sent before.
// With a NIC rate, the message first waits for the sender's interface
// (the messages it sends go out one after another), then crosses the
// link, then waits for the receiver's (a gather from many nodes queues
// there).
func (st *stream) deliver(msg []byte) {
	s := st.n.s
	from, to := st.n, s.nodes[st.remote.Node]
	at := s.k.Now()
	var ser int64 // the message's time on an interface
	if r := s.cfg.NICRate; r > 0 {
		ser = int64(len(msg)+udpOverhead) * 8 * 1e9 / int64(r)
		from.nicTx = max(at, from.nicTx) + ser
		at = from.nicTx
	}
	at += s.oneway(from.id, to.id, len(msg))
	if s.cfg.NICRate > 0 {
		to.nicRx = max(at, to.nicRx+ser)
		at = to.nicRx
	}
	at = max(at, st.last)
	st.last = at
	_ = s.k.At(at, msgEvent{st.peer, msg}, 0)
}

func (st *stream) Close() error {
	if st.closed {
		return ErrClosed
	}
	st.closed = true
	n := st.n
	if n.alive(st.inc) {
		n.forget(st)
	}
	if p := st.peer; p != nil {
		s := n.s
		at := max(s.k.Now()+s.oneway(n.id, p.n.id, 0), st.last)
		_ = s.k.At(at, streamEvent{p, evFin}, 0)
	}
	return nil
}
