package harness

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/phasegaprun"
	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/hostload"
)

// Summary is summary.json: the outcome of a run. Like the manifest it
// holds nothing that varies between equal runs.
type Summary struct {
	Scenario  string                `json:"scenario"`
	Seed      uint64                `json:"seed"`
	Backend   string                `json:"backend"`
	Nodes     int                   `json:"nodes"`
	Virtual   float64               `json:"virtual_seconds"`
	Events    uint64                `json:"events"`
	EventHash string                `json:"event_hash"`
	Protocol  string                `json:"protocol"`
	Network   NetworkStats          `json:"network"`
	Ping      *pingrun.Summary      `json:"ping,omitempty"`
	Sync      *syncrun.SyncSummary  `json:"sync,omitempty"`
	Trace     *syncrun.TraceSummary `json:"trace,omitempty"`
	Phasegap  *phasegaprun.Summary  `json:"phasegap,omitempty"`
	Real      *RealSummary          `json:"real,omitempty"`
	// Status is StatusOK, StatusDegraded when a measured condition of
	// the run crossed its bound, or StatusFailed when the run measured
	// nothing of its scenario (StatusReason says why).
	Status string `json:"status"`
	// StatusReason says why a run failed ("no round started in 6 s
	// (master unreachable?)"); empty otherwise.
	StatusReason string `json:"status_reason,omitempty"`
	// Conditions are what a real run measured of its own conditions, with
	// their bounds (none for a simulated run).
	Conditions []Condition `json:"conditions,omitempty"`
}

// RealSummary says how a real-backend run ran: what carried its packets and
// where its timestamps came from.
type RealSummary struct {
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
	Phases RealPhases `json:"phases"`
	// CPUNeed is the CPU the run was estimated to need before it started.
	CPUNeed float64 `json:"cpu_need_estimate"`
	// Faults are the scenario's faults as the run applied them, in order.
	Faults []RealFault `json:"faults,omitempty"`
	// Authenticated says whether every datagram and stream frame was
	// sealed with the cluster's key (Options.Key); what did not open under
	// it is in the network's dropped counts, auth_*.
	Authenticated bool `json:"authenticated"`
}

// RealFault is one action of a scenario's faults as a real run applied it:
// when it was due (from the nodes' boot, as the simulator counts), how late
// it came, and its error, if any.
type RealFault struct {
	What   string        `json:"what"`
	Due    time.Duration `json:"due_ns"`
	LateNS int64         `json:"late_ns"`
	Error  string        `json:"error,omitempty"`
}

// printRealFaults writes the faults a real run applied, one a line.
func printRealFaults(w io.Writer, fs []RealFault) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "faults: %d actions applied\n", len(fs))
	for _, f := range fs {
		fmt.Fprintf(w, "  at %v (%s late): %s%s\n", f.Due, FormatNS(float64(f.LateNS)), f.What, errSuffix(f.Error))
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

// NetworkStats add up the link models' counters over every directed link
// (engine.NetworkStats: both backends count them).
type NetworkStats = engine.NetworkStats

// Print writes the human summary of a run. Figures are rounded, not
// truncated; each table prints its times in one unit, named in its header;
// and where two printed counts differ the line says why.
func (r *Result) Print(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "scenario %s  seed %d  backend %s  nodes %d\n", s.Scenario, s.Seed, s.Backend, s.Nodes)
	if rs := s.Real; rs != nil {
		src := rs.TimestampSource
		if src == "" {
			src = "none (no datagram sent or received)"
		}
		fmt.Fprintf(w, "ran %.3gs in real time (boot %s, stop %s) on %s links (impairment %s), timestamps %s, %s\n",
			s.Virtual, FormatNS(float64(rs.Phases.Start)), FormatNS(float64(rs.Phases.Stop)), rs.Topology, rs.Impairment, src, authWord(rs.Authenticated))
		printRealFaults(w, rs.Faults)
	} else {
		fmt.Fprintf(w, "simulated %.3gs in %v wall (%s), %s events, event-log hash %s\n",
			s.Virtual, r.Wall.Round(time.Millisecond), speed(s.Virtual, r.Wall), Count(s.Events), s.EventHash)
	}
	n := s.Network
	fmt.Fprintf(w, "network: %s datagrams sent on the links, %s delivered, %s lost, %s queue drops, %s duplicated, %s corrupted\n",
		Count(n.Packets), Count(n.Delivered), Count(n.Lost), Count(n.QueueDrops), Count(n.Duplicated), Count(n.Corrupted))
	if len(n.Dropped) > 0 {
		fmt.Fprint(w, "dropped:")
		for _, why := range slices.Sorted(maps.Keys(n.Dropped)) {
			fmt.Fprintf(w, " %s %s", why, Count(n.Dropped[why]))
		}
		fmt.Fprintln(w)
	}
	if p := s.Ping; p != nil {
		p.Print(w)
	}
	if sy := s.Sync; sy != nil {
		sy.Print(w, r.Estimates)
	}
	if t := s.Trace; t != nil {
		t.Print(w)
	}
	if pg := s.Phasegap; pg != nil {
		pg.Print(w)
	}
	printStatus(w, s)
	fmt.Fprintf(w, "run directory: %s\n", r.Dir)
	if r.ReportErr != nil {
		fmt.Fprintf(w, "  warning: no report.html: %v\n", r.ReportErr)
	}
	printWhereToLook(w, r)
}

// speed says how much faster than real time a simulation ran: "2.62x",
// "3,640x".
func speed(virtual float64, wall time.Duration) string {
	if wall <= 0 {
		return "instant"
	}
	x := virtual / wall.Seconds()
	if x >= 100 {
		return Count(int64(math.Round(x))) + "x"
	}
	return strconv.FormatFloat(x, 'g', 3, 64) + "x"
}
