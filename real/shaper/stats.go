//go:build linux

package shaper

import (
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// lateRing is how many recent release latenesses each link keeps for its
// percentiles.
const lateRing = 1 << 16

// Lateness summarises how late a link's copies were written: the time of
// the write minus the scheduled release.
type Lateness struct {
	Samples  uint64        // copies written or dropped by the port
	P50, P99 time.Duration // over the last 65536 copies
	Max      time.Duration // over all copies
}

// LinkStats are the counters of one directed link.
type LinkStats struct {
	From, To  int
	Connected bool // Config.Links gave this pair a link
	// Stats are the link model's counters (zero when not Connected).
	netem.Stats
	Unrouted     uint64 // frames dropped because the pair has no link
	Written      uint64 // copies written to the output port
	WriteDropped uint64 // copies the output port dropped (ErrFrameDropped)
	// Partitioned and LinkDown count the frames dropped while a fault cut
	// the link (SetCut), before the link model saw them.
	Partitioned, LinkDown uint64
	Late                  Lateness
}

// Stats returns the counters of every ordered pair of distinct nodes, in
// order of From, then To. It may be called while Run runs.
func (s *Shaper) Stats() []LinkStats {
	var out []LinkStats
	for from := range s.links {
		for _, dl := range s.links[from] {
			if dl == nil {
				continue
			}
			st := LinkStats{From: dl.from, To: dl.to}
			dl.mu.Lock()
			if dl.link != nil {
				st.Connected, st.Stats = true, dl.link.Stats()
			}
			st.Unrouted = dl.unrouted
			dl.mu.Unlock()
			st.Written, st.WriteDropped = dl.written.Load(), dl.writeDropped.Load()
			st.Partitioned, st.LinkDown = dl.cutDropped[CutPartition].Load(), dl.cutDropped[CutLinkDown].Load()
			st.Late = dl.late.summary()
			out = append(out, st)
		}
	}
	return out
}

// lateness records release latenesses in ns.
type lateness struct {
	mu   sync.Mutex
	ring []int64
	next int
	n    uint64
	max  int64
}

func (l *lateness) record(d int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) < lateRing {
		l.ring = append(l.ring, d)
	} else {
		l.ring[l.next] = d
		l.next = (l.next + 1) % lateRing
	}
	if l.n == 0 || d > l.max {
		l.max = d
	}
	l.n++
}

func (l *lateness) summary() Lateness {
	l.mu.Lock()
	r := slices.Clone(l.ring)
	s := Lateness{Samples: l.n, Max: time.Duration(l.max)}
	l.mu.Unlock()
	if len(r) == 0 {
		return s
	}
	slices.Sort(r)
	s.P50 = time.Duration(r[len(r)/2])
	s.P99 = time.Duration(r[(len(r)*99)/100])
	return s
}

// Info says how a shaper runs: how its releases are timed and how it
// dated the frames it read.
type Info struct {
	// RealTime reports whether the scheduler's thread, which releases
	// every copy and reads the packet ports, runs under SCHED_FIFO (it
	// stays SCHED_OTHER when the process may not: not root, no
	// CAP_SYS_NICE). False until Run has started it.
	RealTime bool
	// KernelStamps counts the frames dated by the kernel's receive stamp,
	// ClockStamps those dated by a clock read when they were read: frames
	// of a port that is not a packet port, and of a packet port without a
	// usable stamp.
	KernelStamps, ClockStamps uint64
	// SpinCapped counts the releases the scheduler slept for instead of
	// spinning because it had spun its budget (half a CPU over 10 ms).
	SpinCapped uint64
	// WakeLate is how late the scheduler's thread woke from its sleeps
	// whose timeout expired (it wakes early on purpose: spinGuard before
	// a release); ReadLag how long after its kernel receive stamp a
	// frame was read. Both say whether the thread got its CPU on time.
	WakeLate, ReadLag Lateness
	// GCCycles counts the garbage collections of the shaper's process
	// while Run ran (so far, while it runs). Each one stops the
	// scheduler's thread for its stops of the world; a shaper child
	// turns the collector off (see the package doc), so it should be 0
	// there.
	GCCycles uint64
}

// Info returns how the shaper runs. It may be called while Run runs.
func (s *Shaper) Info() Info {
	i := Info{KernelStamps: s.kernelStamps.Load(), ClockStamps: s.clockStamps.Load()}
	if sc := s.sched.Load(); sc != nil {
		i.RealTime, i.SpinCapped = sc.realTime.Load(), sc.spinCapped.Load()
		i.WakeLate, i.ReadLag = sc.wakeLate.summary(), sc.readLag.summary()
		end := gcCycles()
		if s.ended.Load() {
			end = s.gcEnd.Load()
		}
		i.GCCycles = end - s.gcStart.Load()
	}
	return i
}

// gcCycles returns how many garbage collections this process has
// completed.
func gcCycles() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
