package engine

import (
	"context"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// Backend is the world a run runs in, as the harness root drives it: the
// simulator (harness/simbackend) or the real backend. The root does
// everything else once for both: the run directory, the protocol's
// recorders, the failure records, the summary and the manifest.
//
// A backend is also the ground truth the protocols measure against.
type Backend interface {
	Truth
	// Artifacts lists the files the backend writes into the run
	// directory, besides those every run has.
	Artifacts() []Artifact
	// Run runs the nodes' programs for the scenario's duration (a real run
	// ends early when ctx is done), showing progress on bar. A callback's
	// panic comes back as a *Failure; err is a failure to run at all.
	// wall is how long the run took.
	Run(ctx context.Context, bar *Progress, observe func(time.Duration)) (f *Failure, wall time.Duration, err error)
	// Flush makes what the world wrote during the run final (the event
	// log's buffer; the shaper's counters), before the protocol's files
	// are finished.
	Flush() error
	// Network returns the run's link counters.
	Network() NetworkStats
	// Record adds the backend's part to the manifest (the event log's
	// count and hash) and to the summary (virtual: the run's length in
	// seconds, the scenario's duration until the backend says otherwise;
	// its own section through s) and writes its files that only exist
	// after the run (the simulator's checkpoints).
	Record(dir string, m *Manifest, virtual *float64, s Sections) error
	// Close releases the world (event-log files, namespaces, the shaper),
	// whatever happened.
	Close() error
}

// NetworkStats add up the link models' counters over every directed link
// (summary.json's network section).
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

// Add adds one directed link's counters, as the link model keeps them.
func (n *NetworkStats) Add(st netem.Stats) {
	n.Packets += st.Sent
	n.Delivered += st.Delivered
	n.Lost += st.Lost
	n.QueueDrops += st.QueueDropped
	n.Duplicated += st.Duplicated
	n.Corrupted += st.Corrupted
	n.Reordered += st.Reordered
}
