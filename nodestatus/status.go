// Package nodestatus lets an operator ask a running chronosync node how it
// is doing, as `chronyc tracking` asks chronyd: the node serves a snapshot
// of its state, a [Status], on a Unix socket that only its owner (and root)
// may open, and `chronosync status` prints it.
//
// The node starts a [Server] with [Listen] and hands it each new snapshot
// with [Server.Set] (after every round); the server answers every request
// from its own goroutine with the latest one, so a query never waits for
// the node's loop, and a node whose loop hangs shows as stale once its
// model's validity deadline has passed. [Query] is the client.
//
// The protocol is one request a connection: the client writes the line
// "status\n", the server answers one JSON object (a [Status], or
// {"error": "..."}) and a newline, and closes. Real nodes only: the
// simulator never starts a server.
package nodestatus

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Version is the version of the Status JSON layout; a reader takes fields
// it does not know as absent.
const Version = 1

// State is a node's condition, as Status.State says it.
type State string

// The states of a node.
const (
	// StateStarting: no round has completed yet.
	StateStarting State = "starting"
	// StateOK: the last round completed in time and the self-check passes.
	StateOK State = "ok"
	// StateDegraded: the node has a model, but a measured condition
	// crossed its bound (the self-check failed, peers are lost, ...);
	// Reason says which.
	StateDegraded State = "degraded"
	// StateStale: no round has completed within the model's validity
	// deadline; the server sets it itself when the deadline passes.
	StateStale State = "stale"
	// StateFailed: the node measures nothing (its master unreachable, no
	// probe answered).
	StateFailed State = "failed"
)

// Status is a snapshot of a running node, the answer to a query. Times are
// the host's wall clock (UTC); durations and offsets are in nanoseconds,
// drifts in parts per million.
type Status struct {
	// Version is the layout's version, [Version].
	Version int `json:"version"`
	// Node is this node's rank, Address its address.
	Node    int    `json:"node"`
	Address string `json:"address,omitempty"`
	// Cluster is the cluster file the node runs, Nodes its node count.
	Cluster string `json:"cluster,omitempty"`
	Nodes   int    `json:"nodes"`
	// Reference is the node whose clock is global time (the master),
	// ReferenceAddress its address.
	Reference        int    `json:"reference"`
	ReferenceAddress string `json:"reference_address,omitempty"`
	// PID is the node's process, Started when it started.
	PID     int       `json:"pid"`
	Started time.Time `json:"started,omitzero"`
	// Now is when the server answered; the server sets it.
	Now time.Time `json:"now,omitzero"`
	// State is the node's condition and Reason, unless it is ok, why.
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// LastRound is the last round that completed.
	LastRound Round `json:"last_round"`
	// OffsetNS is global time minus this node's clock, at the end of the
	// last round, and OffsetSigmaNS its standard uncertainty.
	OffsetNS      float64 `json:"offset_ns"`
	OffsetSigmaNS float64 `json:"offset_sigma_ns"`
	// DriftPPM is the rate of global time against this node's clock, less
	// one, and DriftSigmaPPM its standard uncertainty.
	DriftPPM      float64 `json:"drift_ppm"`
	DriftSigmaPPM float64 `json:"drift_sigma_ppm"`
	// SelfCheck is the honesty self-check of the last round.
	SelfCheck SelfCheck `json:"self_check"`
	// ValidUntil is the model's validity deadline: with no round by then,
	// the server answers StateStale. Zero: no deadline.
	ValidUntil time.Time `json:"valid_until,omitzero"`
	// Peers are the nodes this one probes, by rank.
	Peers []Peer `json:"peers"`
}

// Round is the last completed round.
type Round struct {
	// ID is the round's id (0: none yet).
	ID uint64 `json:"id"`
	// End is when it completed (ROUND_END).
	End time.Time `json:"end,omitzero"`
	// LatencyNS is from ROUND_START to ROUND_END.
	LatencyNS float64 `json:"latency_ns"`
	// AgeNS is Now minus End; the server sets it.
	AgeNS float64 `json:"age_ns"`
}

// SelfCheck is the self-check's verdict: Within of Of predictions fell
// within 3σ of what was measured, and Pass says whether that passes its
// binomial test. Of is 0 when it has not run.
type SelfCheck struct {
	Within int  `json:"within"`
	Of     int  `json:"of"`
	Pass   bool `json:"pass"`
}

// Peer is one node this node probes.
type Peer struct {
	Node    int    `json:"node"`
	Address string `json:"address,omitempty"`
	// State is "ok", "lost" (nothing heard for a while), "rejected" (its
	// edge left out of the model), "insufficient" (too few answers to fit
	// its edge), "missing" (on the master: it did not report in the last
	// round) or "unknown".
	State string `json:"state"`
	// LastHeard is when its last probe answer arrived (zero: never).
	LastHeard time.Time `json:"last_heard,omitzero"`
	// ProbesSent and ProbesLost count this node's probes to it.
	ProbesSent uint64 `json:"probes_sent"`
	ProbesLost uint64 `json:"probes_lost"`
	// EdgeSigmaNS is the standard uncertainty of the edge's offset.
	EdgeSigmaNS float64 `json:"edge_sigma_ns"`
}

