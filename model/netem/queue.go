package netem

// timeQueue holds the release times of the packets netem still holds: its
// tfifo (packets ordered by time_to_send) and, for cross traffic, packets
// that are never delivered. Only the times matter here: the deliveries
// themselves go back to the caller, who releases each at its time, and a
// caller that breaks ties by arrival order (as a simulator's event heap
// does) reproduces tfifo's order exactly, since tfifo puts a packet after
// those with an equal time_to_send.
//
// It is a binary min-heap, so that expiring the released packets is cheap,
// plus the latest time ever pushed: while any packet is held, the latest
// is held too (it expires last), and it is netem's "last packet in the
// queue" that rate limiting takes as its reference.
type timeQueue struct {
	h      []int64
	latest int64
}

// newTimeQueue returns a queue with room for n packets before it grows.
func newTimeQueue(n int) timeQueue {
	return timeQueue{h: make([]int64, 0, n)}
}

// len is the number of packets held.
func (q *timeQueue) len() int { return len(q.h) }

// last is the latest release time of the packets held; ok is false when
// none is.
func (q *timeQueue) last() (t int64, ok bool) {
	if len(q.h) == 0 {
		return 0, false
	}
	return q.latest, true
}

// push adds a packet released at t.
func (q *timeQueue) push(t int64) {
	if len(q.h) == 0 || t > q.latest {
		q.latest = t
	}
	q.h = append(q.h, t)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if q.h[p] <= t {
			break
		}
		q.h[i] = q.h[p]
		i = p
	}
	q.h[i] = t
}

// expire removes the packets released at or before now.
func (q *timeQueue) expire(now int64) {
	for len(q.h) > 0 && q.h[0] <= now {
		n := len(q.h) - 1
		x := q.h[n]
		q.h = q.h[:n]
		if n == 0 {
			break
		}
		// Sift x down from the root.
		i := 0
		for {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && q.h[c+1] < q.h[c] {
				c++
			}
			if x <= q.h[c] {
				break
			}
			q.h[i] = q.h[c]
			i = c
		}
		q.h[i] = x
	}
}
