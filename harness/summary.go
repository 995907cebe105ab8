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
	"github.com/chronosync/chronosync/harness/realbackend"
	"github.com/chronosync/chronosync/harness/syncrun"
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
	Real      *realbackend.Summary  `json:"real,omitempty"`
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

// RealSummary says how a real-backend run ran (realbackend.Summary:
// summary.json's real section).
type RealSummary = realbackend.Summary

// RealFault is one action of a scenario's faults as a real run applied it
// (realbackend.Fault).
type RealFault = realbackend.Fault

// RealPhases is how long a real run's phases took in wall-clock time
// (realbackend.Phases).
type RealPhases = realbackend.Phases

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
		rs.Print(w, s.Virtual)
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