// Clone returns a deep copy of st.
func (st Status) Clone() Status {
	st.Peers = slices.Clone(st.Peers)
	return st
}

// at is st as answered at now: Now and the round's age set, and a node
// with a model whose validity deadline passed marked stale.
func (st Status) at(now time.Time) Status {
	st = st.Clone()
	st.Version = Version
	st.Now = now.UTC()
	if !st.LastRound.End.IsZero() {
		st.LastRound.AgeNS = float64(now.Sub(st.LastRound.End))
	}
	if !st.ValidUntil.IsZero() && now.After(st.ValidUntil) && (st.State == StateOK || st.State == StateDegraded) {
		last := "no round completed"
		if st.LastRound.ID != 0 {
			last = fmt.Sprintf("no round since round %d, %s ago", st.LastRound.ID, seconds(st.LastRound.AgeNS))
		}
		st.State = StateStale
		st.Reason = fmt.Sprintf("%s: the model was valid until %s", last, st.ValidUntil.UTC().Format(time.RFC3339Nano))
	}
	return st
}

// seconds writes ns as seconds with 3 decimals: "0.812 s".
func seconds(ns float64) string { return fmt.Sprintf("%.3f s", ns/1e9) }

// Format writes st as `chronyc tracking` writes its report: aligned
// "Name : value" lines, then a table of the peers.
func Format(w io.Writer, st *Status) error {
	var b strings.Builder
	line := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-16s: %s\n", name, fmt.Sprintf(format, args...))
	}
	line("Node", "%d%s of %d, pid %d", st.Node, paren(st.Address), st.Nodes, st.PID)
	if st.Cluster != "" {
		line("Cluster", "%s", st.Cluster)
	}
	line("Reference node", "%d%s", st.Reference, paren(st.ReferenceAddress))
	if st.Reason != "" {
		line("Status", "%s: %s", st.State, st.Reason)
	} else {
		line("Status", "%s", st.State)
	}
	if st.LastRound.ID == 0 && st.LastRound.End.IsZero() {
		line("Last round", "none yet")
	} else {
		line("Last round", "%d at %s, %.3f seconds ago", st.LastRound.ID, st.LastRound.End.UTC().Format("2006-01-02 15:04:05.000"), st.LastRound.AgeNS/1e9)
		line("Round latency", "%.6f seconds", st.LastRound.LatencyNS/1e9)
		line("Offset", "%s (global time minus local), sigma %.9f seconds", signedSeconds(st.OffsetNS), st.OffsetSigmaNS/1e9)
		line("Drift", "%+.3f ppm, sigma %.3f ppm", st.DriftPPM, st.DriftSigmaPPM)
	}
	switch {
	case st.SelfCheck.Of == 0:
		line("Self-check", "not run")
	case st.SelfCheck.Pass:
		line("Self-check", "%d of %d within 3 sigma, pass", st.SelfCheck.Within, st.SelfCheck.Of)
	default:
		line("Self-check", "%d of %d within 3 sigma, FAIL", st.SelfCheck.Within, st.SelfCheck.Of)
	}
	if !st.ValidUntil.IsZero() {
		line("Valid until", "%s (%s)", st.ValidUntil.UTC().Format("2006-01-02 15:04:05.000"), relative(st.ValidUntil.Sub(st.Now)))
	}
	if !st.Started.IsZero() && !st.Now.IsZero() {
		line("Up", "%s", st.Now.Sub(st.Started).Round(time.Second))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	if len(st.Peers) == 0 {
		_, err := io.WriteString(w, "\nNo peers.\n")
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Node\tAddress\tState\tLast heard\tSent\tLost\tLoss\tEdge sigma")
	for _, p := range st.Peers {
		heard := "never"
		if !p.LastHeard.IsZero() {
			heard = fmt.Sprintf("%.1fs ago", st.Now.Sub(p.LastHeard).Seconds())
		}
		loss := "-"
		if p.ProbesSent > 0 {
			loss = fmt.Sprintf("%.2f%%", 100*float64(p.ProbesLost)/float64(p.ProbesSent))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", p.Node, p.Address, p.State, heard, p.ProbesSent, p.ProbesLost, loss, nanos(p.EdgeSigmaNS))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// paren is " (s)", or "" for "".
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// signedSeconds writes ns as signed seconds to the nanosecond.
func signedSeconds(ns float64) string { return fmt.Sprintf("%+.9f seconds", ns/1e9) }

// relative writes d as "in 1.2 seconds" or "1.2 seconds ago".
func relative(d time.Duration) string {
	if d >= 0 {
		return fmt.Sprintf("in %.1f seconds", d.Seconds())
	}
	return fmt.Sprintf("%.1f seconds ago", -d.Seconds())
}

// nanos writes a σ in ns with a unit that keeps it short: 850ns, 12.3us,
// 4.56ms.
func nanos(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.1fus", ns/1e3)
	default:
		return fmt.Sprintf("%.2fms", ns/1e6)
	}
}
