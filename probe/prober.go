// Package probe sends and answers the four-timestamp probes of the sync
// protocol. A [Prober] probes each of a node's out-neighbours with
// back-to-back pairs every cadence while a window is open, answers every
// request it receives, and hands over each edge's probes when the window
// closes. It is protocol code: it acts only through its [world.Env], driven
// one callback at a time by its owner.
package probe

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/world"
)

// DefaultCadence is the default interval between two pairs on one edge.
const DefaultCadence = 800 * time.Microsecond

// Stats are a prober's counters over its life.
type Stats struct {
	PairsSent, ProbesAnswered, RepliesReceived int
	Late, Duplicate, Malformed                 int
}

// Prober is one node's probe sender and responder.
type Prober struct {
	env     world.Env
	conn    world.PacketConn
	peers   []world.NodeID
	cadence time.Duration
	buf     [PacketSize]byte

	open          bool
	round, window uint64
	start         int64
	edges         []edge
	next          int
	timer         world.Timer
	advert        Advert
	adverts       []Advert
	stats         Stats
}

// edge is the state of one out-edge in the open window.
type edge struct {
	peer  world.NodeID
	pairs []pair // index is the pair number
}

type pair struct {
	t [2][4]int64 // [slot][t1..t4]
	n [2]uint8    // timestamps known per slot: 1 sent, 4 answered
}

// New opens the probe endpoint on env and starts answering requests. It
// probes nothing until [Prober.Open].
func New(env world.Env, peers []world.NodeID, cadence time.Duration) (*Prober, error) {
	if cadence <= 0 {
		return nil, fmt.Errorf("probe: cadence %v must be > 0", cadence)
	}
	p := &Prober{env: env, peers: peers, cadence: cadence, adverts: make([]Advert, env.Nodes())}
	c, err := env.ListenPacket(Port, p.receive)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	p.conn = c
	return p, nil
}

// Stats returns the counters so far.
func (p *Prober) Stats() Stats { return p.stats }

// Peers returns the out-neighbours the prober probes.
func (p *Prober) Peers() []world.NodeID { return p.peers }

// SetCadence changes the interval between pairs from the next pair on.
func (p *Prober) SetCadence(d time.Duration) {
	if d > 0 {
		p.cadence = d
	}
}

// SetAdvert sets the state piggybacked on every reply from now on.
func (p *Prober) SetAdvert(a Advert) { p.advert = a }

// PeerAdvert returns the latest advert received from peer.
func (p *Prober) PeerAdvert(peer world.NodeID) Advert { return p.adverts[peer] }

// Opened reports whether a window is open.
func (p *Prober) Opened() bool { return p.open }

// Open starts a window: from now on each out-neighbour gets a pair every
// cadence, the pairs of different neighbours spread evenly over it. It
// returns the window start on the node's clock.
func (p *Prober) Open(round, window uint64) int64 {
	if p.open {
		p.Close()
	}
	p.open, p.round, p.window = true, round, window
	p.start = int64(p.env.Host().Now())
	p.edges = p.edges[:0]
	for _, peer := range p.peers {
		p.edges = append(p.edges, edge{peer: peer})
	}
	p.next = 0
	if len(p.peers) > 0 {
		p.timer = p.env.AfterFunc(0, p.tick)
	}
	return p.start
}

// Close ends the window and returns one block per out-edge, in peer order:
// the answered probes in send order with the edge's loss counts. Replies
// that arrive later are counted as late and dropped.
func (p *Prober) Close() []probelog.Block {
	if !p.open {
		return nil
	}
	p.open = false
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	end := int64(p.env.Host().Now())
	out := make([]probelog.Block, len(p.edges))
	for i, e := range p.edges {
		b := probelog.Block{
			Src: int(p.env.Node()), Dst: int(e.peer),
			RoundID: p.round, WindowID: p.window,
			WindowStart: p.start, WindowEnd: end,
			SentPairs: len(e.pairs),
			Probes:    make([]estimate.Probe, 0, 2*len(e.pairs)),
		}
		for k, pr := range e.pairs {
			for s := range 2 {
				if pr.n[s] != 4 {
					if pr.n[s] == 1 {
						b.Lost++
					}
					continue
				}
				t := pr.t[s]
				b.Probes = append(b.Probes, estimate.Probe{T1: t[0], T2: t[1], T3: t[2], T4: t[3], Pair: uint32(k), Slot: uint8(s)})
			}
		}
		out[i] = b
	}
	return out
}

// tick sends one pair to the next neighbour and schedules the next tick.
func (p *Prober) tick() {
	if !p.open {
		return
	}
	e := &p.edges[p.next]
	p.next = (p.next + 1) % len(p.edges)
	k := len(e.pairs)
	e.pairs = append(e.pairs, pair{})
	to := world.Addr{Node: e.peer, Port: Port}
	for s := range 2 {
		putHeader(p.buf[:], header{kind: kindRequest, window: p.window, pair: uint32(k), slot: uint8(s)})
		tx, err := p.conn.Send(to, p.buf[:])
		if err != nil {
			continue
		}
		e.pairs[k].t[s][0] = int64(tx)
		e.pairs[k].n[s] = 1
	}
	p.stats.PairsSent++
	p.timer = p.env.AfterFunc(p.cadence/time.Duration(len(p.edges)), p.tick)
}

func (p *Prober) receive(pkt world.Packet) {
	r, err := parse(pkt.Data)
	if err != nil {
		p.stats.Malformed++
		return
	}
	switch r.kind {
	case kindRequest:
		p.answer(pkt, r)
	case kindReply:
		p.complete(pkt, r)
	}
}

// answer replies with t2, the request's receive timestamp, and t3, the
// clock read just before the reply is sent.
func (p *Prober) answer(pkt world.Packet, r reply) {
	r.kind = kindReply
	r.t2 = int64(pkt.RxTime)
	r.advert = p.advert
	r.t3 = int64(p.env.Host().Now())
	putReply(p.buf[:], r)
	if _, err := p.conn.Send(pkt.From, p.buf[:]); err == nil {
		p.stats.ProbesAnswered++
	}
}

func (p *Prober) complete(pkt world.Packet, r reply) {
	p.stats.RepliesReceived++
	from := pkt.From.Node
	if int(from) < len(p.adverts) && r.advert.Valid {
		p.adverts[from] = r.advert
	}
	if !p.open || r.window != p.window {
		p.stats.Late++
		return
	}
	e := p.edgeTo(from)
	if e == nil || int(r.pair) >= len(e.pairs) {
		p.stats.Malformed++
		return
	}
	pr := &e.pairs[r.pair]
	switch pr.n[r.slot] {
	case 1:
		pr.t[r.slot][1], pr.t[r.slot][2], pr.t[r.slot][3] = r.t2, r.t3, int64(pkt.RxTime)
		pr.n[r.slot] = 4
	case 4:
		p.stats.Duplicate++
	default:
		p.stats.Malformed++
	}
}

func (p *Prober) edgeTo(peer world.NodeID) *edge {
	for i := range p.edges {
		if p.edges[i].peer == peer {
			return &p.edges[i]
		}
	}
	return nil
}
