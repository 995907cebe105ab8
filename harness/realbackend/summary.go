package realbackend

import (
	"fmt"
	"io"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/hostload"
)

// Summary is summary.json's real section: how a real-backend run ran, what
// carried its packets and where its timestamps came from.
type Summary struct {
	// Topology is the netlab kind: direct (one veth pair), bridge (a Linux
	// bridge, no impairment) or relay (the userspace shaper).
	Topology string `json:"topology"`
	// Impairment is what applied the links' parameters: none, userspace or
	// netem.
	Impairment string `json:"impairment"`
	// Timestamps counts datagram timestamps by source: the kernel's
	// software timestamps or the user-space fallback.
	Timestamps real.TimestampStats `json:"timestamps"`
	// TimestampSource is kernel, user or mixed.
	TimestampSource string `json:"timestamp_source"`
	// ReleaseLateP99NS is the shaper's worst per-link p99 of (write time -
	// scheduled release), in ns; 0 without a shaper.
	ReleaseLateP99NS int64 `json:"release_late_p99_ns"`
	// Rank is the node this process ran, in multi-host mode.
	Rank *int `json:"rank,omitempty"`
	// TimerLateness is how late the nodes' timers fired.
	TimerLateness real.Lateness `json:"timer_lateness"`
	// Host is what the machine did during the run: how busy its CPUs were,
	// steal, CPU pressure, and the CPU this run used.
	Host hostload.Reading `json:"host"`
	// Phases is how long the boot, the protocol's run and the stop took.
	Phases Phases `json:"phases"`
	// CPUNeed is the CPU the run was estimated to need before it started.
	CPUNeed float64 `json:"cpu_need_estimate"`
	// Faults are the scenario's faults as the run applied them, in order.
	Faults []Fault `json:"faults,omitempty"`
	// Authenticated says whether every datagram and stream frame was
	// sealed with the cluster's key (Options.Key); what did not open under
	// it is in the network's dropped counts, auth_*.
	Authenticated bool `json:"authenticated"`
}

// Phases is how long a real run's phases took in wall-clock time: the
// nodes' boot, the protocol's run (the scenario's duration, unless
// interrupted) and the stop of the loops and the shaper.
type Phases struct {
	Start time.Duration `json:"start_ns"`
	Run   time.Duration `json:"run_ns"`
	Stop  time.Duration `json:"stop_ns"`
}

// Fault is one action of a scenario's faults as a real run applied it:
// when it was due (from the nodes' boot, as the simulator counts), how late
// it came, and its error, if any.
type Fault struct {
	What   string        `json:"what"`
	Due    time.Duration `json:"due_ns"`
	LateNS int64         `json:"late_ns"`
	Error  string        `json:"error,omitempty"`
}

// Print writes the section's lines of the printed summary: how long the
// run ran in real time (seconds, summary.json's virtual_seconds), on what
// links, with which timestamps, and the faults it applied.
func (rs *Summary) Print(w io.Writer, seconds float64) {
	src := rs.TimestampSource
	if src == "" {
		src = "none (no datagram sent or received)"
	}
	fmt.Fprintf(w, "ran %.3gs in real time (boot %s, stop %s) on %s links (impairment %s), timestamps %s, %s\n",
		seconds, engine.FormatNS(float64(rs.Phases.Start)), engine.FormatNS(float64(rs.Phases.Stop)), rs.Topology, rs.Impairment, src, authWord(rs.Authenticated))
	printFaults(w, rs.Faults)
}

// printFaults writes the faults a real run applied, one a line.
func printFaults(w io.Writer, fs []Fault) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "faults: %d actions applied\n", len(fs))
	for _, f := range fs {
		fmt.Fprintf(w, "  at %v (%s late): %s%s\n", f.Due, engine.FormatNS(float64(f.LateNS)), f.What, errSuffix(f.Error))
	}
}

// authWord says whether a real run's messages were sealed.
func authWord(sealed bool) string {
	if sealed {
		return "authenticated (every message sealed with the cluster key)"
	}
	return "unauthenticated (no key)"
}

// errSuffix is ": e", or "" when e is.
func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}
