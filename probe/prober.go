// Package probe sends and answers the four-timestamp probes of the sync
// protocol. A [Prober] probes each of a node's out-neighbours with
// back-to-back pairs every cadence while a window is open, answers every
// request it receives, and hands over each edge's probes when the window
// closes. It is protocol code: it acts only through its [world.Env], driven
// one callback at a time by its owner.
//
// # t3, interleaved
//
// A reply cannot carry its own transmit timestamp. It carries t3 as the
// responder's clock read just before sending it (user space: the send path
// is in it), and, as chrony's interleaved mode does, the transmit timestamp
// [world.PacketConn.Send] returned for the responder's previous reply to the
// same requester (the kernel's on the real backend), named by the window,
// pair and slot it answered and marked kernel or user-space fallback
// ([world.SourcedSender]). The simulator models no send path, so there the
// two are one reading: the carried timestamp is the earlier reply's t3.
//
// The requester puts that timestamp in place of the provisional t3 of that
// earlier probe. A probe keeps its user-space t3, recorded as
// [estimate.T3User], when no later reply brought its transmit timestamp
// before its window closed: the last answered probe of each edge and window
// (its timestamp comes with the next window's first reply, too late: Close
// hands the window over at once, it does not wait), a probe whose follow-up
// reply was lost, and a request answered twice (a duplicate: which reply a
// timestamp belongs to cannot be told, so the responder carries neither's,
// and a requester that got both uses neither). [Stats] counts the t3
// sources of the probes handed over.
//
// # Hostile datagrams
//
// Anything can arrive on the probe port. A datagram that does not parse, or
// comes from a node id out of range, is dropped. A reply is taken only from
// the address its request went to (the probed node's [Port]), only with
// timestamps a probe can have ([MaxTimestamp], [RoundTripTolerance],
// [MaxRoundTrip]: a reply that fails leaves its probe open for the genuine
// one), and only for a probe of the open window; its advert only with
// finite values within [MaxAdvertOffset] and [MaxAdvertDrift]. Each drop
// is counted in [Stats]; none is fatal.
package probe

import (
	"fmt"
	"math"
	"slices"
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
	// Late counts replies for a window that is not open (their adverts
	// are dropped with them), Duplicate second replies to one probe, and
	// Malformed datagrams that do not parse and replies to probes never
	// sent.
	Late, Duplicate, Malformed int
	// T3Kernel and T3User count the answered probes Close handed over by
	// the source of their t3 (estimate.T3Source): the reply's transmit
	// timestamp (the kernel's), carried back by a later reply, or the
	// responder's user-space clock reading (or the user-space fallback of
	// a transmit timestamp that came too late).
	T3Kernel, T3User int
	// T3Late counts transmit timestamps that came back after their
	// probe's window had closed (in a reply of the next window, as the
	// last probe's of each window and edge does): that probe was handed
	// over with its user-space t3.
	T3Late int
	// PairsMissed counts the pair slots a late tick gave up (where timers
	// may fire late: world.AbsoluteTimers), rather than sending them in a
	// burst.
	PairsMissed int
	// Spoofed counts replies dropped because they did not come from the
	// address a request was sent to: another port than [Port], or a node
	// this prober does not probe. Nothing of such a reply is used (its
	// timestamps, its carried transmit timestamp, its advert).
	Spoofed int
	// Implausible counts replies dropped because their timestamps cannot
	// be a probe's (see [MaxTimestamp], [RoundTripTolerance],
	// [MaxRoundTrip]): t2 or t3 out of range, t3 before t2, or a round
	// trip below −RoundTripTolerance or above MaxRoundTrip. Such a reply
	// does not use up its probe's slot: the genuine reply, arriving later,
	// is still taken. It also counts carried transmit timestamps that
	// would make their probe's round trip implausible: that probe keeps
	// its user-space t3.
	Implausible int
	// AdvertsRejected counts valid adverts dropped for their values: an
	// offset or drift that is not finite or beyond [MaxAdvertOffset] or
	// [MaxAdvertDrift], or an anchor beyond [MaxTimestamp]. Adverts on
	// replies dropped whole are counted with them (Spoofed, Implausible,
	// Late, Malformed), not here: an advert is taken only from a reply
	// that answers a probe of the open window.
	AdvertsRejected int
	// BadNode counts datagrams dropped because the node they came from
	// is out of range (not 0 ≤ id < [world.Env.Nodes]).
	BadNode int
	// Replayed counts requests from a node's prober that this responder
	// had answered already (the same window, pair and slot): a datagram
	// duplicated on the way or replayed by someone who recorded it. It is
	// answered again, as before (a duplicated request's two replies make
	// the requester use neither's transmit timestamp); this only counts
	// it. The responder remembers, per requester, the latest window's
	// last [ReplayWindow] probe slots: an older request cannot be told
	// from a late one, and is not counted. Replies to a probe already
	// matched are counted Duplicate.
	Replayed int
}

