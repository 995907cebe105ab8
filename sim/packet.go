package sim

import (
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/sim/eventlog"
	"github.com/chronosync/chronosync/world"
)

// udpOverhead is the on-wire bytes a datagram carries beyond its payload:
// Ethernet (14), IPv4 (20) and UDP (8) headers. The link model sees
// payload + udpOverhead.
const udpOverhead = 42

// maxDatagram is the largest UDP payload over IPv4.
const maxDatagram = 65507

// ErrClosed is returned by operations on a closed endpoint or stream.
var ErrClosed = errors.New("sim: use of closed endpoint")

// binding is a port held by one of a node's endpoints until it is closed
// or the node crashes.
type binding struct {
	n      *node
	inc    uint64
	addr   world.Addr
	closed bool
}

// bind claims port in ports for the node's current incarnation.
func bind[T any](n *node, ports map[uint16]T, port uint16, what string) (binding, error) {
	addr := world.Addr{Node: n.id, Port: port}
	if _, busy := ports[port]; busy {
		return binding{}, fmt.Errorf("%s %v: port in use", what, addr)
	}
	return binding{n: n, inc: n.inc, addr: addr}, nil
}

// release closes the binding and frees its port, if the incarnation that
// claimed it is still the node's (a crash freed them all).
func release[T any](b *binding, ports func() map[uint16]T) error {
	if b.closed {
		return ErrClosed
	}
	b.closed = true
	if b.n.alive(b.inc) {
		delete(ports(), b.addr.Port)
	}
	return nil
}

type packetConn struct {
	binding
	h world.PacketHandler
}

func (n *node) ListenPacket(port uint16, h world.PacketHandler) (world.PacketConn, error) {
	b, err := bind(n, n.conns, port, "listen packet")
	if err != nil {
		return nil, err
	}
	c := &packetConn{binding: b, h: h}
	n.conns[port] = c
	return c, nil
}

func (c *packetConn) LocalAddr() world.Addr { return c.addr }

func (c *packetConn) Close() error {
	return release(&c.binding, func() map[uint16]*packetConn { return c.n.conns })
}

func (c *packetConn) Send(to world.Addr, data []byte) (world.Time, error) {
	n := c.n
	if c.closed || !n.alive(c.inc) {
		return 0, ErrClosed
	}
	if len(data) > maxDatagram {
		return 0, fmt.Errorf("send to %v: datagram of %d bytes exceeds %d", to, len(data), maxDatagram)
	}
	if to.Node < 0 || int(to.Node) >= len(n.s.nodes) {
		return 0, fmt.Errorf("send to %v: no such node", to)
	}
	tx := n.now()
	s := n.s
	ports := eventlog.Ports(c.addr.Port, to.Port)
	s.record(eventlog.Record{Node: int32(n.id), Kind: eventlog.Send, Peer: int32(to.Node), A: ports, B: int64(len(data)), C: int64(tx)})
	drop := func(why int64) {
		s.drop(n.id, to.Node, why, len(data))
	}
	if why := s.cut(n.id, to.Node); why != 0 {
		drop(why)
		return tx, nil
	}
	r := s.link(n.id, to.Node).Send(s.k.Now(), len(data)+udpOverhead)
	// One drop record per copy lost, including the lost copy of a
	// duplicated packet whose other copy goes through.
	for range r.Lost {
		drop(eventlog.ReasonLoss)
	}
	for range r.QueueDropped {
		drop(eventlog.ReasonQueue)
	}
	if r.N == 0 {
		return tx, nil
	}
	for i := range r.N {
		// Each copy gets its own buffer from the pool: the sender may
		// reuse data as soon as Send returns.
		d := s.newDelivery()
		d.from, d.to, d.corrupt = c.addr, to, r.Out[i].Corrupt
		d.data = append(d.data[:0], data...)
		// The link model never releases a packet before it was sent.
		_ = s.k.At(r.Out[i].At, d, 0)
	}
	return tx, nil
}

// delivery is a datagram arriving at its destination. Deliveries, and the
// payload buffers they own, are pooled (Sim.newDelivery): one is the
// kernel's from Send until its Fire is done with it (delivered or dropped,
// not deferred), then goes back to the pool; world.Packet.Data is valid only
// for the callback, so no receiver keeps the buffer.
type delivery struct {
	s       *Sim
	from    world.Addr
	to      world.Addr
	data    []byte
	corrupt bool
	inc     uint64
	rx      world.Time
}

// newDelivery takes a delivery from the pool, or makes one.
func (s *Sim) newDelivery() *delivery {
	if n := len(s.free); n > 0 {
		d := s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		return d
	}
	return &delivery{s: s}
}

// Fire delivers or drops the datagram, then returns d to the pool unless
// it was deferred (a slow node), in which case it fires again.
func (d *delivery) Fire(arg uint64) {
	if d.fire(arg) {
		s := d.s
		*d = delivery{s: s, data: d.data[:0]}
		s.free = append(s.free, d)
	}
}

// fire is Fire's work; it reports whether d is done with (false while it
// waits again on a slow node).
func (d *delivery) fire(arg uint64) bool {
	s := d.s
	n := s.nodes[d.to.Node]
	drop := func(why int64) bool {
		s.drop(d.from.Node, d.to.Node, why, len(d.data))
		return true
	}
	if arg == 0 {
		// Arrival: checked and timestamped now, as the kernel would, even
		// if a slow node runs the callback later.
		switch {
		case !n.up:
			return drop(eventlog.ReasonNodeDown)
		case d.corrupt:
			return drop(eventlog.ReasonChecksum)
		}
		d.inc = n.inc
		d.rx = n.now()
	}
	if !n.alive(d.inc) {
		return drop(eventlog.ReasonNodeDown)
	}
	if n.deferIfSlow(d, arg|1) {
		return false
	}
	c, ok := n.conns[d.to.Port]
	if !ok {
		return drop(eventlog.ReasonNoSocket)
	}
	s.record(eventlog.Record{Node: int32(d.to.Node), Kind: eventlog.Recv, Peer: int32(d.from.Node), A: eventlog.Ports(d.from.Port, d.to.Port), B: int64(len(d.data)), C: int64(d.rx)})
	c.h(world.Packet{From: d.from, To: d.to, Data: d.data, RxTime: d.rx})
	return true
}

// drop records a datagram from→to that will not be delivered, and why.
func (s *Sim) drop(from, to world.NodeID, why int64, size int) {
	s.drops[why]++
	s.record(eventlog.Record{Node: int32(from), Kind: eventlog.Drop, Peer: int32(to), A: why, B: int64(size)})
}

// Drops returns how many datagrams were dropped so far, by reason (the
// names of the event log's "why" field).
func (s *Sim) Drops() map[string]uint64 {
	out := make(map[string]uint64)
	for why, n := range s.drops {
		if n > 0 {
			out[eventlog.ReasonName(int64(why))] = n
		}
	}
	return out
}
