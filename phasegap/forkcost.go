package phasegap

import (
	"fmt"
	"slices"
	"time"
)

// ForkCost is a measurement of one fork/join of PhaseGap's team: what
// BenchmarkTeamFork measures, taken by the caller (phasegap calibrate
// uses it as the model's fork_ns instead of fitting it).
type ForkCost struct {
	// Threads is the team's size, and Forks the forks timed (after as
	// many untimed, which wake the workers).
	Threads, Forks int
	// Median is the median over Batches batches of the mean fork/join;
	// Min and Max the fastest and slowest batch.
	Median, Min, Max time.Duration
	Batches          int
}

// String is the measurement in one line.
func (f ForkCost) String() string {
	return fmt.Sprintf("%v per fork/join of %d threads (median of %d batches of %d forks; batches %v to %v)",
		f.Median, f.Threads, f.Batches, f.Forks/max(f.Batches, 1), f.Min, f.Max)
}

// MeasureForkCost times the fork/join of an empty function on a team of
// threads threads, as BenchmarkTeamFork does: forks untimed forks to wake
// the workers, then forks timed ones in batches batches; the median
// batch's mean is the figure (a batch slowed by another process on the
// CPUs does not move it). It measures the wall clock: a measurement of
// this machine, not a simulator path.
func MeasureForkCost(threads, forks, batches int) (ForkCost, error) {
	if threads < 2 || threads > MaxThreads {
		return ForkCost{}, fmt.Errorf("fork cost: %d threads: expected 2 to %d", threads, MaxThreads)
	}
	if batches < 1 || forks < batches {
		return ForkCost{}, fmt.Errorf("fork cost: %d forks in %d batches: expected at least one fork a batch", forks, batches)
	}
	tm, err := newTeam(threads, nil)
	if err != nil {
		return ForkCost{}, fmt.Errorf("fork cost: %w", err)
	}
	defer tm.close()
	f := func(int) {}
	for range forks {
		tm.fork(f)
	}
	per := forks / batches
	means := make([]time.Duration, batches)
	for b := range means {
		start := time.Now()
		for range per {
			tm.fork(f)
		}
		means[b] = time.Since(start) / time.Duration(per)
	}
	slices.Sort(means)
	return ForkCost{Threads: threads, Forks: per * batches, Batches: batches,
		Median: means[batches/2], Min: means[0], Max: means[batches-1]}, nil
}
