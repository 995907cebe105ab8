//go:build linux

package harness

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/scenario"
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

// The CPU time a real run costs per datagram, everything included (the
// send with its kernel TX stamp, the receive, the loops, the fits at the
// rounds' ends, the garbage collector; through the shaper, also its read,
// model and write). Measured on this 2-core VM on 2026-11-24 as the run's
// own CPU (summary.json real.host.own_cpus) over the datagrams it sent:
// real2-idle (direct) 52 µs; real4-jitter (relayed, on a machine it
// overloaded) 186 µs, less the shaper's spin about 130 µs; rounded down,
// so that only a scenario that clearly needs more than the machine has is
// refused.
const (
	cpuPerDatagram        = 40 * time.Microsecond
	cpuPerRelayedDatagram = 80 * time.Microsecond
	// shaperCPU is the shaper's own scheduler thread, which spins up to
	// half a CPU before releases.
	shaperCPU = 0.5
)

// cpuNeed is the CPU a real run was estimated to need before it started.
type cpuNeed struct {
	datagrams float64 // per second, on every link together
	relayed   bool    // through the shaper
	cpus      float64 // the estimate, in CPUs
	have      int     // the machine's CPUs
}

// estimateCPU estimates the CPU sc needs on the real backend: its
// datagrams per second (a sync probe is a request and a reply, two
// probes a pair, one pair per cadence on every directed edge; a ping one
// datagram and its answer per interval) times their cost.
func estimateCPU(sc *scenario.Scenario, r *scenario.Resolved, cluster bool) cpuNeed {
	n := cpuNeed{relayed: !cluster && impaired(r), have: runtime.NumCPU()}
	edges := float64(len(r.Edges))
	switch sc.Protocol.Kind {
	case scenario.ProtocolSync:
		if c := sc.Protocol.Sync.Cadence; c > 0 {
			n.datagrams = edges * 4 / c.Seconds()
		}
	default:
		if i := sc.Protocol.Interval; i > 0 {
			n.datagrams = edges * 2 / i.Seconds()
		}
	}
	if cluster {
		// One node of the cluster runs here: its share of the edges.
		n.datagrams /= float64(max(len(r.Nodes), 1))
	}
	per := cpuPerDatagram
	if n.relayed {
		per = cpuPerRelayedDatagram
		n.cpus = shaperCPU
	}
	n.cpus += n.datagrams * per.Seconds()
	return n
}

func (n cpuNeed) String() string {
	via := "direct"
	if n.relayed {
		via = "through the shaper"
	}
	return fmt.Sprintf("estimated CPU need %.2f of %d CPUs (%s datagrams/s %s)", n.cpus, n.have, Count(int64(n.datagrams)), via)
}

// refusal refuses a run that clearly needs more CPU than the machine has,
// unless forced.
func (n cpuNeed) refusal(force bool) error {
	if n.cpus <= float64(n.have) || force {
		return nil
	}
	return fmt.Errorf("%s: this machine cannot run it in real time, and its figures would be the machine's, not the scenario's; run it with --backend=sim, lengthen protocol.sync.cadence or use fewer nodes, or pass --force to run it anyway (it will be marked degraded)", n)
}

// judge measures the real run's conditions against their bounds.
func (b *realBackend) judge(s *Summary) {
	var cs conditions
	if rs := s.Real; rs != nil {
		rs.TimerLateness = b.TimerLateness()
		rs.Host = b.reading
		rs.CPUNeed = b.need.cpus
	}
	if d := b.duration; d > 0 && !b.workloadEnded {
		cs.check("run short of the scenario's duration", max(1-float64(b.phases.Run)/float64(d), 0), maxShortRun, "share",
			fmt.Sprintf("ran %v of %v (interrupted, or a callback failed)", b.phases.Run.Round(time.Millisecond), d))
	}
	cs.check("estimated CPU need", b.need.cpus, float64(b.need.have), "CPUs",
		fmt.Sprintf("the machine's CPUs; %s", b.need))
	if b.net != nil && b.net.shaper != nil {
		b.judgeShaper(&cs)
	}
	late := b.TimerLateness()
	cs.check("node timer lateness p99", durNS(late.P99), durNS(timerLateP99), "ns",
		fmt.Sprintf("five times the Go runtime's millisecond timer floor; %s timers, max %s", Count(int64(late.Samples)), FormatNS(durNS(late.Max))))
	h := b.reading
	if len(h.Unavailable) == 0 || h.CPUs > 0 {
		cs.check("CPU steal", h.Steal, maxSteal, "share", "time the hypervisor gave this machine's CPUs to others")
	}
	if h.Pressure >= 0 {
		cs.check("CPU pressure", h.Pressure, maxPressure, "share",
			fmt.Sprintf("wall time in which some runnable task waited for a CPU (PSI); CPUs %.0f %% busy, this run used %.2f CPUs", 100*h.Busy, h.OwnCPU))
	}
	judgeOwnDrops(&cs, b.ownDrops(s))
	if sy := s.Sync; sy != nil {
		p := sy.Probes
		network := s.Network.Lost + s.Network.QueueDrops + s.Network.Dropped["partition"] + s.Network.Dropped["linkdown"]
		crashed := lostToCrashes(b.sc, b.resolved)
		excess := max(float64(p.Lost)-float64(network)-crashed, 0)
		if sent := float64(p.PairsSent * 2); sent > 0 {
			what := fmt.Sprintf("%s probes lost, %s datagrams dropped by the links", Count(int64(p.Lost)), Count(int64(network)))
			if crashed > 0 {
				what += fmt.Sprintf(", up to %s to crashed nodes", Count(int64(crashed)))
			}
			cs.check("probes lost beyond the link model", excess/sent, maxExcessLoss, "share", what)
		}
		y := b.sc.Protocol.Sync
		if y.Cadence > 0 && p.Blocks > 0 {
			scheduled := float64(p.Blocks) * float64(y.Window) / float64(y.Cadence)
			cs.check("probe pairs short of the cadence", max(1-float64(p.PairsSent)/scheduled, 0), maxShortPairs, "share",
				fmt.Sprintf("%s pairs sent of about %s scheduled: %s edge-windows of %v at one pair every %v",
					Count(int64(p.PairsSent)), Count(int64(scheduled)), Count(int64(p.Blocks)), y.Window, y.Cadence))
		}
	}
	judgeUnsolved(&cs, s)
	judgeSelfCheck(&cs, s)
	judgeTrust(&cs, s)
	judgeSections(&cs, s)
	s.Conditions, s.Status = cs, cs.status()
	if why := b.sawNothing(s); why != "" {
		s.Status, s.StatusReason = StatusFailed, why
	}
}

