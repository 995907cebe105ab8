// Package busy measures how busy the machine is while a real-time test
// runs, so that a test which cannot tell a slow machine from a failure can
// say which it was. A real-time test asserts a property, not a timing, where
// it can; where it cannot (a reference daemon's sample rate, a cluster that
// must form within its run), it starts a Meter, and when the property did
// not hold while the CPUs were busy nearly all the time, it skips with the
// measurement ("machine too busy: ...") instead of failing a correct build.
// On a machine with CPU to spare the same test fails.
//
// The measure is the share of CPU time spent busy (user, system, interrupt
// and steal time) between Start and Reading, from the kernel's own
// accounting in /proc/stat. Two cheaper looking measures mislead here:
// timer wakeups stay prompt on a loaded machine (the scheduler favours a
// task that wakes from sleep: p99 a few ms on 2 CPUs with load 5) while the
// work between them waits; and procs_running, sampled, counts the bursts of
// threads that a test's own processes wake together (four chronosync nodes
// read 4 runnable tasks on average on 2 CPUs that were half idle).
package busy

import (
	"fmt"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/hostload"
)

// MaxShare is the busy share of CPU time from which the machine counts as
// too busy for a test's timing: above it a task that wakes seldom finds an
// idle CPU and waits out other tasks' time slices (milliseconds each), where
// the deadlines of the real-time tests go. The tests' own processes on a
// machine with nothing else running stay well below it (TestNodeCluster's
// four nodes and the test: 48 to 61% of 2 CPUs); beside two CPU hogs on 2
// CPUs it reads 99 to 100%.
const MaxShare = 0.9

// Meter measures the machine's CPU time from Start to each Reading.
type Meter struct {
	start time.Time
	first hostload.CPUTimes
	err   error // why /proc/stat could not be read at Start
}

// Start starts a Meter.
func Start() *Meter {
	first, err := hostload.ReadCPUTimes()
	return &Meter{start: time.Now(), first: first, err: err}
}

// Reading is what a Meter measured.
type Reading struct {
	Span  time.Duration // from Start to the Reading
	CPUs  int
	Share float64 // of the CPUs' time, spent busy; 0 without a measurement
	Err   error   // why nothing could be measured (no /proc/stat, too short a span)
}

// Reading returns what m measured from Start until now.
func (m *Meter) Reading() Reading {
	r := Reading{Span: time.Since(m.start), Err: m.err}
	if m.err != nil {
		return r
	}
	now, err := hostload.ReadCPUTimes()
	if err != nil {
		r.Err = err
		return r
	}
	busy := now.Busy - m.first.Busy
	total := busy + now.Idle - m.first.Idle
	if total <= 0 {
		r.Err = fmt.Errorf("no CPU time accounted in %v", r.Span)
		return r
	}
	r.CPUs, r.Share = now.CPUs, float64(busy)/float64(total)
	return r
}

// Busy reports whether the CPUs were busy at least MaxShare of the time.
// Without a measurement the machine does not count as busy, so that the
// test fails as it would without a Meter.
func (r Reading) Busy() bool { return r.Err == nil && r.Share >= MaxShare }

func (r Reading) String() string {
	if r.Err != nil {
		return fmt.Sprintf("no measurement of the machine's load (%v)", r.Err)
	}
	return fmt.Sprintf("%d CPUs %.0f%% busy over %v (/proc/stat)", r.CPUs, 100*r.Share, r.Span.Round(100*time.Millisecond))
}

// SkipIfBusy skips t when the machine was busy, with the measurement and
// what the test could not judge (what: "no round with all four nodes within
// 6s"); otherwise it logs the measurement and returns, and the test goes on
// to fail. The skip is recorded as the skips of ci/needs are, so that make
// test lists it.
func (m *Meter) SkipIfBusy(t testing.TB, what string) {
	t.Helper()
	r := m.Reading()
	if r.Busy() {
		needs.Skip(t, fmt.Sprintf("machine too busy: %s; %s", r, what))
		return
	}
	t.Logf("machine not busy: %s", r)
}
