package metrics

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/shaper"
)

// RealStats are the real backend's counters and lateness, as
// [Metrics.ObserveReal] takes them: totals over the process's life so far
// (the world's getters), not increments. [RealStatsOf] reads them from a
// running world.
type RealStats struct {
	// TimerLateness is how late the nodes' timers fired (their loops'
	// lateness): real.World.TimerLateness.
	TimerLateness real.Lateness
	// NotNodeDrops, ReadErrors and BacklogDrops are the datagrams dropped
	// on receipt: from an address that is no node's, lost to a read error,
	// or over a loop's backlog.
	NotNodeDrops, ReadErrors, BacklogDrops uint64
	// NotNodeStreams counts the stream connections refused for coming from
	// no node's address.
	NotNodeStreams uint64
	// Auth counts the datagrams and frames a keyed world dropped.
	Auth real.AuthDrops
	// Timestamps counts where datagram timestamps came from.
	Timestamps real.TimestampStats
	// Shaper holds the userspace shaper's per-link counters and release
	// lateness (shaper.Process.Stats, shaper.Shaper.Stats); nil where the
	// links are not shaped (a node of a multi-host cluster).
	Shaper []shaper.LinkStats
	// ShaperInfo is how the shaper's thread ran (its wake lateness, read
	// lag); nil without a shaper.
	ShaperInfo *shaper.Info
}

// RealStatsOf reads w's counters and timer lateness, without a shaper's
// (a node of a multi-host cluster has none; a single-host run's harness
// adds its shaper.Process's when it has them).
func RealStatsOf(w *real.World) RealStats {
	return RealStats{
		TimerLateness:  w.TimerLateness(),
		NotNodeDrops:   w.NotNodeDrops(),
		ReadErrors:     w.ReadErrors(),
		BacklogDrops:   w.BacklogDrops(),
		NotNodeStreams: w.NotNodeStreams(),
		Auth:           w.AuthDrops(),
		Timestamps:     w.Stats(),
	}
}

// ObserveProbes records the counters of node's prober (rounds.Node.Prober,
// probe.Prober.Stats), totals since it started. Call it as often as
// convenient (each window, or before a scrape); the latest totals are
// exported. A restarted prober starts from zero again: Prometheus' rate()
// takes such a drop as a counter reset.
func (m *Metrics) ObserveProbes(node int, st probe.Stats) {
	m.snap.mu.Lock()
	defer m.snap.mu.Unlock()
	m.snap.probes[node] = st
}

// ObserveReal records the real backend's counters and lateness, totals
// since the world started (see [RealStatsOf]); the latest are exported,
// labelled with m's node.
func (m *Metrics) ObserveReal(s RealStats) {
	s.Shaper = slices.Clone(s.Shaper)
	if s.ShaperInfo != nil {
		info := *s.ShaperInfo
		s.ShaperInfo = &info
	}
	m.snap.mu.Lock()
	defer m.snap.mu.Unlock()
	m.snap.real = &s
}

// snapshots is a collector of the totals that ObserveProbes and
// ObserveReal store: the sources count from their start, so they are
// exported as they are, at scrape time.
type snapshots struct {
	node string
	all  []*prometheus.Desc

	probePairs, probeReplies, probeAnswered, probeDropped *prometheus.Desc
	probeReplayed, probeAdverts, probeMissed              *prometheus.Desc
	probeT3, probeT3Late                                  *prometheus.Desc

	loopP50, loopP99, loopMax, loopTimers *prometheus.Desc
	dropped, streamsRefused               *prometheus.Desc
	timestamps, txLate                    *prometheus.Desc

	releaseP50, releaseP99, releaseMax *prometheus.Desc
	written, framesDropped             *prometheus.Desc
	wakeP50, wakeP99, wakeMax          *prometheus.Desc
	lagP50, lagP99, lagMax             *prometheus.Desc
	realTime, gcCycles                 *prometheus.Desc

	mu     sync.Mutex
	probes map[int]probe.Stats
	real   *RealStats
}

