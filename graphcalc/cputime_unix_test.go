//go:build unix

package graphcalc_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, or
// −1 where it cannot tell: benchmarks report it beside the wall time,
// which a shared machine inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