// ReplayWindow is how many of a requester's latest probe slots (two a
// pair) in its latest window a responder remembers as answered, to count
// a request answered already (Stats.Replayed), as IPsec's and WireGuard's
// replay windows do.
const ReplayWindow = 64

// answeredSet is a responder's record of the requests of one requester it
// answered: the latest window, the highest slot index (pair·2 + slot)
// answered in it, and a bit for each of the ReplayWindow indices up to it.
type answeredSet struct {
	any    bool
	window uint64
	top    uint64
	bits   uint64 // bit k: index top−k answered
}

// seen records a request for window, pair and slot and reports whether it
// was answered already.
func (a *answeredSet) seen(window uint64, pair uint32, slot uint8) bool {
	i := uint64(pair)*2 + uint64(slot)
	switch {
	case !a.any || window > a.window:
		*a = answeredSet{any: true, window: window, top: i, bits: 1}
		return false
	case window < a.window:
		return false // an earlier window: not remembered
	case i > a.top:
		if d := i - a.top; d < ReplayWindow {
			a.bits = a.bits<<d | 1
		} else {
			a.bits = 1
		}
		a.top = i
		return false
	case a.top-i >= ReplayWindow:
		return false // too old to tell
	}
	bit := uint64(1) << (a.top - i)
	again := a.bits&bit != 0
	a.bits |= bit
	return again
}

// Bounds on what a reply may carry. A reply outside them is dropped and
// counted ([Stats]), never trusted: a stray or forged datagram must not
// become a probe or a peer's clock correction.
const (
	// MaxTimestamp bounds the magnitude of every clock reading a reply
	// carries (t2, t3, the previous reply's transmit timestamp, an
	// advert's anchor): 2^62 ns, about 146 years either side of the
	// clock's epoch. Readings beyond it are garbage, and would overflow
	// the differences the estimators take.
	MaxTimestamp = 1 << 62
	// RoundTripTolerance is how far below zero a probe's round trip
	// (t4−t1)−(t3−t2) may lie: the read noise of four clock readings and
	// the two clocks' rate difference over the probe. A round trip more
	// negative than that is no probe's (or one across a clock step, which
	// no estimator can use either).
	RoundTripTolerance = 10 * time.Microsecond
	// MaxRoundTrip bounds a probe's t4−t1 on the requester's clock: a
	// reply that took longer answers no probe worth keeping.
	MaxRoundTrip = time.Second
	// MaxAdvertOffset bounds the magnitude of an advert's offset
	// (local − global, ns): a week. Clocks further apart than that are
	// not this protocol's to reconcile.
	MaxAdvertOffset = 7 * 24 * time.Hour
	// MaxAdvertDrift bounds the magnitude of an advert's drift: 1 % (10,000
	// ppm), far beyond any oscillator's.
	MaxAdvertDrift = 0.01
)

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
	due           int64 // host time the last tick was due (world.AbsoluteTimers)
	edges         []edge
	hints         []int // per edge, the pairs of its last window (Close), to size the next
	expect        int   // the pairs an edge's first window is sized for (ExpectPairs)
	next          int
	timer         world.Timer
	advert        Advert
	// adverts holds, per peer (by its index in peers), the latest advert
	// it sent.
	adverts []Advert
	// requesters holds, per node whose prober sent this responder a
	// request, what the responder's last reply to it was and the requests
	// it answered. It holds only the nodes that asked (a node's in-
	// neighbours), not one entry per node of the world: per node of the
	// world in every prober, a 10,000-node run would hold 10⁸ of them.
	requesters map[world.NodeID]*requester
	stats      Stats
}

// requester is a responder's state for one requester.
type requester struct {
	last     lastReply   // the last reply to it and its transmit timestamp
	answered answeredSet // the requests answered (Replayed)
}

// lastReply is the responder's record of its last reply to one requester.
type lastReply struct {
	sent bool // a reply was sent: stamp's window, pair and slot name its probe
	// stamp is the reply's transmit timestamp, not valid when it must not
	// be carried (the reply answered a request the responder had already
	// answered: the requester could not tell which reply it belongs to).
	stamp txStamp
}

