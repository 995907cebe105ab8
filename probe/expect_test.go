package probe

import (
	"testing"

	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// TestExpectPairs checks how a window's per-edge state is sized: the first
// window for the pairs ExpectPairs said (capped at MaxExpectPairs), the next
// for the pairs the edge's last window had, each with a sixteenth and 4 to
// spare; and that a window of as many pairs as expected does not outgrow it.
func TestExpectPairs(t *testing.T) {
	cases := []struct {
		name           string
		expect, fire   int
		first, second  int // capacities of the first and the second window
		grewFirstAfter bool
	}{
		{"none said", 0, 40, 4, 40 + 40/16 + 4, true},
		{"as many as sent", 40, 40, 40 + 40/16 + 4, 40 + 40/16 + 4, false},
		{"more sent than said", 10, 40, 10 + 4, 40 + 40/16 + 4, true},
		{"capped", 1 << 30, 3, MaxExpectPairs + MaxExpectPairs/16 + 4, 3 + 4, false},
		{"negative", -5, 3, 4, 3 + 4, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newTestNet(t)
			p := n.prober(0)
			n.prober(1)
			p.ExpectPairs(c.expect)
			p.Open(1, 1)
			if got := cap(p.edges[0].pairs); got != c.first {
				t.Fatalf("first window: room for %d pairs, want %d", got, c.first)
			}
			for range c.fire {
				n.fire(0)
			}
			if grew := cap(p.edges[0].pairs) != c.first; grew != c.grewFirstAfter {
				t.Fatalf("first window grew = %v after %d pairs (cap %d), want %v", grew, c.fire, cap(p.edges[0].pairs), c.grewFirstAfter)
			}
			p.Close()
			p.Open(1, 2)
			if got := cap(p.edges[0].pairs); got != c.second {
				t.Fatalf("second window: room for %d pairs, want %d", got, c.second)
			}
		})
	}
}

// TestResponderStateOnlyForAskers checks that a responder keeps state only
// for the nodes whose probers asked it, and a prober adverts only for its
// peers, not an entry per node of the world: in a 1,000-node world where
// nodes 0 and 2 probe node 1, node 1 holds two requesters, and each prober
// one advert a peer.
func TestResponderStateOnlyForAskers(t *testing.T) {
	n := &testNet{Net: worldtest.NewNet(1000), t: t}
	n.Node(0).PeerIDs = []world.NodeID{1}
	n.Node(2).PeerIDs = []world.NodeID{1, 5}
	a, b, c := n.prober(0), n.prober(1), n.prober(2)
	n.prober(5)
	a.Open(1, 1)
	c.Open(1, 1)
	for range 3 {
		n.fire(0)
		n.fire(2)
	}
	n.flush()
	if got := len(b.requesters); got != 2 {
		t.Errorf("node 1 holds %d requesters, want 2 (nodes 0 and 2)", got)
	}
	for _, r := range []world.NodeID{0, 2} {
		if b.requesters[r] == nil || !b.requesters[r].last.sent {
			t.Errorf("node 1 has no reply to node %d on record", r)
		}
	}
	if len(a.adverts) != 1 || len(c.adverts) != 2 || len(b.adverts) != 0 {
		t.Errorf("adverts held by nodes 0, 2, 1: %d, %d, %d; want 1, 2, 0 (one a peer)", len(a.adverts), len(c.adverts), len(b.adverts))
	}
	if got := a.PeerAdvert(7); got.Valid {
		t.Errorf("advert of a node that is no peer: %+v", got)
	}
}
