package main

import (
	"maps"
	"slices"
	"time"

	"github.com/chronosync/chronosync/nodestatus"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// The states of a peer in `chronosync status`, worst last: a peer's state
// is the worse of what this node's own last window says of its edge to
// the peer and what the master's last round says of the peer.
const (
	peerOK           = "ok"           // answered, its edge fitted, in the round
	peerInsufficient = "insufficient" // answered too few probes to fit its edge
	peerLost         = "lost"         // answered none of the last window's probes
	peerRejected     = "rejected"     // the master's solver rejected its edge with this node
	peerMissing      = "missing"      // the master: it did not report in the last round
)

// peerSeverity orders the states, the worst highest ("" lowest).
func peerSeverity(s string) int {
	switch s {
	case peerOK:
		return 1
	case peerInsufficient:
		return 2
	case peerLost:
		return 3
	case peerRejected:
		return 4
	case peerMissing:
		return 5
	}
	return 0
}

// worse is the worse of two peer states ("" counts as none).
func worse(a, b string) string {
	if peerSeverity(b) > peerSeverity(a) {
		return b
	}
	return a
}

// peerTable is a running node's view of its peers, the peers table of
// `chronosync status`. Every node fills it from its own windows
// (window: the edges it probes: probes sent and lost, totals over the
// node's life, the edge's σ, when the peer last answered); the master
// also from each round it gathered (round: who did not report, whose edge
// with it the solver rejected, and the edges of the nodes it does not
// probe, from their reports). It is not safe for concurrent use: the
// node's event loop calls it (nodeService holds its mutex).
type peerTable struct {
	self  int
	addrs []string // the cluster's addresses by rank ("" unknown)
	delta int64    // the node's host clock S minus CLOCK_REALTIME, ns
	peers map[int]*peerEntry
}

// peerEntry is one peer: what status shows, and where it came from.
type peerEntry struct {
	nodestatus.Peer
	probed      bool   // this node probes it (its windows have the edge)
	windowState string // from this node's last window
	roundState  string // from the master's last round
}

func newPeerTable(self int, addrs []string, delta int64) *peerTable {
	return &peerTable{self: self, addrs: addrs, delta: delta, peers: map[int]*peerEntry{}}
}

// entry is peer n's entry, made on first sight.
func (t *peerTable) entry(n int) *peerEntry {
	p, ok := t.peers[n]
	if !ok {
		p = &peerEntry{Peer: nodestatus.Peer{Node: n, State: "unknown"}}
		if n >= 0 && n < len(t.addrs) {
			p.Address = t.addrs[n]
		}
		t.peers[n] = p
	}
	return p
}

// window takes a window this node closed: for each edge it probes, the
// probes sent (two a pair) and lost, the edge's σ, and, when the peer
// answered, the window's end (S, made CLOCK_REALTIME) as when it was last
// heard.
func (t *peerTable) window(data *syncpb.NodeWindowData) {
	if data == nil {
		return
	}
	end := time.Unix(0, data.WindowEndNs-t.delta).UTC()
	for _, e := range data.Edges {
		if e == nil || int(e.SrcNodeId) != t.self || int(e.DstNodeId) == t.self {
			continue
		}
		p := t.entry(int(e.DstNodeId))
		p.probed = true
		t.takeEdge(p, e, end)
	}
}

// takeEdge adds edge e's window, which ended at end, to p.
func (t *peerTable) takeEdge(p *peerEntry, e *syncpb.EdgeAlphaBeta, end time.Time) {
	p.ProbesSent += 2 * uint64(max(e.SentPairs, 0))
	p.ProbesLost += uint64(max(e.LostCount, 0))
	switch {
	case e.PairsCount <= 0:
		p.windowState = peerLost
	case e.Insufficient:
		p.windowState = peerInsufficient
		p.LastHeard = end
	default:
		p.windowState = peerOK
		p.LastHeard = end
		p.EdgeSigmaNS = e.SigmaNs
	}
}

// round takes a round the master gathered, at now (CLOCK_REALTIME): every
// other node of the round gets an entry; one that did not report is
// missing, one whose edge with this node the solver rejected is rejected;
// a node this one does not probe gets the figures of its own edge to this
// node (or, with none, its report's first edge), heard at now.
func (t *peerTable) round(r *rounds.RoundReport, now time.Time) {
	if r == nil {
		return
	}
	for _, p := range t.peers {
		p.roundState = ""
	}
	for _, d := range r.Nodes {
		if d == nil || int(d.NodeId) == t.self {
			continue
		}
		p := t.entry(int(d.NodeId))
		p.roundState = peerOK
		if p.probed {
			continue
		}
		var edge *syncpb.EdgeAlphaBeta
		for _, e := range d.Edges {
			if e == nil {
				continue
			}
			if int(e.DstNodeId) == t.self {
				edge = e
				break
			}
			if edge == nil {
				edge = e
			}
		}
		if edge != nil {
			t.takeEdge(p, edge, now)
		} else {
			p.windowState, p.LastHeard = peerOK, now
		}
	}
	for _, e := range r.Edges {
		if !e.Rejected || (e.Src != t.self && e.Dst != t.self) {
			continue
		}
		n := e.Src
		if n == t.self {
			n = e.Dst
		}
		p := t.entry(n)
		p.roundState = worse(p.roundState, peerRejected)
	}
	for _, n := range r.Missing {
		if n != t.self {
			p := t.entry(n)
			p.roundState = peerMissing
		}
	}
}

// list is the peers by rank, each in the worse of its window's and its
// round's state.
func (t *peerTable) list() []nodestatus.Peer {
	out := make([]nodestatus.Peer, 0, len(t.peers))
	for _, n := range slices.Sorted(maps.Keys(t.peers)) {
		p := t.peers[n]
		peer := p.Peer
		if s := worse(p.windowState, p.roundState); s != "" {
			peer.State = s
		}
		out = append(out, peer)
	}
	return out
}