func newSnapshots(node int) *snapshots {
	s := &snapshots{node: strconv.Itoa(node), probes: map[int]probe.Stats{}}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		desc := prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
		s.all = append(s.all, desc)
		return desc
	}
	s.probePairs = d("probe_pairs_sent_total", "Probe pairs the node's prober sent, to all its peers.", "node")
	s.probeReplies = d("probe_replies_received_total", "Replies the node's prober received and took.", "node")
	s.probeAnswered = d("probe_requests_answered_total", "Probe requests the node's responder answered.", "node")
	s.probeDropped = d("probe_replies_dropped_total",
		"Datagrams the node's prober dropped, by reason: late, duplicate, malformed, spoofed, implausible, bad_node.", "node", "reason")
	s.probeReplayed = d("probe_requests_replayed_total", "Probe requests the responder had answered already (duplicated or replayed).", "node")
	s.probeAdverts = d("probe_adverts_rejected_total", "Clock adverts dropped for their values.", "node")
	s.probeMissed = d("probe_pairs_missed_total", "Pair slots a late timer gave up.", "node")
	s.probeT3 = d("probe_t3_total", "Answered probes handed to the fit, by the source of their t3: kernel or user.", "node", "source")
	s.probeT3Late = d("probe_t3_late_total", "Transmit timestamps that came back after their probe's window had closed.", "node")

	s.loopP50 = d("loop_lateness_p50_seconds", "Median lateness of the node's timers (true time run minus due), over the process's life.", "node")
	s.loopP99 = d("loop_lateness_p99_seconds", "99th percentile of the node's timer lateness, over the process's life.", "node")
	s.loopMax = d("loop_lateness_max_seconds", "Largest timer lateness of the node, over the process's life.", "node")
	s.loopTimers = d("loop_timers_total", "Timers whose lateness was measured.", "node")
	s.dropped = d("datagrams_dropped_total",
		"Datagrams dropped on receipt, by reason: not_node, read_error, backlog, auth_forged, auth_replayed, auth_misdirected.", "node", "reason")
	s.streamsRefused = d("streams_refused_total", "Stream connections refused for coming from no node's address.", "node")
	s.timestamps = d("datagram_timestamps_total", "Datagram timestamps by direction (tx, rx) and source (kernel, user).", "node", "direction", "source")
	s.txLate = d("datagram_tx_timestamps_late_total", "Kernel transmit timestamps that came after the bounded wait.", "node")

	s.releaseP50 = d("shaper_release_lateness_p50_seconds", "Median release lateness of the shaper's copies on the link, over its last 65536.", "src", "dst")
	s.releaseP99 = d("shaper_release_lateness_p99_seconds", "99th percentile of the shaper's release lateness on the link, over its last 65536 copies.", "src", "dst")
	s.releaseMax = d("shaper_release_lateness_max_seconds", "Largest release lateness of the shaper on the link.", "src", "dst")
	s.written = d("shaper_frames_written_total", "Copies the shaper wrote on the link.", "src", "dst")
	s.framesDropped = d("shaper_frames_dropped_total",
		"Frames the shaper dropped on the link, by reason: lost and queue (the link model's impairment), write, unrouted, partitioned, link_down.", "src", "dst", "reason")
	s.wakeP50 = d("shaper_wake_lateness_p50_seconds", "Median lateness of the shaper thread's wakeups.")
	s.wakeP99 = d("shaper_wake_lateness_p99_seconds", "99th percentile of the shaper thread's wake lateness.")
	s.wakeMax = d("shaper_wake_lateness_max_seconds", "Largest wake lateness of the shaper's thread.")
	s.lagP50 = d("shaper_read_lag_p50_seconds", "Median time from a frame's kernel receive stamp to the shaper reading it.")
	s.lagP99 = d("shaper_read_lag_p99_seconds", "99th percentile of the shaper's frame read lag.")
	s.lagMax = d("shaper_read_lag_max_seconds", "Largest frame read lag of the shaper.")
	s.realTime = d("shaper_realtime", "1 when the shaper's thread runs under SCHED_FIFO, else 0.")
	s.gcCycles = d("shaper_gc_cycles_total", "Garbage collections of the shaper's process (0 in a shaper child).")
	return s
}

