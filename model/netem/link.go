package netem

import (
	"errors"
	"math/bits"
	"math/rand/v2"
)

// DefaultLimit is netem's default queue limit in packets.
const DefaultLimit = 1000

// DropReason says why a packet was not delivered.
type DropReason uint8

// Drop reasons.
const (
	DropNone  DropReason = iota // delivered (Result.N > 0)
	DropLoss                    // the loss model dropped it
	DropQueue                   // the queue held Limit packets ("limit")
)

func (d DropReason) String() string {
	switch d {
	case DropNone:
		return "none"
	case DropLoss:
		return "loss"
	case DropQueue:
		return "queue-limit"
	}
	return "DropReason(?)"
}

// Delivery is one copy of a packet leaving the link.
type Delivery struct {
	At        int64 // release time, ns, >= the time it was sent
	Corrupt   bool  // netem flipped a bit in it
	Reordered bool  // netem's reorder path sent it at once, ahead of the queue
}

// Result is what happens to one packet offered to the link.
type Result struct {
	N    int         // deliveries: 0 (dropped), 1, or 2 (duplicated)
	Out  [2]Delivery // Out[:N]; Out[0] is the original, Out[1] the duplicate
	Drop DropReason  // why, when N == 0; DropNone otherwise
	// Lost and QueueDropped count the copies dropped, also when one copy
	// of a duplicated packet still goes through: N + Lost + QueueDropped
	// is 2 for a duplicated packet and 1 otherwise.
	Lost, QueueDropped int
}

// Stats are a link's counters since New. They satisfy
// Sent + Duplicated == Delivered + Lost + QueueDropped.
type Stats struct {
	Sent         uint64 // packets offered (Send calls)
	Delivered    uint64 // copies delivered, duplicates included
	Lost         uint64 // copies the loss model dropped
	QueueDropped uint64 // copies dropped at the queue limit
	Duplicated   uint64 // packets netem decided to duplicate
	Corrupted    uint64 // copies delivered corrupt
	Reordered    uint64 // copies sent at once by the reorder path
	CrossSent    uint64 // cross-traffic packets offered
	CrossDropped uint64 // cross-traffic packets dropped at the queue limit
}

// Link is one direction of a link: netem's enqueue path, with an ideal
// dequeue that releases every packet at its time_to_send. It is not safe
// for concurrent use.
type Link struct {
	p     Params
	rng   *rand.Rand
	limit int

	latency int64
	jitter  int32
	table   []int16

	delayCor, dupCor, reorderCor, corruptCor crandom
	loss                                     lossGen
	dup, corrupt, reorder                    uint32
	gap, counter                             uint32

	rate         uint64 // bytes per second, 0 for none
	overhead     int64
	cellSize     int64
	cellOverhead int64

	q       timeQueue
	cross   crossGen
	started bool
	now     int64

	stats Stats
}

