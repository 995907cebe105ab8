package harness

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/real"
)

// Summary is summary.json: the outcome of a run. Like the manifest it
// holds nothing that varies between equal runs.
type Summary struct {
	Scenario  string        `json:"scenario"`
	Seed      uint64        `json:"seed"`
	Backend   string        `json:"backend"`
	Nodes     int           `json:"nodes"`
	Virtual   float64       `json:"virtual_seconds"`
	Events    uint64        `json:"events"`
	EventHash string        `json:"event_hash"`
	Protocol  string        `json:"protocol"`
	Network   NetworkStats  `json:"network"`
	Ping      *PingSummary  `json:"ping,omitempty"`
	Sync      *SyncSummary  `json:"sync,omitempty"`
	Trace     *TraceSummary `json:"trace,omitempty"`
	Real      *RealSummary  `json:"real,omitempty"`
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
}

// Print writes the human summary of a run.
func (r *Result) Print(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "scenario %s  seed %d  backend %s  nodes %d\n", s.Scenario, s.Seed, s.Backend, s.Nodes)
	speed := 0.0
	if r.Wall > 0 {
		speed = s.Virtual / r.Wall.Seconds()
	}
	if rs := s.Real; rs != nil {
		fmt.Fprintf(w, "ran %.3gs in real time on %s links (impairment %s), timestamps %s\n",
			s.Virtual, rs.Topology, rs.Impairment, rs.TimestampSource)
	} else {
		fmt.Fprintf(w, "simulated %.3gs in %v wall (%.3gx), %d events, event-log hash %s\n",
			s.Virtual, r.Wall.Round(time.Millisecond), speed, s.Events, s.EventHash)
	}
	n := s.Network
	fmt.Fprintf(w, "network: %d packets, %d delivered, %d lost, %d queue drops, %d duplicated, %d corrupted\n",
		n.Packets, n.Delivered, n.Lost, n.QueueDrops, n.Duplicated, n.Corrupted)
	if len(n.Dropped) > 0 {
		fmt.Fprint(w, "dropped:")
		for _, why := range slices.Sorted(maps.Keys(n.Dropped)) {
			fmt.Fprintf(w, " %s %d", why, n.Dropped[why])
		}
		fmt.Fprintln(w)
	}
	if p := s.Ping; p != nil {
		fmt.Fprintf(w, "ping: %d sent, %d replies (%.2f%% lost)\n", p.Sent, p.Received, 100*p.LossFraction)
		fmt.Fprintf(w, "  rtt           p50 %v  p95 %v  p99 %v  max %v\n", ns(p.RTT.P50), ns(p.RTT.P95), ns(p.RTT.P99), ns(p.RTT.Max))
		fmt.Fprintf(w, "  |offset err|  p50 %v  p95 %v  p99 %v  max %v\n", ns(p.OffsetError.P50), ns(p.OffsetError.P95), ns(p.OffsetError.P99), ns(p.OffsetError.Max))
	}
	if sy := s.Sync; sy != nil {
		printSync(w, sy, r.Estimates)
	}
	if t := s.Trace; t != nil {
		fmt.Fprintf(w, "trace: %d nodes, %d events, %d snapshot pairs\n", t.Nodes, t.Events, t.Snapshots)
		fmt.Fprintf(w, "  validate raw:      Violations: %d, Overlaps: %d, Warnings: %d\n", t.Raw.Violations, t.Raw.Overlaps, t.Raw.Warnings)
		fmt.Fprintf(w, "  validate combined: Violations: %d, Overlaps: %d, Warnings: %d\n", t.Combined.Violations, t.Combined.Overlaps, t.Combined.Warnings)
		e := t.ErrorNS
		fmt.Fprintf(w, "  |aligned − true start| p50 %v  p99 %v  max %v; max %.2f reported σ\n", ns(e.P50), ns(e.P99), ns(e.Max), t.ErrorSigmas.Max)
		if len(t.Unfinished) > 0 {
			fmt.Fprintf(w, "  workload unfinished on nodes %v\n", t.Unfinished)
		}
	}
	fmt.Fprintf(w, "run directory: %s\n", r.Dir)
}

func ns(v float64) time.Duration { return time.Duration(v).Round(time.Nanosecond) }

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
	// NegativeDurations counts the events that ended before they started
	// on their node's tracer clock (a tracer clock that stepped back):
	// their traces give them duration 0.
	NegativeDurations int `json:"negative_durations,omitempty"`
}

// ValidateCounts are the totals of a happens-before check.
type ValidateCounts struct {
	Violations int `json:"violations"`
	Overlaps   int `json:"overlaps"`
	Warnings   int `json:"warnings"`
}
