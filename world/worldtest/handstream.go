package worldtest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/chronosync/chronosync/world"
)

// The streams of a [Net]: every stream event (a connect, a message, a
// close or a break) is a [Frame] that waits in Net.Frames until the test
// delivers or drops it; crashes break streams.

// FrameKind is what a [Frame] carries.
type FrameKind uint8

const (
	// FrameConnect is a dial on its way: delivered, it opens the stream at
	// both ends (the listener's first), or fails the dial.
	FrameConnect FrameKind = iota + 1
	// FrameMessage is one stream message.
	FrameMessage
	// FrameClose is the end of a stream: a close, or a break (Err set).
	FrameClose
)

// String returns "connect", "message" or "close".
func (k FrameKind) String() string {
	switch k {
	case FrameConnect:
		return "connect"
	case FrameMessage:
		return "message"
	case FrameClose:
		return "close"
	}
	return fmt.Sprintf("FrameKind(%d)", uint8(k))
}

// Frame is one stream event on its way from one end to the other.
type Frame struct {
	// Seq numbers the frames of a Net from 1, in the order queued.
	Seq      uint64
	Kind     FrameKind
	From, To world.Addr
	Data     []byte // FrameMessage
	Err      error  // FrameClose: why the stream broke; nil for a close
	dst      *handStream
}

// ErrRefused is the error a dial to a port without a listener fails with.
var ErrRefused = errors.New("worldtest: connection refused")

// ErrCrashed is the error a stream breaks with when the node at its other
// end crashes.
var ErrCrashed = errors.New("worldtest: peer crashed")

// Crash takes node id down: its timers stop, its endpoints and listeners
// go, datagrams on their way to it are lost, and every open stream it has
// breaks, its other end getting OnClose with [ErrCrashed] once the frame
// that says so is delivered. [Net.Restart] brings it back, bare.
func (n *Net) Crash(id world.NodeID) {
	nd := n.nodes[id]
	nd.Down = true
	for _, t := range nd.timers {
		t.stopped = true
	}
	nd.timers = nil
	nd.packets, nd.listeners = nil, nil
	n.arrive = slices.DeleteFunc(n.arrive, func(a *arrival) bool { return a.d.To.Node == id })
	for _, s := range n.streams {
		if s.nd != nd || s.closed {
			continue
		}
		s.closed = true
		if s.peer != nil && !s.peer.closed {
			n.queue(Frame{Kind: FrameClose, From: s.local, To: s.remote, Err: ErrCrashed, dst: s.peer})
		}
	}
	n.forgetClosed()
}

// Restart brings a crashed node back with no timers, endpoints or
// streams; the test starts its program again.
func (n *Net) Restart(id world.NodeID) { n.nodes[id].Down = false }

// forgetClosed drops the streams closed at both ends.
func (n *Net) forgetClosed() {
	n.streams = slices.DeleteFunc(n.streams, func(s *handStream) bool {
		return s.closed && (s.peer == nil || s.peer.closed)
	})
}

// queue appends f to Frames.
func (n *Net) queue(f Frame) {
	n.seq++
	f.Seq = n.seq
	n.Frames = append(n.Frames, f)
	if n.OnFrame != nil {
		n.OnFrame(f)
	}
}

// DeliverFrame delivers the frame at index i of Frames and removes it.
func (n *Net) DeliverFrame(i int) {
	f := n.Frames[i]
	n.Frames = slices.Delete(n.Frames, i, i+1)
	switch f.Kind {
	case FrameConnect:
		n.connect(f)
	case FrameMessage:
		if s := f.dst; !s.closed && !s.nd.Down {
			s.h.OnMessage(s, f.Data)
		}
	case FrameClose:
		if s := f.dst; !s.closed && !s.nd.Down {
			s.closed = true
			s.h.OnClose(s, f.Err)
		}
	}
	n.forgetClosed()
}

