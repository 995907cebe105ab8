// Package peers runs chrony and linuxptp as reference synchronisation
// daemons on the real backend's namespaces and reads their error.
//
// Every network namespace shares the one kernel clock, so a daemon's estimate
// of its clock's offset from its server or master should be exactly zero:
// whatever it reports is its error. The daemons run free: chronyd with -x and
// ptp4l with free_running 1, so neither ever adjusts the clock.
//
// Each daemon runs as `ip netns exec NS daemon ...` in its own process group,
// with its configuration, logs and sockets in a directory of the caller's, so
// nothing of the host's own chrony or linuxptp setup is read or touched.
// Starting daemons needs root.
//
// Compare runs chronosync (on the real backend) and each daemon pair on the
// same scenario's namespaces and links, and tabulates the percentiles of
// their |offset error| (Table: WriteText, WriteCSV, WritePlot); `chronosync
// peers` is its command. The daemons run between nodes 0 and 1 only.
package peers

import "time"

// Sample is one offset report of a daemon.
type Sample struct {
	// At is when the daemon reported it: chrony's tracking.log time (whole
	// seconds, UTC) or the time ptp4l's line was read.
	At time.Time
	// OffsetNS is the daemon's estimate of its clock's offset from its
	// server or master, in nanoseconds, positive when it believes its clock
	// is ahead. The true offset is zero, so this is the daemon's error.
	OffsetNS float64
}

// Daemon is a running synchronisation daemon.
type Daemon interface {
	// Samples returns the offset reports collected so far, in order, and
	// the number of report lines that were malformed and skipped.
	Samples() (samples []Sample, malformed int, err error)
	// Stop ends the daemon and every process it started. It reports an
	// error if the daemon had already exited by itself. Calls after the
	// first return the first's result.
	Stop() error
}
