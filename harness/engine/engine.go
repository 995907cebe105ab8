package engine

import (
	"time"

	"github.com/chronosync/chronosync/scenario"

	"github.com/chronosync/chronosync/world"
)

// Protocol adapts one workload or protocol kind to the harness: it makes
// the nodes' programs, and after the run it adds its figures to the
// summary, measured against the world's ground truth.
type Protocol interface {
	// Program is node id's program; it is called again for each restart
	// of the node.
	Program(id world.NodeID) world.Program
	// Attach runs once the world exists; dir is the (staging) run
	// directory the protocol may write its artifacts into.
	Attach(w Truth, dir string) error
	// Finish runs after the run: it flushes and closes the files.
	Finish() error
	// Summarize adds the protocol's section to the run's summary.
	Summarize(s Sections)
	// Artifacts lists the files the protocol writes.
	Artifacts() []Artifact
}

// Ender is a protocol whose work can end before the scenario's duration (a
// workload that ran all its iterations): the run stops once the channel is
// closed.
type Ender interface {
	WorkloadDone() <-chan struct{}
}

// EndOf is the channel that ends p's run early, nil if none does.
func EndOf(p Protocol) <-chan struct{} {
	if e, ok := p.(Ender); ok {
		return e.WorkloadDone()
	}
	return nil
}

// LateTimers is a protocol that makes up for the real backend's timers,
// which fire tens of µs to a millisecond late: the root calls
// TimersFireLate before a real run, never before a simulated one.
type LateTimers interface {
	TimersFireLate()
}

// Sections is a run's summary as an adapter adds to it: the harness root
// owns the summary's type (summary.json's schema), which has a field of
// each adapter's section type.
type Sections interface {
	// Put stores section, a pointer to one of the summary's section types,
	// in its field.
	Put(section any)
}

// Checker collects a run's conditions: Check adds one, a measured value
// with the bound within which the run still represents its scenario; unit
// is "ns", "share", "" (a count) or a unit's name.
type Checker interface {
	Check(name string, value, bound float64, unit, why string)
}

// Judge is a summary section that measures conditions of its own: the
// root's backends call Judge on every section of the summary that has one,
// after their own conditions, in the summary's field order.
type Judge interface {
	Judge(c Checker)
}

// Truth is what protocols measure against: the ground truth of the world
// they ran in, the simulator's or the real backend's.
type Truth interface {
	Nodes() int
	// HostIdeal returns node i's host clock now.
	HostIdeal(i world.NodeID) int64
	// HostIdealAt returns node i's host clock at true time t.
	HostIdealAt(i world.NodeID, t int64) int64
	// HostTrueTime returns the true time at which node i's host clock
	// reads local.
	HostTrueTime(i world.NodeID, local int64) int64
	// HostSteps returns how many steps node i's host clock has taken by
	// true time t, and their sum.
	HostSteps(i world.NodeID, t int64) (int, int64)
	// Now is true time.
	Now() time.Duration
	// Backend names the world: "sim" or "real".
	Backend() string
}

// Artifact is one file of a run directory.
type Artifact struct {
	Name string `json:"name"`
	What string `json:"what"`
}

// AsRunner is a protocol that changes the scenario as the run directory
// records it (scenario.yaml, the manifest), so that the run replays from
// there: a file it copies into the run directory is named by its copy.
// The root calls AsRun before it writes scenario.yaml.
type AsRunner interface {
	AsRun(sc *scenario.Scenario)
}
