//go:build linux

package realbackend

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
)

// The bounds of a real run's conditions (docs/real-backend.md, "Runs that
// know their conditions").
const (
	// shaperLateFloor bounds the shaper's release lateness p99 on a link
	// without delay, where a tenth of the delay would be 0: the shaper's
	// own idle target.
	shaperLateFloor = 50 * time.Microsecond
	// shaperStall bounds the largest release lateness: a stall longer than
	// this holds every link's frames.
	shaperStall = 5 * time.Millisecond
	// timerLateP99 bounds the nodes' timer lateness p99. Its floor on
	// an idle machine is about a millisecond: the Go runtime waits for a
	// timer in its network poller, in whole milliseconds (p50 0.5–0.9 ms,
	// p99 1.1–1.3 ms on this VM, TestAfterFuncAt). Periodic work is armed
	// at its due times (world.AbsoluteTimers), so that floor does not
	// thin the cadence, which "probe pairs short of the cadence" checks.
	// Five times the floor means the machine kept the loops from a CPU.
	timerLateP99 = 5 * time.Millisecond
	// maxSteal bounds the share of CPU time the hypervisor stole.
	maxSteal = 0.05
	// maxPressure bounds the share of wall time in which some runnable
	// task waited for a CPU (PSI cpu some). The run's own threads wake
	// together (a probe's sender and receiver, the shaper) and make some
	// of it: on this 2-core VM real2-onoff alone reads 10–30 %, beside
	// two CPU hogs 90–100 %.
	maxPressure = 0.5
	// maxOwnDrops bounds the datagrams our own processes dropped (the
	// shaper's port, a node's socket), as a share of those sent: the link
	// model drops on purpose, we must not.
	maxOwnDrops = 0.001
	// maxShortRun bounds how much shorter than the scenario's duration
	// the protocol ran (SIGINT ends a run early).
	maxShortRun = 0.01
	// maxShortPairs bounds the share of the probe pairs the scenario
	// schedules (one per cadence on every edge while a window is open)
	// that were not sent: beyond it the loops did not keep the cadence,
	// and the run measured a sparser protocol than its scenario's.
	maxShortPairs = 0.1
	// maxExcessLoss bounds the probes lost beyond what the links dropped,
	// as a share of the probes sent.
	maxExcessLoss = 0.01
)

// Measured is what the real backend's judge reads of the rest of the
// run's summary: the link counters and, for a sync run, its probe and
// round figures.
type Measured struct {
	Network engine.NetworkStats
	// Sync is nil unless the run ran the sync protocol.
	Sync *SyncFigures
}

// SyncFigures are a sync run's figures the real backend judges itself
// by: whether its loops kept the probe cadence and lost no probe the
// links did not drop, and whether the run measured anything at all.
type SyncFigures struct {
	// Lost, PairsSent and Blocks are the probes lost, the probe pairs
	// sent and the edge-windows they were sent in.
	Lost, PairsSent, Blocks int
	// Rounds completed, and windows this process's nodes closed.
	Rounds, WindowsClosed int
}