// edge is the state of one out-edge in the open window.
type edge struct {
	peer  world.NodeID
	pairs []pair // index is the pair number; read and written by get and set (pairs.go)
	// wide holds, by pair number, the pairs whose timestamps do not fit
	// pair's 32-bit differences.
	wide map[int]full
	// epochs are the t1s pairs' base t1s are held as differences from, by
	// first pair, in order (pairs.go): one a window unless it is longer
	// than 2 s.
	epochs []epoch
}

// New opens the probe endpoint on env and starts answering requests. It
// probes nothing until [Prober.Open].
func New(env world.Env, peers []world.NodeID, cadence time.Duration) (*Prober, error) {
	if cadence <= 0 {
		return nil, fmt.Errorf("probe: cadence %v must be > 0", cadence)
	}
	p := &Prober{env: env, peers: peers, cadence: cadence, adverts: make([]Advert, len(peers)), requesters: map[world.NodeID]*requester{}}
	c, err := env.ListenPacket(Port, p.receive)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	p.conn = c
	return p, nil
}

// Stats returns the counters so far.
func (p *Prober) Stats() Stats { return p.stats }

// Cadence returns the interval between two pairs on one edge.
func (p *Prober) Cadence() time.Duration { return p.cadence }

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

// PeerAdvert returns the latest advert received from peer (the zero
// Advert where none came, as from a node that is not a peer).
func (p *Prober) PeerAdvert(peer world.NodeID) Advert {
	if i := slices.Index(p.peers, peer); i >= 0 {
		return p.adverts[i]
	}
	return Advert{}
}

// ExpectPairs sizes the state of each edge's first window for about n
// pairs (the window's length over the cadence); later windows are sized
// by the edge's last. It changes nothing a window measures: without it a
// first window's state grows as it goes, by copying (up to a quarter more
// than it holds, and the copies left behind). n is capped at
// MaxExpectPairs: a window that long grows as it goes, rather than
// claiming its memory before it has probed.
func (p *Prober) ExpectPairs(n int) { p.expect = min(max(n, 0), MaxExpectPairs) }

// MaxExpectPairs caps [Prober.ExpectPairs]: 16,384 pairs, 640 KiB an edge.
const MaxExpectPairs = 1 << 14

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
	if len(p.hints) != len(p.peers) {
		p.hints = make([]int, len(p.peers))
	}
	for i, peer := range p.peers {
		// Room for as many pairs as the edge's last window had (the
		// first window: as ExpectPairs said), and a little more: the
		// slice does not grow, and leave its earlier arrays behind, as
		// the window goes.
		h := p.hints[i]
		if h == 0 {
			h = p.expect
		}
		p.edges = append(p.edges, edge{peer: peer, pairs: make([]pair, 0, h+h/16+4)})
	}
	p.next = 0
	p.due = p.start
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
		for k := range e.pairs {
			pr := e.get(k)
			for s := range 2 {
				if pr.n[s] != 4 {
					if pr.n[s] == 1 {
						b.Lost++
					}
					continue
				}
				t, src := pr.t[s], estimate.T3User
				if pr.src[s] != 0 && !pr.ambiguous[s] {
					if plausibleProbe(t[0], t[1], pr.tx[s], t[3]) {
						t[2], src = pr.tx[s], pr.src[s]
					} else {
						p.stats.Implausible++
					}
				}
				if src == estimate.T3Kernel {
					p.stats.T3Kernel++
				} else {
					p.stats.T3User++
				}
				b.Probes = append(b.Probes, estimate.Probe{T1: t[0], T2: t[1], T3: t[2], T4: t[3], Pair: uint32(k), Slot: uint8(s), T3Source: src})
			}
		}
		out[i] = b
		// The blocks hold what the window measured: its pairs go now,
		// not at the next Open (a node's last window would keep them to
		// the end of the run).
		p.hints[i] = len(e.pairs)
		p.edges[i].pairs, p.edges[i].wide, p.edges[i].epochs = nil, nil, nil
	}
	return out
}

// Release lets go of the open window's state once the prober's run is
// over and its world stopped (no callback of it runs again): it probes
// nothing afterwards, but Stats still answers. A large simulation's
// probers hold most of its memory there.
func (p *Prober) Release() {
	p.open = false
	p.edges = nil
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
	var pr full
	for s := range 2 {
		putHeader(p.buf[:], header{kind: kindRequest, window: p.window, pair: uint32(k), slot: uint8(s)})
		tx, err := p.conn.Send(to, p.buf[:])
		if err != nil {
			continue
		}
		pr.t[s][0] = int64(tx)
		pr.n[s] = 1
	}
	e.set(k, pr)
	p.stats.PairsSent++
	p.schedule()
}

