package simbackend

import (
	"fmt"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/real/hostload"
	"github.com/chronosync/chronosync/scenario"
)

// What the simulator's world takes per node and per directed link once
// built (clocks, random streams, sockets, the link model and its queue),
// from the peak resident memory of `chronosync run` on 200 ms ping
// scenarios on this VM (2026-11-24, /usr/bin/time -f %M): rings of 2,000
// and 20,000 nodes 32 MB and 176 MB, full meshes of 200 and 600 nodes
// (39,800 and 359,400 links) 120 MB and 962 MB, so 2.6 KiB a link and
// 2.7 KiB a node; rounded up, as an estimate that refuses a run should
// not refuse one that fits. A run's logs and traces grow beyond this with
// its length and traffic.
const (
	simBytesPerNode = 3 << 10
	simBytesPerLink = 3 << 10
)

// Memory estimates the memory the simulator needs to build sc's world.
func Memory(sc *scenario.Scenario) int64 {
	return int64(sc.Nodes)*simBytesPerNode + sc.EdgeCount()*simBytesPerLink
}

// CheckMemory refuses, before anything is built or written, a simulated
// run whose world alone would not fit the memory available (avail: the
// kernel's MemAvailable, or a test's figure), with both figures. Without
// a reading it lets the run go.
func CheckMemory(sc *scenario.Scenario, avail func() (int64, error)) error {
	if avail == nil {
		avail = hostload.MemAvailable
	}
	have, err := avail()
	if err != nil {
		return nil
	}
	if need := Memory(sc); need > have {
		return fmt.Errorf("run %s: too large for this machine: its world needs about %s (%s nodes and %s links at about %d KiB each), and %s is available (MemAvailable); use fewer nodes or a sparser topology",
			sc.Name, formatBytes(need), engine.Count(int64(sc.Nodes)), engine.Count(sc.EdgeCount()), simBytesPerLink>>10, formatBytes(have))
	}
	return nil
}

// formatBytes writes n bytes in GiB, MiB or KiB with three significant
// digits.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.3g KiB", float64(n)/(1<<10))
}
