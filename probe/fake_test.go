package probe

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

// testNet is a hand-driven world for probers: every node's host clock reads
// the shared clock plus the node's offset, timers and datagrams wait until
// the test runs or delivers them, and Send returns the clock plus txLag
// (the send path a user-space t3 misses) as its transmit timestamp.
type testNet struct {
	t        *testing.T
	clock    int64
	txLag    int64
	envs     []*testEnv
	inflight []datagram
}

// hop is how far the test advances the clock to deliver one datagram: a
// one-way delay, longer than a testNet's txLag as in any causal world (a
// datagram arrives after its transmit timestamp), so that the probes pass
// the prober's round-trip check.
const hop = 50_000

// datagram is one packet on its way.
type datagram struct {
	from, to world.Addr
	data     []byte
}

// kind returns the datagram's kind (kindRequest or kindReply).
func (d datagram) kind() byte { return d.data[3] }

// testEnv is one node of a testNet.
type testEnv struct {
	net     *testNet
	id      world.NodeID
	offset  int64
	peers   []world.NodeID
	timers  []*testTimer
	handler world.PacketHandler
	// sourced makes the node's endpoint a world.SourcedSender (as the
	// real backend's) whose transmit timestamps come from sources in turn
	// (TxKernel once they run out); otherwise it is a plain PacketConn (as
	// the simulator's).
	sourced bool
	sources []world.TxSource
}

// newTestNet returns a two-node net: node 0 probes node 1, node 1's clock is
// 1 ms ahead and its endpoint a world.SourcedSender.
func newTestNet(t *testing.T) *testNet {
	n := &testNet{t: t, clock: 1e9, txLag: 30_000}
	n.envs = []*testEnv{
		{net: n, id: 0, peers: []world.NodeID{1}},
		{net: n, id: 1, offset: 1e6, sourced: true},
	}
	return n
}

// prober starts a prober on node id.
func (n *testNet) prober(id world.NodeID) *Prober {
	n.t.Helper()
	e := n.envs[id]
	p, err := New(e, e.peers, time.Millisecond)
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

// fire runs node id's earliest pending timer.
func (n *testNet) fire(id world.NodeID) {
	n.t.Helper()
	e := n.envs[id]
	for i, tm := range e.timers {
		if !tm.stopped {
			e.timers = slices.Delete(e.timers, i, i+1)
			tm.stopped = true
			tm.f()
			return
		}
	}
	n.t.Fatalf("node %d has no pending timer", id)
}

// deliver hands the datagram at index i of the in-flight ones to its
// destination, stamped with the receiver's clock now, and removes it.
func (n *testNet) deliver(i int) {
	d := n.inflight[i]
	n.inflight = slices.Delete(n.inflight, i, i+1)
	n.deliverCopy(d)
}

// deliverCopy hands d to its destination without removing anything.
func (n *testNet) deliverCopy(d datagram) {
	e := n.envs[d.to.Node]
	e.handler(world.Packet{From: d.from, To: d.to, Data: d.data, RxTime: world.Time(n.clock + e.offset)})
}

// drop removes the datagram at index i of the in-flight ones.
func (n *testNet) drop(i int) { n.inflight = slices.Delete(n.inflight, i, i+1) }

// flush delivers every datagram in flight, and those their delivery sends,
// in order, advancing the clock a hop before each.
func (n *testNet) flush() {
	for len(n.inflight) > 0 {
		n.clock += hop
		n.deliver(0)
	}
}

func (e *testEnv) Node() world.NodeID     { return e.id }
func (e *testEnv) Nodes() int             { return len(e.net.envs) }
func (e *testEnv) Peers() []world.NodeID  { return e.peers }
func (e *testEnv) Host() world.Clock      { return testClock{e} }
func (e *testEnv) Tracer() world.Clock    { return testClock{e} }
func (e *testEnv) Rand() *rand.Rand       { return rand.New(rand.NewPCG(1, 2)) }
func (e *testEnv) Logger() *slog.Logger   { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func (e *testEnv) now() world.Time        { return world.Time(e.net.clock + e.offset) }
func (c testClock) Now() world.Time       { return c.e.now() }
func (t *testTimer) Stop() bool           { s := t.stopped; t.stopped = true; return !s }
func (c *testConn) LocalAddr() world.Addr { return world.Addr{Node: c.e.id, Port: Port} }
func (c *testConn) Close() error          { return nil }

func (e *testEnv) AfterFunc(_ time.Duration, f func()) world.Timer {
	tm := &testTimer{f: f}
	e.timers = append(e.timers, tm)
	return tm
}

func (e *testEnv) ListenPacket(port uint16, h world.PacketHandler) (world.PacketConn, error) {
	e.handler = h
	c := &testConn{e: e}
	if e.sourced {
		return &sourcedConn{c}, nil
	}
	return c, nil
}

func (e *testEnv) Listen(uint16, world.StreamHandler) (world.Listener, error) {
	panic("probe does not listen")
}

func (e *testEnv) Dial(world.Addr, world.StreamHandler) (world.Stream, error) {
	panic("probe does not dial")
}

type testClock struct{ e *testEnv }

type testTimer struct {
	f       func()
	stopped bool
}

// testConn is a testEnv's plain endpoint.
type testConn struct{ e *testEnv }

func (c *testConn) Send(to world.Addr, data []byte) (world.Time, error) {
	tx, _, err := c.send(to, data)
	return tx, err
}

func (c *testConn) send(to world.Addr, data []byte) (world.Time, world.TxSource, error) {
	e := c.e
	e.net.inflight = append(e.net.inflight, datagram{from: c.LocalAddr(), to: to, data: slices.Clone(data)})
	src := world.TxKernel
	if len(e.sources) > 0 {
		src, e.sources = e.sources[0], e.sources[1:]
	}
	if src == world.TxUser {
		return e.now(), src, nil // the fallback: a reading before sendmsg
	}
	return e.now() + world.Time(e.net.txLag), src, nil
}

// sourcedConn is a testConn that says where its timestamps came from.
type sourcedConn struct{ *testConn }

func (c *sourcedConn) SendSourced(to world.Addr, data []byte) (world.Time, world.TxSource, error) {
	return c.send(to, data)
}