// Describe implements prometheus.Collector.
func (s *snapshots) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range s.all {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *snapshots) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	probes := maps.Clone(s.probes)
	rs := s.real
	s.mu.Unlock()

	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	u := func(n int) uint64 { return uint64(max(n, 0)) }
	for _, node := range slices.Sorted(maps.Keys(probes)) {
		st, n := probes[node], strconv.Itoa(node)
		counter(s.probePairs, u(st.PairsSent), n)
		counter(s.probeReplies, u(st.RepliesReceived), n)
		counter(s.probeAnswered, u(st.ProbesAnswered), n)
		for _, r := range []struct {
			reason string
			v      int
		}{{"late", st.Late}, {"duplicate", st.Duplicate}, {"malformed", st.Malformed}, {"spoofed", st.Spoofed}, {"implausible", st.Implausible}, {"bad_node", st.BadNode}} {
			counter(s.probeDropped, u(r.v), n, r.reason)
		}
		counter(s.probeReplayed, u(st.Replayed), n)
		counter(s.probeAdverts, u(st.AdvertsRejected), n)
		counter(s.probeMissed, u(st.PairsMissed), n)
		counter(s.probeT3, u(st.T3Kernel), n, "kernel")
		counter(s.probeT3, u(st.T3User), n, "user")
		counter(s.probeT3Late, u(st.T3Late), n)
	}
	if rs == nil {
		return
	}
	n := s.node
	gauge(s.loopP50, rs.TimerLateness.P50.Seconds(), n)
	gauge(s.loopP99, rs.TimerLateness.P99.Seconds(), n)
	gauge(s.loopMax, rs.TimerLateness.Max.Seconds(), n)
	counter(s.loopTimers, rs.TimerLateness.Samples, n)
	for _, r := range []struct {
		reason string
		v      uint64
	}{{"not_node", rs.NotNodeDrops}, {"read_error", rs.ReadErrors}, {"backlog", rs.BacklogDrops},
		{"auth_forged", rs.Auth.Forged}, {"auth_replayed", rs.Auth.Replayed}, {"auth_misdirected", rs.Auth.Misdirected}} {
		counter(s.dropped, r.v, n, r.reason)
	}
	counter(s.streamsRefused, rs.NotNodeStreams, n)
	ts := rs.Timestamps
	counter(s.timestamps, ts.TxKernel, n, "tx", "kernel")
	counter(s.timestamps, ts.TxUser, n, "tx", "user")
	counter(s.timestamps, ts.RxKernel, n, "rx", "kernel")
	counter(s.timestamps, ts.RxUser, n, "rx", "user")
	counter(s.txLate, ts.TxLate, n)

	for _, l := range rs.Shaper {
		src, dst := strconv.Itoa(l.From), strconv.Itoa(l.To)
		gauge(s.releaseP50, l.Late.P50.Seconds(), src, dst)
		gauge(s.releaseP99, l.Late.P99.Seconds(), src, dst)
		gauge(s.releaseMax, l.Late.Max.Seconds(), src, dst)
		counter(s.written, l.Written, src, dst)
		for _, r := range []struct {
			reason string
			v      uint64
		}{{"lost", l.Lost}, {"queue", l.QueueDropped}, {"write", l.WriteDropped}, {"unrouted", l.Unrouted},
			{"partitioned", l.Partitioned}, {"link_down", l.LinkDown}} {
			counter(s.framesDropped, r.v, src, dst, r.reason)
		}
	}
	if in := rs.ShaperInfo; in != nil {
		sec := func(d time.Duration) float64 { return d.Seconds() }
		gauge(s.wakeP50, sec(in.WakeLate.P50))
		gauge(s.wakeP99, sec(in.WakeLate.P99))
		gauge(s.wakeMax, sec(in.WakeLate.Max))
		gauge(s.lagP50, sec(in.ReadLag.P50))
		gauge(s.lagP99, sec(in.ReadLag.P99))
		gauge(s.lagMax, sec(in.ReadLag.Max))
		rt := 0.0
		if in.RealTime {
			rt = 1
		}
		gauge(s.realTime, rt)
		counter(s.gcCycles, in.GCCycles)
	}
}
