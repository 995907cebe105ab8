package real

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// Lateness summarises how late the nodes' timers fired: the true time a
// timer's callback ran minus the true time it was due. On an idle machine
// it is the runtime's timer and the loop's wakeup, some tens of µs; a busy
// machine adds whatever it keeps the loops from a CPU.
type Lateness struct {
	Samples uint64        `json:"samples"`
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	Max     time.Duration `json:"max_ns"`
}

// lateBuckets is the histogram's resolution: 8 buckets per power of two of
// ns, so a quantile is within 9 % of the true one, from 1 ns to 2^40 ns
// (18 minutes) in 320 counters.
const (
	latePerOctave = 8
	lateBuckets   = 40 * latePerOctave
)

// lateHist is a log-bucket histogram of lateness in ns, safe for
// concurrent use. Memory does not grow with the samples.
type lateHist struct {
	mu     sync.Mutex
	counts [lateBuckets]uint64
	n      uint64
	max    int64
}

// bucket returns the bucket of d ns (d ≥ 1).
func lateBucket(d int64) int {
	if d <= 1 {
		return 0
	}
	oct := bits.Len64(uint64(d)) - 1 // 2^oct ≤ d < 2^(oct+1)
	frac := int((uint64(d) - 1<<oct) * latePerOctave >> oct)
	return min(oct*latePerOctave+frac, lateBuckets-1)
}

// lateUpper is the upper edge of bucket b, in ns.
func lateUpper(b int) int64 {
	oct, frac := b/latePerOctave, b%latePerOctave
	return int64(math.Ldexp(1+float64(frac+1)/latePerOctave, oct))
}

func (h *lateHist) record(d int64) {
	d = max(d, 0)
	h.mu.Lock()
	h.counts[lateBucket(d)]++
	h.n++
	h.max = max(h.max, d)
	h.mu.Unlock()
}

// add adds o's samples to h.
func (h *lateHist) add(o *lateHist) {
	o.mu.Lock()
	counts, n, mx := o.counts, o.n, o.max
	o.mu.Unlock()
	h.mu.Lock()
	for i, c := range counts {
		h.counts[i] += c
	}
	h.n += n
	h.max = max(h.max, mx)
	h.mu.Unlock()
}

// summary returns the histogram's quantiles: each the upper edge of the
// bucket it falls in, capped at the largest sample.
func (h *lateHist) summary() Lateness {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Lateness{Samples: h.n, Max: time.Duration(h.max)}
	if h.n == 0 {
		return s
	}
	q := func(p float64) time.Duration {
		rank := uint64(math.Ceil(p * float64(h.n)))
		var seen uint64
		for b, c := range h.counts {
			if seen += c; seen >= rank {
				return time.Duration(min(lateUpper(b), h.max))
			}
		}
		return time.Duration(h.max)
	}
	s.P50, s.P99 = q(0.50), q(0.99)
	return s
}