// Judge measures the real run's own conditions against their bounds,
// into c, in this order: the run's length, the CPU need, the shaper, the
// nodes' timers, steal, CPU pressure, the run's own drops and, for a sync
// run, its probes. It completes rs, the run's section of the summary
// (nil: none), with what the run measured of the machine. The workload's
// conditions come after these; SawNothing says whether the run failed.
func (b *Backend) Judge(c engine.Checker, rs *Summary, m Measured) {
	if rs != nil {
		rs.TimerLateness = b.TimerLateness()
		rs.Host = b.reading
		rs.CPUNeed = b.need.cpus
	}
	if d := b.duration; d > 0 && !b.workloadEnded {
		c.Check("run short of the scenario's duration", max(1-float64(b.phases.Run)/float64(d), 0), maxShortRun, "share",
			fmt.Sprintf("ran %v of %v (interrupted, or a callback failed)", b.phases.Run.Round(time.Millisecond), d))
	}
	c.Check("estimated CPU need", b.need.cpus, float64(b.need.have), "CPUs",
		fmt.Sprintf("the machine's CPUs; %s", b.need))
	if b.net != nil && b.net.shaper != nil {
		b.judgeShaper(c)
	}
	late := b.TimerLateness()
	c.Check("node timer lateness p99", durNS(late.P99), durNS(timerLateP99), "ns",
		fmt.Sprintf("five times the Go runtime's millisecond timer floor; %s timers, max %s", engine.Count(int64(late.Samples)), engine.FormatNS(durNS(late.Max))))
	h := b.reading
	if len(h.Unavailable) == 0 || h.CPUs > 0 {
		c.Check("CPU steal", h.Steal, maxSteal, "share", "time the hypervisor gave this machine's CPUs to others")
	}
	if h.Pressure >= 0 {
		c.Check("CPU pressure", h.Pressure, maxPressure, "share",
			fmt.Sprintf("wall time in which some runnable task waited for a CPU (PSI); CPUs %.0f %% busy, this run used %.2f CPUs", 100*h.Busy, h.OwnCPU))
	}
	judgeOwnDrops(c, b.ownDrops(m.Network))
	if p := m.Sync; p != nil {
		n := m.Network
		network := n.Lost + n.QueueDrops + n.Dropped["partition"] + n.Dropped["linkdown"]
		crashed := lostToCrashes(b.sc, b.resolved)
		excess := max(float64(p.Lost)-float64(network)-crashed, 0)
		if sent := float64(p.PairsSent * 2); sent > 0 {
			what := fmt.Sprintf("%s probes lost, %s datagrams dropped by the links", engine.Count(int64(p.Lost)), engine.Count(int64(network)))
			if crashed > 0 {
				what += fmt.Sprintf(", up to %s to crashed nodes", engine.Count(int64(crashed)))
			}
			c.Check("probes lost beyond the link model", excess/sent, maxExcessLoss, "share", what)
		}
		y := b.sc.Protocol.Sync
		if y.Cadence > 0 && p.Blocks > 0 {
			scheduled := float64(p.Blocks) * float64(y.Window) / float64(y.Cadence)
			c.Check("probe pairs short of the cadence", max(1-float64(p.PairsSent)/scheduled, 0), maxShortPairs, "share",
				fmt.Sprintf("%s pairs sent of about %s scheduled: %s edge-windows of %v at one pair every %v",
					engine.Count(int64(p.PairsSent)), engine.Count(int64(scheduled)), engine.Count(int64(p.Blocks)), y.Window, y.Cadence))
		}
	}
}

// SawNothing says why a sync run that ran its duration measured
// nothing, or "": none of this process's nodes closed a window and the
// master completed no round (a cluster node whose master it never
// reached), or, with edges to probe, no probe pair was sent in the
// windows it closed. A run cut short (SIGINT) is left to the "run short"
// condition, which marks it degraded.
func (b *Backend) SawNothing(m Measured) string {
	sy := m.Sync
	if sy == nil {
		return ""
	}
	if d := b.duration; d > 0 && !b.workloadEnded && 1-float64(b.phases.Run)/float64(d) > maxShortRun {
		return ""
	}
	ran := b.phases.Run.Round(100 * time.Millisecond)
	if sy.Rounds == 0 && sy.WindowsClosed == 0 {
		if m := b.sc.Protocol.Sync.Master; b.rank != nil && *b.rank != m && m < len(b.addrs) {
			return fmt.Sprintf("no round started in %v (master unreachable? node %d at %s)", ran, m, b.addrs[m])
		}
		return fmt.Sprintf("no round started in %v", ran)
	}
	probing := false
	for _, e := range b.resolved.Edges {
		probing = probing || b.runsHere(e.From)
	}
	if probing && sy.PairsSent == 0 {
		return fmt.Sprintf("no probe sent in %v (%s windows closed)", ran, engine.Count(int64(sy.WindowsClosed)))
	}
	return ""
}

// runsHere reports whether node i runs in this process (every node but on
// a cluster node).
func (b *Backend) runsHere(i int) bool { return b.rank == nil || *b.rank == i }