// sawNothing says why a sync run that ran its duration measured
// nothing, or "": none of this process's nodes closed a window and the
// master completed no round (a cluster node whose master it never
// reached), or, with edges to probe, no probe pair was sent in the
// windows it closed. A run cut short (SIGINT) is left to the "run short"
// condition, which marks it degraded.
func (b *realBackend) sawNothing(s *Summary) string {
	sy := s.Sync
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
	if probing && sy.Probes.PairsSent == 0 {
		return fmt.Sprintf("no probe sent in %v (%s windows closed)", ran, Count(int64(sy.WindowsClosed)))
	}
	return ""
}

// runsHere reports whether node i runs in this process (every node but on
// a cluster node).
func (b *realBackend) runsHere(i int) bool { return b.rank == nil || *b.rank == i }

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
func (b *realBackend) ownDrops(s *Summary) ownDrops {
	d := ownDrops{dropped: b.ReadErrors() + b.BacklogDrops()}
	if b.net != nil && b.net.shaper != nil {
		for _, st := range b.net.shaper.Stats() {
			d.dropped += st.WriteDropped + st.Unrouted
		}
		d.of, d.ofWhat = s.Network.Packets, "sent on the links"
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
func judgeOwnDrops(cs *conditions, d ownDrops) {
	const name = "datagrams dropped by our own processes"
	what := "the shaper's ports and the nodes' sockets, not the link model, nor traffic from outside the cluster (not_a_node, auth_*)"
	switch {
	case d.of > 0:
		cs.check(name, float64(d.dropped)/float64(d.of), maxOwnDrops, "share",
			fmt.Sprintf("%s of %s %s: %s", Count(int64(d.dropped)), Count(int64(d.of)), d.ofWhat, what))
	case d.dropped > 0:
		cs.check(name, float64(d.dropped), 0, "",
			fmt.Sprintf("none %s to compare with: %s", d.ofWhat, what))
	}
}

// judgeShaper checks the shaper's release lateness on each link against a
// tenth of the link's delay, and its largest stall.
func (b *realBackend) judgeShaper(cs *conditions) {
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
	cs.check("shaper release lateness p99, link "+worstName, durNS(worst), durNS(worstBound), "ns",
		fmt.Sprintf("a tenth of the link's delay, or %s without one; the link furthest over", FormatNS(durNS(shaperLateFloor))))
	cs.check("shaper largest release lateness", durNS(stall), durNS(shaperStall), "ns", "a stall that holds every link's frames")
}

// judgeTrust checks the run's figures against its ground truth: the sync
// protocol's node-round errors against the σ it reported, the ping
// exchanges' against half their round trip. A real run on one host knows
// its truth (the clocks it injected); one that did not honour its σ says
// so rather than print figures that read as trustworthy.
func judgeTrust(cs *conditions, s *Summary) {
	// 1 − Target, worked out as the shares are (a constant's exact
	// 0.01 would not equal 1 − 0.99 at run time).
	target := groundtruth.Target
	bound := 1 - target
	if sy := s.Sync; sy != nil {
		if c := sy.Calibration; c != nil && c.Points > 0 {
			worst := ""
			if len(c.Worst) > 0 {
				worst = fmt.Sprintf(" (%.1f ns off at σ %.1f ns)", math.Abs(c.Worst[0].ErrorNS), c.Worst[0].SigmaNS)
			}
			cs.check("node-round errors beyond 3 reported σ", 1-c.Within3, bound, "share",
				fmt.Sprintf("%s points against the injected clocks, worst %.1f σ%s: a reported σ must contain its error",
					Count(int64(c.Points)), c.Sigmas.Max, worst))
		}
	}
	if t := s.Trace; t != nil && t.AlignedEvents > 0 {
		cs.check("aligned events beyond 3 reported σ", 1-t.Within(), bound, "share",
			fmt.Sprintf("%s events of the combined trace against their tracer readings' true times, worst %.1f σ (%.0f ns)",
				Count(int64(t.AlignedEvents)), t.ErrorSigmas.Max, t.ErrorNS.Max))
	}
	if p := s.Ping; p != nil && p.RTT.N > 0 {
		cs.check("ping errors beyond half the round trip", 1-p.WithinBound, bound, "share",
			fmt.Sprintf("%s exchanges against the injected clocks: an NTP exchange's error lies within half its round trip unless its timestamps do not", Count(int64(p.RTT.N))))
	}
}