// schedule arms the next tick, a cadence's share after the last one was
// due. Where timers may fire late (world.AbsoluteTimers: the real backend),
// it is armed at that due time on the host clock, so that lateness does
// not add up over a window; a tick more than a step behind gives up the
// slots it missed (Stats.PairsMissed) rather than sending them in a burst.
func (p *Prober) schedule() {
	step := p.cadence / time.Duration(len(p.edges))
	at, ok := p.env.(world.AbsoluteTimers)
	if !ok {
		p.timer = p.env.AfterFunc(step, p.tick)
		return
	}
	p.due += int64(step)
	if now := int64(p.env.Host().Now()); now-p.due > int64(step) {
		missed := (now - p.due) / int64(step)
		p.stats.PairsMissed += int(missed)
		p.due += missed * int64(step)
	}
	p.timer = at.AfterFuncAt(world.Time(p.due), p.tick)
}

// receive handles one datagram on the probe port. Datagrams that do not
// parse, or that come from a node out of range, are dropped and counted.
func (p *Prober) receive(pkt world.Packet) {
	r, err := parse(pkt.Data)
	if err != nil {
		p.stats.Malformed++
		return
	}
	if from := pkt.From.Node; from < 0 || int(from) >= p.env.Nodes() {
		p.stats.BadNode++
		return
	}
	switch r.kind {
	case kindRequest:
		p.answer(pkt, r)
	case kindReply:
		p.complete(pkt, r)
	}
}

// answer replies with t2, the request's receive timestamp, t3, the clock
// read just before the reply is sent, and the transmit timestamp of the
// previous reply to the same requester; it keeps this reply's transmit
// timestamp for the next.
func (p *Prober) answer(pkt world.Packet, r reply) {
	r.kind = kindReply
	r.t2 = int64(pkt.RxTime)
	r.advert = p.advert
	// Only a prober's requests (from the probe port) take part in the
	// interleaved transmit timestamps: a request from another port must
	// not take, or be given, the timestamp the node's prober is owed.
	var req *requester
	var last *lastReply
	if from := pkt.From.Node; pkt.From.Port == Port && from >= 0 && int(from) < p.env.Nodes() {
		if req = p.requesters[from]; req == nil {
			req = &requester{}
			p.requesters[from] = req
		}
		last = &req.last
	}
	again := false // the request was answered already: a duplicate
	if last != nil && last.sent {
		s := last.stamp
		again = s.window == r.window && s.pair == r.pair && s.slot == r.slot
		if !again {
			r.prev = s
		}
	}
	r.t3 = int64(p.env.Host().Now())
	putReply(p.buf[:], r)
	tx, src, err := p.sendReply(pkt.From, r.t3)
	if err != nil {
		return
	}
	p.stats.ProbesAnswered++
	if last == nil {
		return
	}
	if req.answered.seen(r.window, r.pair, r.slot) {
		p.stats.Replayed++
	}
	if again {
		last.stamp.valid = false
		return
	}
	*last = lastReply{sent: true, stamp: txStamp{valid: true, kernel: src == world.TxKernel,
		window: r.window, pair: r.pair, slot: r.slot, t3: tx}}
}

// sendReply sends the reply in p.buf, whose t3 was read just before, and
// returns its transmit timestamp and where that came from. A PacketConn
// that is no [world.SourcedSender] has no send path (the simulator's): the
// datagram leaves the instant Send is called, so t3 is its transmit time.
// Send's own timestamp is another reading at that instant, which differs
// from t3 only by read noise and by the clock model's monotonic clamp,
// which biases each further reading at one instant upwards (by about 0.3
// of the read noise's σ for this third one, after t2 and t3).
func (p *Prober) sendReply(to world.Addr, t3 int64) (int64, world.TxSource, error) {
	if s, ok := p.conn.(world.SourcedSender); ok {
		tx, src, err := s.SendSourced(to, p.buf[:])
		return int64(tx), src, err
	}
	_, err := p.conn.Send(to, p.buf[:])
	return t3, world.TxKernel, err
}

