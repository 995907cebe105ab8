package probe

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// testNet is the shared hand-driven world (worldtest.Net) set up for
// probers: every node's host clock reads the shared clock plus the node's
// offset, timers and datagrams wait until the test runs or delivers them,
// and Send returns the clock plus TxLag (the send path a user-space t3
// misses) as its transmit timestamp.
type testNet struct {
	*worldtest.Net
	t testing.TB // nil in a fuzz seed's set-up: failures panic
}

// hop is how far the test advances the clock to deliver one datagram: a
// one-way delay, longer than a testNet's TxLag as in any causal world (a
// datagram arrives after its transmit timestamp), so that the probes pass
// the prober's round-trip check.
const hop = 50_000

// newTestNet returns a two-node net: node 0 probes node 1, node 1's clock is
// 1 ms ahead and its endpoint a world.SourcedSender.
func newTestNet(t testing.TB) *testNet {
	n := &testNet{Net: worldtest.NewNet(2), t: t}
	n.TxLag = 30_000
	n.Node(0).PeerIDs = []world.NodeID{1}
	n.Node(1).Offset, n.Node(1).Sourced = 1e6, true
	return n
}

// fatalf fails the test, or panics without one.
func (n *testNet) fatalf(format string, args ...any) {
	if n.t == nil {
		panic(format)
	}
	n.t.Helper()
	n.t.Fatalf(format, args...)
}

// prober starts a prober on node id.
func (n *testNet) prober(id world.NodeID) *Prober {
	e := n.Node(id)
	p, err := New(e, e.PeerIDs, time.Millisecond)
	if err != nil {
		n.fatalf("node %d: %v", id, err)
	}
	return p
}

// fire runs node id's earliest pending timer.
func (n *testNet) fire(id world.NodeID) {
	if !n.Fire(id) {
		n.fatalf("node %d has no pending timer", id)
	}
}

// flush delivers every datagram in flight, and those their delivery sends,
// in order, advancing the clock a hop before each.
func (n *testNet) flush() { n.Flush(hop) }

// kindOf returns a datagram's kind (kindRequest or kindReply).
func kindOf(d worldtest.Datagram) byte { return d.Data[3] }