// New returns a link with parameters p, drawing all its randomness from
// rng, or the error of p.Validate. In this order it draws two words from
// rng that seed a PCG for cross traffic (always, so that turning cross
// traffic on or off never shifts the link's other draws), then the initial
// states of netem's five correlated generators (delay, loss, duplicate,
// reorder, corrupt). The link keeps rng and draws from it on each Send.
func New(p Params, rng *rand.Rand) (*Link, error) {
	if rng == nil {
		return nil, errors.New("netem: New: nil *rand.Rand")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s1, s2 := rng.Uint64(), rng.Uint64()
	l := &Link{
		p:       p,
		rng:     rng,
		limit:   p.Limit,
		latency: int64(p.Delay),
		jitter:  int32(p.Jitter),
		table:   distTable(p.Distribution),

		dup:     fraction(p.Duplicate),
		corrupt: fraction(p.Corrupt),
		reorder: fraction(p.Reorder),
		gap:     uint32(p.ReorderGap),

		rate:         p.Rate.BitsPerSecond / 8,
		overhead:     int64(p.Rate.PacketOverhead),
		cellSize:     int64(p.Rate.CellSize),
		cellOverhead: int64(p.Rate.CellOverhead),
	}
	l.delayCor = newCrandom(fraction(p.DelayCorr), rng)
	l.loss = newLossGen(p.Loss, newCrandom(fraction(p.Loss.Correlation), rng))
	l.dupCor = newCrandom(fraction(p.DuplicateCorr), rng)
	l.reorderCor = newCrandom(fraction(p.ReorderCorr), rng)
	l.corruptCor = newCrandom(fraction(p.CorruptCorr), rng)
	if l.limit == 0 {
		l.limit = DefaultLimit
	}
	if l.reorder != 0 && l.gap == 0 {
		l.gap = 1 // tc: "reorder" without "gap" sends gap 1
	}
	// Held packets never exceed limit+1 (a duplicate can pass the limit
	// check together with its original). The queue starts small and grows
	// on demand: most links hold a few packets at a time, and a scenario
	// of millions of links cannot afford a full queue each (8 KB at the
	// default limit).
	l.q = newTimeQueue(min(l.limit+2, 16))
	l.cross = newCrossGen(p.Cross, p.Rate.BitsPerSecond, rand.New(rand.NewPCG(s1, s2)))
	return l, nil
}

// Params returns the link's parameters, as given to New.
func (l *Link) Params() Params { return l.p }

// Stats returns the link's counters.
func (l *Link) Stats() Stats { return l.stats }

// QueueLen returns the number of packets, cross traffic included, that the
// link still holds at now: sent, not dropped, and released after now. It
// counts against Limit. Like Send, it first brings cross traffic up to now
// (see Send); calling it changes no later result, except that the first
// call to Send or QueueLen starts the cross traffic.
func (l *Link) QueueLen(now int64) int {
	l.advance(now)
	return l.q.len()
}

// advance clamps now to be non-decreasing, injects the cross-traffic
// arrivals before it, and expires the packets released by then.
func (l *Link) advance(now int64) int64 {
	if !l.started {
		l.started = true
		l.now = now
		if l.cross.kind != CrossNone {
			l.cross.begin(now)
		}
	}
	if now < l.now {
		now = l.now
	}
	l.now = now
	if l.cross.kind != CrossNone {
		for l.cross.next < now {
			l.crossArrival(l.cross.next)
			l.cross.advance()
		}
	}
	l.q.expire(now)
	return now
}

// crossArrival enqueues one cross-traffic packet arriving at t: it takes
// the rate-limited path of netem_enqueue with the base delay (no jitter, no
// loss, duplication, corruption or reordering, and no draw from the link's
// own random stream), and it is never delivered.
func (l *Link) crossArrival(t int64) {
	l.q.expire(t)
	l.stats.CrossSent++
	if l.q.len() >= l.limit {
		l.stats.CrossDropped++
		return
	}
	if at := l.releaseTime(t, l.latency, l.cross.size); at > t {
		l.q.push(at)
	}
}

// packetTime is netem's packet_time_ns: the serialisation time of size
// bytes with the packet overhead, cells and cell overhead. Where netem's
// unsigned arithmetic would wrap (a negative overhead larger than the
// packet), the length is taken as 0; absurd sizes saturate at 2^62 ns.
func (l *Link) packetTime(size int) int64 {
	n := max(int64(size)+l.overhead, 0)
	if l.cellSize > 0 {
		cells := n / l.cellSize
		if n > cells*l.cellSize {
			cells++
		}
		n = max(cells*(l.cellSize+l.cellOverhead), 0)
	}
	// Saturate far from int64 overflow, so that adding times stays safe.
	const maxTime = 1 << 62
	hi, lo := bits.Mul64(uint64(n), 1e9)
	if hi >= l.rate {
		return maxTime
	}
	q, _ := bits.Div64(hi, lo, l.rate)
	return int64(min(q, maxTime))
}

// releaseTime is time_to_send for a packet of size bytes enqueued at now
// with delay (tabledist's value), as netem_enqueue computes it: with a
// rate, the last packet held is the reference point, so
// delay = max(0, delay - (last - now)), now = last, and the packet's own
// serialisation time is added. A negative result is clamped to now: such
// a packet would be at the head of the tfifo and leave at once.
func (l *Link) releaseTime(now, delay int64, size int) int64 {
	base := now
	if l.rate != 0 {
		if last, ok := l.q.last(); ok {
			delay = max(delay-(last-now), 0)
			base = last
		}
		delay += l.packetTime(size)
	}
	return max(base+delay, now)
}

// Send offers one packet of size bytes (its on-wire length, which the rate
// limit charges; negative counts as 0) at time now, in ns; now must not
// decrease from one call to the next (a smaller now is taken as the
// previous one). It returns the packet's fate, following netem_enqueue
// step by step:
//
//  1. duplication is decided (correlated draw, only if Duplicate > 0);
//  2. the loss model is asked; a loss cancels one copy, and with no copy
//     left the packet is dropped (DropLoss);
//  3. corruption is decided (only if Corrupt > 0);
//  4. if the link already holds Limit packets, the packet (and its
//     duplicate) is dropped (DropQueue);
//  5. the duplicate, if any, goes through netem again as a packet that
//     cannot be duplicated: its own loss, corruption, limit check, and
//     step 6; it is delivered as Out[1];
//  6. the packet takes netem's reorder path if ReorderGap-1 packets
//     (ReorderGap is 1, tc's default, when only Reorder is set) have gone
//     the normal way since the last reordered one and the correlated
//     reorder draw is <= Reorder: it is released at now, ahead of
//     everything held, and the count restarts. Otherwise its delay is drawn (tabledist), the
//     rate limit applied (see releaseTime), and the count incremented.
//
// Before all this, cross traffic is brought up to now: every background
// packet arriving before now is enqueued, in order, as of its own arrival
// time. Send does not allocate.
func (l *Link) Send(now int64, size int) Result {
	now = l.advance(now)
	l.stats.Sent++
	size = max(size, 0)
	var res Result

	count := 1
	if l.dup != 0 && l.dup >= l.dupCor.next(l.rng) {
		count++
		l.stats.Duplicated++
	}
	if l.loss.lost(l.rng) {
		count--
		l.stats.Lost++
		res.Lost++
	}
	if count == 0 {
		res.Drop = DropLoss
		return res
	}
	corrupt := l.corrupted()
	if l.q.len() >= l.limit {
		l.stats.QueueDropped += uint64(count)
		res.QueueDropped += count
		res.Drop = DropQueue
		return res
	}
	var dup Delivery
	if count == 2 {
		if l.loss.lost(l.rng) {
			l.stats.Lost++
			res.Lost++
			count--
		} else if c := l.corrupted(); l.q.len() >= l.limit {
			l.stats.QueueDropped++
			res.QueueDropped++
			count--
		} else {
			dup = l.enqueue(now, size, c)
		}
	}
	res.Out[0] = l.enqueue(now, size, corrupt)
	res.Out[1] = dup
	res.N = count
	return res
}

// corrupted draws netem's corruption decision.
func (l *Link) corrupted() bool {
	return l.corrupt != 0 && l.corrupt >= l.corruptCor.next(l.rng)
}

// enqueue is the end of netem_enqueue: the reorder decision, then the
// delay and rate computation and the insertion into the tfifo.
func (l *Link) enqueue(now int64, size int, corrupt bool) Delivery {
	l.stats.Delivered++
	if corrupt {
		l.stats.Corrupted++
	}
	if l.gap == 0 || l.counter < l.gap-1 || l.reorder < l.reorderCor.next(l.rng) {
		delay := tabledist(l.latency, l.jitter, &l.delayCor, l.rng, l.table)
		at := l.releaseTime(now, delay, size)
		l.counter++
		if at > now {
			l.q.push(at)
		}
		return Delivery{At: at, Corrupt: corrupt}
	}
	l.counter = 0
	l.stats.Reordered++
	return Delivery{At: now, Corrupt: corrupt, Reordered: true}
}
