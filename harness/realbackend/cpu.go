//go:build linux

package realbackend

import (
	"fmt"
	"runtime"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
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
	return fmt.Sprintf("estimated CPU need %.2f of %d CPUs (%s datagrams/s %s)", n.cpus, n.have, engine.Count(int64(n.datagrams)), via)
}

// refusal refuses a run that clearly needs more CPU than the machine has,
// unless forced.
func (n cpuNeed) refusal(force bool) error {
	if n.cpus <= float64(n.have) || force {
		return nil
	}
	return fmt.Errorf("%s: this machine cannot run it in real time, and its figures would be the machine's, not the scenario's; run it with --backend=sim, lengthen protocol.sync.cadence or use fewer nodes, or pass --force to run it anyway (it will be marked degraded)", n)
}
