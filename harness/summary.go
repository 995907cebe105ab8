package harness

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/harness/phasegaprun"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/hostload"
)

// Summary is summary.json: the outcome of a run. Like the manifest it
// holds nothing that varies between equal runs.
type Summary struct {
	Scenario  string               `json:"scenario"`
	Seed      uint64               `json:"seed"`
	Backend   string               `json:"backend"`
	Nodes     int                  `json:"nodes"`
	Virtual   float64              `json:"virtual_seconds"`
	Events    uint64               `json:"events"`
	EventHash string               `json:"event_hash"`
	Protocol  string               `json:"protocol"`
	Network   NetworkStats         `json:"network"`
	Ping      *PingSummary         `json:"ping,omitempty"`
	Sync      *SyncSummary         `json:"sync,omitempty"`
	Trace     *TraceSummary        `json:"trace,omitempty"`
	Phasegap  *phasegaprun.Summary `json:"phasegap,omitempty"`
	Real      *RealSummary         `json:"real,omitempty"`
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

// NetworkStats add up the link models' counters over every directed link.
type NetworkStats struct {
	Packets    uint64 `json:"packets"`
	Delivered  uint64 `json:"delivered"`
	Lost       uint64 `json:"lost"`
	QueueDrops uint64 `json:"queue_drops"`
	Duplicated uint64 `json:"duplicated"`
	Corrupted  uint64 `json:"corrupted"`
	Reordered  uint64 `json:"reordered"`
	// Dropped counts datagrams not delivered, by reason, whether the link
	// model or the world (partition, crashed node, ...) dropped them.
	Dropped map[string]uint64 `json:"dropped"`
}

// add adds one directed link's counters, as the link model keeps them.
func (n *NetworkStats) add(st netem.Stats) {
	n.Packets += st.Sent
	n.Delivered += st.Delivered
	n.Lost += st.Lost
	n.QueueDrops += st.QueueDropped
	n.Duplicated += st.Duplicated
	n.Corrupted += st.Corrupted
	n.Reordered += st.Reordered
}

// PingSummary is the outcome of the ping exchange.
type PingSummary struct {
	Sent     int `json:"sent"`
	Answered int `json:"answered"`
	Received int `json:"received"`
	// LossFraction is 1 - received/sent: pings or replies that never came
	// back.
	LossFraction float64 `json:"loss_fraction"`
	// RTT is the round-trip delay without the peer's turnaround, in ns.
	RTT stats.Summary `json:"rtt_ns"`
	// OffsetError is |NTP offset estimate − true offset| in ns, the true
	// offset being the two host clocks' noise-free difference at the
	// moment the reply arrived.
	OffsetError stats.Summary `json:"offset_error_ns"`
	// WithinBound is the fraction of exchanges whose |offset error| is at
	// most half their round trip, the bound an NTP exchange reports: it
	// holds whatever the two paths' delays, so only timestamps that are
	// not when the datagrams left and arrived break it.
	WithinBound float64 `json:"within_bound"`
}

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
		printPing(w, p)
	}
	if sy := s.Sync; sy != nil {
		printSync(w, sy, r.Estimates)
	}
	if t := s.Trace; t != nil {
		printTrace(w, t)
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

// printPing writes the ping exchange: its counts and a table of the round
// trips and offset errors, in one unit.
func printPing(w io.Writer, p *PingSummary) {
	if p.Sent > 0 {
		fmt.Fprintf(w, "ping: %s sent, %s replies (%.2f%% of pings got none)\n", Count(p.Sent), Count(p.Received), 100*p.LossFraction)
	} else {
		// No share of nothing: a count of 0 says it.
		fmt.Fprintf(w, "ping: none sent, %s replies\n", Count(p.Received))
	}
	if p.RTT.N == 0 {
		fmt.Fprintln(w, "  no exchange completed: no round trip to report")
		return
	}
	rtt, off := p.RTT, p.OffsetError
	u := UnitFor(rtt.P50, rtt.P95, rtt.P99, rtt.Max, off.P50, off.P95, off.P99, off.Max)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	label := padRight([]string{"in " + u.Name, "rtt", "|offset err|"})
	fmt.Fprintf(tw, "%s\tp50\tp95\tp99\tmax\t\n", label[0])
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", label[1], u.Format(rtt.P50), u.Format(rtt.P95), u.Format(rtt.P99), u.Format(rtt.Max))
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", label[2], u.Format(off.P50), u.Format(off.P95), u.Format(off.P99), u.Format(off.Max))
	tw.Flush()
	fmt.Fprintf(w, "  reported bound (half the round trip): %.1f %% of the exchanges' errors within it", 100*p.WithinBound)
	if p.WithinBound < groundtruth.Target {
		fmt.Fprintf(w, ": NOT CALIBRATED, want ≥ %.0f %%: the timestamps are not when the datagrams left and arrived", 100*groundtruth.Target)
	}
	fmt.Fprintln(w)
	if rtt.N != p.Received {
		// ping.Node reports an exchange when the pair's next reply brings
		// the peer's receive and send times of the one before
		// (interleaved timestamps).
		fmt.Fprintf(w, "  from %s exchanges of the %s replies: a reply brings the peer's timestamps of the exchange before it, so each pair's last exchange gives none, and each lost reply costs one more\n",
			Count(rtt.N), Count(p.Received))
	}
}

// printTrace writes a traced run's happens-before checks and alignment
// errors.
func printTrace(w io.Writer, t *TraceSummary) {
	fmt.Fprintf(w, "trace: %s nodes, %s events, %s snapshot pairs\n", Count(t.Nodes), Count(t.Events), Count(t.Snapshots))
	fmt.Fprintf(w, "  validate raw:      %s\n", t.Raw.text())
	fmt.Fprintf(w, "  validate combined: %s\n", t.Combined.text())
	e := t.ErrorNS
	if t.AlignedEvents == 0 {
		fmt.Fprintln(w, "  |aligned − true start|: no event carries an event id and an uncertainty to compare")
	} else {
		u := UnitFor(e.P50, e.P99, e.Max)
		of := Count(t.AlignedEvents) + " events"
		if t.AlignedEvents != t.Events {
			of = fmt.Sprintf("%s of the %s events (those with an event id and an uncertainty in the combined trace)", Count(t.AlignedEvents), Count(t.Events))
		}
		fmt.Fprintf(w, "  |aligned − true start| in %s, over %s: p50 %s  p99 %s  max %s; max %.2f reported σ\n",
			u.Name, of, u.Format(e.P50), u.Format(e.P99), u.Format(e.Max), t.ErrorSigmas.Max)
		if share := t.within(); share < groundtruth.Target {
			fmt.Fprintf(w, "  reported σ: %s of %s aligned events within 3σ (%.1f %%): NOT CALIBRATED, want ≥ %.0f %%: the uncertainties in the combined trace understate its errors\n",
				Count(int64(t.Within3Sigma)), Count(int64(t.AlignedEvents)), 100*share, 100*groundtruth.Target)
		}
	}
	if t.NegativeDurations > 0 {
		fmt.Fprintf(w, "  %s events ended before they started on their tracer clock (it stepped back): duration 0 in the traces\n", Count(t.NegativeDurations))
	}
	if len(t.Unfinished) > 0 {
		fmt.Fprintf(w, "  workload unfinished on nodes %v\n", t.Unfinished)
	}
	if k := t.Kineto; k != nil {
		printKineto(w, k)
	}
}

// printKineto writes the Kineto path's checks and alignment errors, in
// the lines of the XSpace path's.
func printKineto(w io.Writer, k *KinetoTraceSummary) {
	fmt.Fprintf(w, "kineto: %s events (a collective launch's record_param_comms and nccl: annotation share its id and times), %s flows\n",
		Count(k.Events), Count(k.Flows))
	fmt.Fprintf(w, "  validate raw:      %s\n", k.Raw.text())
	how := "with snapshot pairs: GPU times corrected"
	if !k.SnapshotCorrected {
		how = "without snapshot pairs: GPU times as the profiler converted them"
	}
	fmt.Fprintf(w, "  validate combined: %s (%s)\n", k.Combined.text(), how)
	if k.AlignedEvents == 0 {
		fmt.Fprintln(w, "  |aligned − true start|: no event carries an event id and an uncertainty to compare")
		return
	}
	e, h, g := k.ErrorNS, k.HostErrorNS, k.GPUErrorNS
	u := UnitFor(e.P50, e.P99, e.Max, h.P99, g.P99)
	fmt.Fprintf(w, "  |aligned − true start| in %s, over %s events: p50 %s  p99 %s  max %s (host p99 %s, GPU p99 %s); max %.2f reported σ\n",
		u.Name, Count(k.AlignedEvents), u.Format(e.P50), u.Format(e.P99), u.Format(e.Max), u.Format(h.P99), u.Format(g.P99), k.ErrorSigmas.Max)
	if share := k.within(); share < groundtruth.Target {
		fmt.Fprintf(w, "  reported σ: %s of %s aligned events within 3σ (%.1f %%): NOT CALIBRATED, want ≥ %.0f %%: the uncertainties in the combined trace understate its errors\n",
			Count(int64(k.Within3Sigma)), Count(int64(k.AlignedEvents)), 100*share, 100*groundtruth.Target)
	}
}

// TraceSummary is a traced run's outcome: the happens-before check of the
// raw per-node traces and of the combined trace, and how far each aligned
// event lies from its true start.
type TraceSummary struct {
	Nodes      int   `json:"nodes"`
	Events     int   `json:"events"`
	Snapshots  int   `json:"snapshot_pairs"`
	Unfinished []int `json:"unfinished_nodes,omitempty"` // nodes whose workload did not finish
	// Raw is validate on the per-node traces, each on its own tracer
	// clock; Combined on the combined trace.
	Raw      ValidateCounts `json:"raw"`
	Combined ValidateCounts `json:"combined"`
	// AlignedEvents were compared with the truth: ErrorNS is |aligned −
	// true start|, ErrorSigmas that over the event's reported uncertainty.
	AlignedEvents int           `json:"aligned_events"`
	ErrorNS       stats.Summary `json:"error_ns"`
	ErrorSigmas   stats.Summary `json:"error_sigmas"`
	// Within3Sigma counts the aligned events whose error is within 3
	// reported σ; at least groundtruth.Target of them must be for the
	// uncertainties to be honest.
	Within3Sigma int `json:"events_within_3_sigma"`
	// NegativeDurations counts the events that ended before they started
	// on their node's tracer clock (a tracer clock that stepped back):
	// their traces give them duration 0.
	NegativeDurations int `json:"negative_durations,omitempty"`
	// Kineto is the Kineto path's outcome, with the workload's kineto:
	// true.
	Kineto *KinetoTraceSummary `json:"kineto,omitempty"`
}

// KinetoTraceSummary is the Kineto path of a traced run: the nodes' traces
// as the PyTorch profiler writes them (node<i>.pt.trace.json.gz), checked
// raw, combined and measured against the truth as the XSpace traces are.
type KinetoTraceSummary struct {
	// Events counts the complete events of the traces, each with its
	// chronosync_event_id: launches, kernels, and a collective launch's
	// record_param_comms op and nccl: annotation (with the launch's id and
	// times). Flows counts the launch-to-kernel flows.
	Events int `json:"events"`
	Flows  int `json:"flows"`
	// Raw is validate on the Kineto traces, each on its own host clock
	// (its GPU events as the profiler converted them); Combined on the
	// combined one.
	Raw      ValidateCounts `json:"raw"`
	Combined ValidateCounts `json:"combined"`
	// SnapshotCorrected says whether the combiner had the nodes' snapshot
	// pairs to correct the profiler's conversion of GPU times; without
	// them the GPU events keep its drift.
	SnapshotCorrected bool `json:"snapshot_corrected"`
	// AlignedEvents were compared with the truth: ErrorNS is |aligned −
	// true start| (HostErrorNS and GPUErrorNS that of the host and GPU
	// events), ErrorSigmas that over the event's reported uncertainty.
	AlignedEvents int           `json:"aligned_events"`
	ErrorNS       stats.Summary `json:"error_ns"`
	HostErrorNS   stats.Summary `json:"host_error_ns"`
	GPUErrorNS    stats.Summary `json:"gpu_error_ns"`
	ErrorSigmas   stats.Summary `json:"error_sigmas"`
	// Within3Sigma counts the aligned events within 3 reported σ.
	Within3Sigma int `json:"events_within_3_sigma"`
}

// within is the share of the aligned events within 3 reported σ (1
// without any).
func (k *KinetoTraceSummary) within() float64 {
	if k.AlignedEvents == 0 {
		return 1
	}
	return float64(k.Within3Sigma) / float64(k.AlignedEvents)
}

// within is the share of the aligned events within 3 reported σ (1
// without any).
func (t *TraceSummary) within() float64 {
	if t.AlignedEvents == 0 {
		return 1
	}
	return float64(t.Within3Sigma) / float64(t.AlignedEvents)
}

// ValidateCounts are the totals of a happens-before check.
type ValidateCounts struct {
	Violations int `json:"violations"`
	Overlaps   int `json:"overlaps"`
	Warnings   int `json:"warnings"`
}

// text is the counts as validate prints them, or, when the check compared
// no pair of invocations (Violations + Overlaps is 0), a line that says so
// rather than counts of 0 that read as a result.
func (c ValidateCounts) text() string {
	if c.Violations+c.Overlaps == 0 {
		return fmt.Sprintf("nothing to compare (no collective on two nodes), Warnings: %d", c.Warnings)
	}
	return fmt.Sprintf("Violations: %d, Overlaps: %d, Warnings: %d", c.Violations, c.Overlaps, c.Warnings)
}
