// Package netem models one direction of a network link with the
// parameters and semantics of Linux's netem qdisc (tc-netem(8),
// net/sched/sch_netem.c): delay with jitter, correlation and a
// distribution table; random, 4-state and Gilbert-Elliott loss;
// duplication; corruption; reordering; a rate limit with packet and cell
// overheads; a queue limit. It adds cross traffic, background packets that
// share the rate-limited queue so that queueing delay emerges from load.
//
// The model is pure and clock-agnostic. Time is int64 nanoseconds given by
// the caller, so the same Link serves a discrete-event simulator in virtual
// time and a userspace shaper in real time; all randomness comes from the
// *rand.Rand given to New; nothing starts goroutines or reads a clock.
//
//	l, err := netem.New(params, rng)
//	r := l.Send(now, size) // r.Out[:r.N]: release times; r.Drop: why not
//
// # What netem does, and so what Link does
//
// Send follows netem_enqueue; the dequeue side is ideal: a packet leaves
// exactly at its time_to_send (netem's watchdog, without its timer slack).
//
//   - Probabilities are converted as tc does, to round(p * 0xffffffff),
//     and compared with 32-bit random numbers as the kernel does: an event
//     of probability p happens when "p >= rnd" (loss, duplicate, corrupt)
//     or "rnd <= p" (reorder).
//   - Correlation uses netem's get_crandom, x = (v*(2^32-c) + x'*c) >> 32
//     with v a fresh 32-bit number, x' the previous value and c the
//     correlation + 1 in fixed point: an AR(1) process with coefficient r
//     whose stationary distribution is not uniform. With correlation r > 0
//     a threshold event of probability p does NOT happen a fraction p of
//     the time: "loss random 25% 50%" loses 5/72 ≈ 6.9% of packets, like
//     netem. Delay correlation survives tabledist's "rnd % (2*jitter)"
//     only for jitters comparable to 2^31 ns; below that, and always with
//     a distribution table, successive delays are practically independent.
//   - Delay: tabledist(Delay, Jitter, correlation, table). Without a table
//     the delay is uniform on [Delay-Jitter, Delay+Jitter) (standard
//     deviation Jitter/√3). The tables are iproute2's normal, pareto and
//     paretonormal, recomputed bit for bit by its generators: their mean
//     and standard deviation, in units of Jitter, are -0.0008 and 1.0000
//     (normal), -0.033 and 0.820 (pareto: a = 3, tail clamped at 4),
//     -0.025 and 0.834 (paretonormal). With Jitter = 0 the delay is
//     exactly Delay and no random number is drawn. A negative delay sends
//     the packet at once.
//   - Order: packets leave in time_to_send order, ties in arrival order
//     (tfifo), so jitter reorders packets exactly as in netem.
//   - Rate: netem keeps the rate in whole bytes per second (BitsPerSecond/8)
//     and computes time_to_send from the last packet held (cross traffic
//     included): t = max(last, now + delay) + packet_time(size), where
//     packet_time charges size + PacketOverhead bytes, rounded up to
//     CellSize cells of CellSize + CellOverhead bytes when CellSize > 0.
//     A saturated link thus delivers back to back at exactly the rate.
//   - Limit counts every packet held, whether waiting for the rate or
//     merely delayed: a link with delay D and rate R needs Limit above the
//     packets in flight, as with netem.
//   - Loss is decided after duplication: a lost packet that was to be
//     duplicated still goes out once. The duplicate then passes through
//     netem again (its own loss, corruption, limit and delay; never
//     duplicated again) before the original is queued.
//   - Reordering: once ReorderGap-1 packets have been delayed normally
//     since the last reordered one (ReorderGap is 1 when only Reorder is
//     set, as tc sends), each packet is sent at once, ahead of the queue,
//     with probability Reorder (correlated); that restarts the count.
//     "reorder 100% gap 5" sends every 5th packet at once; "gap" without
//     "reorder" is refused, as tc does.
//
// # Cross traffic
//
// CrossTraffic adds Poisson or on/off background packets (see CrossKind)
// that take the rate-limited path with the base Delay (no jitter, loss,
// duplication, corruption or reordering), count against Limit, and are
// never delivered. They are generated lazily: each Send (or QueueLen) at
// now first enqueues, in order and as of its own arrival time, every
// background packet that arrives before now. Their randomness comes from a
// PCG seeded by two words New draws from the given rand.Rand, so they
// never shift the link's own draws. They start at the first time the Link
// is given (its first Send or QueueLen), with an empty queue; call
// QueueLen(t0) to start them at t0 and let the queue warm up.
//
// # Differences from the kernel
//
// ECN marking, slotting, GSO segmentation and the corruption of a packet's
// bytes are not modelled (Corrupt flags the delivery instead); netem is
// taken to be the root qdisc (a duplicate re-enters netem itself). Validate
// rejects values netem cannot hold, a Jitter above MaxJitter (which netem
// would silently cap), "gap" without "reorder" (which tc refuses), and
// fields set for a feature that is off. It accepts two combinations tc
// refuses but whose kernel meaning is plain: reordering without delay, and
// a distribution without jitter. Where netem's unsigned arithmetic would
// wrap (4-state sums, negative overheads larger than the packet), Link
// saturates instead.
package netem