// ownDrops are the datagrams the run's own processes dropped (a read
// error or a full loop at a node's socket; the shaper's failed writes and
// unrouted frames), and those they are a share of, counted alike:
// through the shaper the datagrams the nodes sent on its links, each of
// which our processes carry; without it (a cluster node, a bridge or a
// direct pair), where no link is counted, the datagrams from the nodes
// that reached the nodes' sockets.
// Datagrams from addresses that are no node's (not_a_node) and those
// that do not open under the key (auth_*) are traffic from outside, not
// drops of ours: they are in neither figure.
type ownDrops struct {
	dropped, of uint64
	ofWhat      string // what of is: "sent on the links", "received from the nodes"
}

// ownDrops counts the run's own drops and what they are a share of.
func (b *Backend) ownDrops(n engine.NetworkStats) ownDrops {
	d := ownDrops{dropped: b.ReadErrors() + b.BacklogDrops()}
	if b.net != nil && b.net.shaper != nil {
		for _, st := range b.net.shaper.Stats() {
			d.dropped += st.WriteDropped + st.Unrouted
		}
		d.of, d.ofWhat = n.Packets, "sent on the links"
		return d
	}
	// No shaper counts the links (a cluster node; a bridge or a direct
	// pair): every datagram the nodes' sockets read, less those from
	// outside, plus those a read error lost.
	ts := b.Stats()
	received := ts.RxKernel + ts.RxUser
	a := b.AuthDrops()
	outside := b.NotNodeDrops() + a.Forged + a.Replayed + a.Misdirected
	d.of, d.ofWhat = max(received, outside)-outside+b.ReadErrors(), "received from the nodes"
	return d
}

// judgeOwnDrops adds the condition on the run's own drops: a share of the
// datagrams they are counted against, or, where there were none, their
// count (any is over: a share of nothing is no figure).
func judgeOwnDrops(c engine.Checker, d ownDrops) {
	const name = "datagrams dropped by our own processes"
	what := "the shaper's ports and the nodes' sockets, not the link model, nor traffic from outside the cluster (not_a_node, auth_*)"
	switch {
	case d.of > 0:
		c.Check(name, float64(d.dropped)/float64(d.of), maxOwnDrops, "share",
			fmt.Sprintf("%s of %s %s: %s", engine.Count(int64(d.dropped)), engine.Count(int64(d.of)), d.ofWhat, what))
	case d.dropped > 0:
		c.Check(name, float64(d.dropped), 0, "",
			fmt.Sprintf("none %s to compare with: %s", d.ofWhat, what))
	}
}

// judgeShaper checks the shaper's release lateness on each link against a
// tenth of the link's delay, and its largest stall.
func (b *Backend) judgeShaper(c engine.Checker) {
	links := linkModel(b.resolved)
	var worst, worstBound time.Duration
	var worstName string
	var stall time.Duration
	for _, st := range b.net.shaper.Stats() {
		if !st.Connected || st.Sent == 0 {
			continue
		}
		p, _ := links(st.From, st.To)
		bound := p.Delay / 10
		if bound <= 0 {
			bound = shaperLateFloor
		}
		if worstName == "" || float64(st.Late.P99)/float64(bound) > float64(worst)/float64(worstBound) {
			worst, worstBound, worstName = st.Late.P99, bound, fmt.Sprintf("%d->%d", st.From, st.To)
		}
		stall = max(stall, st.Late.Max)
	}
	if worstName == "" {
		return
	}
	c.Check("shaper release lateness p99, link "+worstName, durNS(worst), durNS(worstBound), "ns",
		fmt.Sprintf("a tenth of the link's delay, or %s without one; the link furthest over", engine.FormatNS(durNS(shaperLateFloor))))
	c.Check("shaper largest release lateness", durNS(stall), durNS(shaperStall), "ns", "a stall that holds every link's frames")
}

// durNS is d in ns, as a float64 for a condition.
func durNS(d time.Duration) float64 { return float64(d) }