// complete takes a reply: from the address its request was sent to (else
// Spoofed), with plausible timestamps (else Implausible), for a probe of the
// open window (else Late, or Malformed for a probe never sent). Only such a
// reply completes its probe and brings its advert; a reply of a closed
// window still brings the transmit timestamp it carries. receive has
// range-checked the sender.
func (p *Prober) complete(pkt world.Packet, r reply) {
	p.stats.RepliesReceived++
	from := pkt.From.Node
	peer := slices.Index(p.peers, from)
	if pkt.From.Port != Port || peer < 0 {
		p.stats.Spoofed++
		return
	}
	if !plausibleReply(r) {
		p.stats.Implausible++
		return
	}
	if !p.open || r.window != p.window {
		if r.prev.valid {
			p.stamp(from, r.prev)
		}
		p.stats.Late++
		return
	}
	e := p.edgeTo(from)
	if e == nil || int(r.pair) >= len(e.pairs) {
		p.stats.Malformed++
		return
	}
	pr := e.get(int(r.pair))
	if pr.n[r.slot] != 1 && pr.n[r.slot] != 4 {
		p.stats.Malformed++ // the request was never sent
		return
	}
	rx := int64(pkt.RxTime)
	if !plausibleProbe(pr.t[r.slot][0], r.t2, r.t3, rx) {
		// Dropped before it takes the slot: the genuine reply may follow.
		p.stats.Implausible++
		return
	}
	if r.prev.valid {
		p.stamp(from, r.prev)
		pr = e.get(int(r.pair)) // the stamp may be this pair's other probe's
	}
	defer func() { e.set(int(r.pair), pr) }()
	if pr.n[r.slot] == 1 {
		pr.t[r.slot][1], pr.t[r.slot][2], pr.t[r.slot][3] = r.t2, r.t3, rx
		pr.n[r.slot] = 4
	} else {
		p.stats.Duplicate++
		if r.t2 != pr.t[r.slot][1] || r.t3 != pr.t[r.slot][2] {
			// Another reply, to another copy of the request, not the
			// same reply duplicated on the way back.
			pr.ambiguous[r.slot] = true
		}
	}
	if r.advert.Valid {
		if !plausibleAdvert(r.advert) {
			p.stats.AdvertsRejected++
			return
		}
		p.adverts[peer] = r.advert
	}
}

// plausibleReply reports whether a reply's own timestamps can be a
// responder's clock readings: within ±MaxTimestamp, t3 not before t2,
// and a carried transmit timestamp within ±MaxTimestamp.
func plausibleReply(r reply) bool {
	if !inRange(r.t2) || !inRange(r.t3) || r.t3 < r.t2 {
		return false
	}
	return !r.prev.valid || inRange(r.prev.t3)
}

// plausibleProbe reports whether t1..t4 can be one probe: t3 not before
// t2, t4−t1 at most MaxRoundTrip, and the round trip (t4−t1)−(t3−t2) at
// least −RoundTripTolerance. Every reading must be within ±MaxTimestamp,
// so the differences do not overflow.
func plausibleProbe(t1, t2, t3, t4 int64) bool {
	for _, t := range [...]int64{t1, t2, t3, t4} {
		if !inRange(t) {
			return false
		}
	}
	if t3 < t2 {
		return false
	}
	out := t4 - t1
	if out > int64(MaxRoundTrip) {
		return false
	}
	return out-(t3-t2) >= -int64(RoundTripTolerance)
}

// plausibleAdvert reports whether an advert's values are finite and within
// MaxAdvertOffset, MaxAdvertDrift and MaxTimestamp.
func plausibleAdvert(a Advert) bool {
	return !math.IsNaN(a.Offset) && math.Abs(a.Offset) <= float64(MaxAdvertOffset) &&
		!math.IsNaN(a.Drift) && math.Abs(a.Drift) <= MaxAdvertDrift &&
		inRange(a.Anchor)
}

// inRange reports whether t is within ±MaxTimestamp.
func inRange(t int64) bool { return -MaxTimestamp <= t && t <= MaxTimestamp }

// stamp records the transmit timestamp of an earlier reply from peer, which
// a later reply carried, as the t3 of the probe that reply answered.
func (p *Prober) stamp(peer world.NodeID, s txStamp) {
	if !p.open || s.window != p.window {
		p.stats.T3Late++
		return
	}
	e := p.edgeTo(peer)
	if e == nil || int(s.pair) >= len(e.pairs) {
		return // no such probe was sent (this prober was restarted)
	}
	pr := e.get(int(s.pair))
	if pr.n[s.slot] == 0 {
		return
	}
	pr.tx[s.slot], pr.src[s.slot] = s.t3, estimate.T3User
	if s.kernel {
		pr.src[s.slot] = estimate.T3Kernel
	}
	e.set(int(s.pair), pr)
}

func (p *Prober) edgeTo(peer world.NodeID) *edge {
	for i := range p.edges {
		if p.edges[i].peer == peer {
			return &p.edges[i]
		}
	}
	return nil
}