// DropFrame removes the frame at index i of Frames undelivered. Dropping a
// connect fails the dial (ErrRefused); dropping a message loses it, which
// TCP would not, so a script that does says what it models.
func (n *Net) DropFrame(i int) {
	f := n.Frames[i]
	n.Frames = slices.Delete(n.Frames, i, i+1)
	if f.Kind == FrameConnect {
		s := f.dst
		if !s.closed && !s.nd.Down {
			s.closed = true
			s.h.OnClose(s, ErrRefused)
		}
		n.forgetClosed()
	}
}

// connect opens a dialed stream, or fails it.
func (n *Net) connect(f Frame) {
	dialer := f.dst
	if dialer.closed || dialer.nd.Down {
		return
	}
	to := n.nodes[f.To.Node]
	h, ok := to.listeners[f.To.Port]
	if !ok || to.Down {
		dialer.closed = true
		dialer.h.OnClose(dialer, fmt.Errorf("dial %v: %w", f.To, ErrRefused))
		return
	}
	n.seq++
	acc := &handStream{net: n, nd: to, h: h, local: f.To, remote: f.From, peer: dialer, open: true}
	n.streams = append(n.streams, acc)
	dialer.peer = acc
	dialer.open = true
	h.OnOpen(acc)
	if !dialer.closed {
		dialer.h.OnOpen(dialer)
	}
}

// Listen implements [world.Env].
func (nd *Node) Listen(port uint16, h world.StreamHandler) (world.Listener, error) {
	if nd.listeners == nil {
		nd.listeners = map[uint16]world.StreamHandler{}
	}
	if _, ok := nd.listeners[port]; ok {
		return nil, fmt.Errorf("worldtest: n%d: stream port %d in use", nd.ID, port)
	}
	nd.listeners[port] = h
	return handListener{nd, port}, nil
}

// Dial implements [world.Env]: the connect waits in Frames.
func (nd *Node) Dial(to world.Addr, h world.StreamHandler) (world.Stream, error) {
	n := nd.net
	if nd.Down {
		return nil, fmt.Errorf("worldtest: n%d is down", nd.ID)
	}
	n.seq++
	s := &handStream{net: n, nd: nd, h: h, local: world.Addr{Node: nd.ID, Port: uint16(40000 + n.seq%20000)}, remote: to}
	n.streams = append(n.streams, s)
	n.queue(Frame{Kind: FrameConnect, From: s.local, To: to, dst: s})
	return s, nil
}

type handListener struct {
	nd   *Node
	port uint16
}

func (l handListener) Addr() world.Addr { return world.Addr{Node: l.nd.ID, Port: l.port} }

func (l handListener) Close() error {
	delete(l.nd.listeners, l.port)
	return nil
}

// handStream is one end of a stream.
type handStream struct {
	net           *Net
	nd            *Node
	h             world.StreamHandler
	local, remote world.Addr
	peer          *handStream
	open, closed  bool
}

func (s *handStream) LocalAddr() world.Addr  { return s.local }
func (s *handStream) RemoteAddr() world.Addr { return s.remote }

func (s *handStream) Send(msg []byte) error {
	switch {
	case s.closed:
		return fmt.Errorf("worldtest: send on closed stream %v→%v", s.local, s.remote)
	case !s.open:
		return fmt.Errorf("worldtest: send on stream %v→%v before it opened", s.local, s.remote)
	case len(msg) > world.MaxMessageSize:
		return fmt.Errorf("worldtest: message of %d bytes exceeds %d", len(msg), world.MaxMessageSize)
	}
	s.net.queue(Frame{Kind: FrameMessage, From: s.local, To: s.remote, Data: slices.Clone(msg), dst: s.peer})
	return nil
}

func (s *handStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.peer != nil && !s.peer.closed {
		s.net.queue(Frame{Kind: FrameClose, From: s.local, To: s.remote, dst: s.peer})
	}
	s.net.forgetClosed()
	return nil
}

var (
	_ world.Stream   = (*handStream)(nil)
	_ world.Listener = handListener{}
)
