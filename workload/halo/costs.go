// Package halo is PhaseGap's halo exchange as protocol code: a world
// program, one rank per node in a ring, whose halos travel as stream
// messages and whose computation costs modelled time. The orchestration
// of the five modes (package phasegap's) is followed step by step: post,
// interior, completion, boundary; and the MPI semantics that decide
// overlap are modelled: messages above the eager limit go by rendezvous
// (a request to send, a clear to send, then the data), and a message
// makes progress only while its rank is inside an MPI call (posting,
// testing, waiting) unless a progress thread is on.
//
// It writes the same per-iteration samples (package phasegap/report) as
// the MPI run, so one analysis reads both.
package halo

import (
	"fmt"
	"math"
	"time"
)

// Costs is the model of a rank's computation and of its MPI library's
// per-call cost. A calibration (the MPI runs of the same machine) gives
// its values.
type Costs struct {
	// PointNS is one point of one stencil step on one thread.
	PointNS float64 `yaml:"point_ns" json:"point_ns"`
	// FlopNS and ByteNS are one extra flop and one extra streamed byte
	// per point (flops_per_point, bytes_per_point).
	FlopNS float64 `yaml:"flop_ns" json:"flop_ns"`
	ByteNS float64 `yaml:"byte_ns" json:"byte_ns"`
	// ForkNS is one fork/join of a team of more than one thread.
	ForkNS float64 `yaml:"fork_ns" json:"fork_ns"`
	// MemBytesPerNS is the rank's memory bandwidth ceiling (0: none), and
	// PointBytes the memory traffic of one point of a step: a step takes
	// at least points × PointBytes / MemBytesPerNS, however many threads.
	MemBytesPerNS float64 `yaml:"mem_bytes_per_ns" json:"mem_bytes_per_ns"`
	PointBytes    float64 `yaml:"point_bytes" json:"point_bytes"`
	// CallNS is one MPI call (a post, a test, the entry of a wait).
	CallNS float64 `yaml:"call_ns" json:"call_ns"`
	// EagerLimit is the largest message sent eagerly, in bytes; a larger
	// one goes by rendezvous.
	EagerLimit int `yaml:"eager_limit" json:"eager_limit"`
	// ImbalanceNS and ImbalanceFrac are how much longer the interior of
	// a slow rank is than a fast one's: ImbalanceNS + ImbalanceFrac × the
	// interior. Measured ranks on a shared machine do not run at one
	// speed (on this VM's two CPUs one of two ranks shares its CPU with
	// more of the rest); the faster rank then waits for the slower one
	// every iteration, whatever the mode. The model makes the odd ranks
	// the slow ones. 0 and 0, the defaults, model ranks of one speed.
	ImbalanceNS   float64 `yaml:"imbalance_ns" json:"imbalance_ns"`
	ImbalanceFrac float64 `yaml:"imbalance_frac" json:"imbalance_frac"`
}

// DefaultCosts are this machine's orders of magnitude (docs/phasegap.md):
// a stencil3 point about 1.1 ns, a fork/join of two threads 0.6 µs,
// OpenMPI's shared-memory eager limit 4 KiB.
func DefaultCosts() Costs {
	return Costs{PointNS: 1.1, FlopNS: 0.9, ByteNS: 0.1, ForkNS: 600, MemBytesPerNS: 10, PointBytes: 16, CallNS: 300, EagerLimit: 4096}
}

// Validate refuses costs that are negative or not finite.
func (c Costs) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"point_ns", c.PointNS}, {"flop_ns", c.FlopNS}, {"byte_ns", c.ByteNS}, {"fork_ns", c.ForkNS},
		{"mem_bytes_per_ns", c.MemBytesPerNS}, {"point_bytes", c.PointBytes}, {"call_ns", c.CallNS},
		{"imbalance_ns", c.ImbalanceNS}, {"imbalance_frac", c.ImbalanceFrac}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > 1e12 {
			return fmt.Errorf("costs: %s %v: expected a finite number from 0 to 1e12", f.name, f.v)
		}
	}
	if c.EagerLimit < 0 {
		return fmt.Errorf("costs: eager_limit %d: expected 0 or more bytes", c.EagerLimit)
	}
	return nil
}

// compute is the time one step of points points takes on threads
// threads, with the intensity knobs: the slowest thread's share of the
// arithmetic, or the memory traffic at the bandwidth ceiling, whichever
// is longer, plus a fork/join when the team has more than one thread.
func (c Costs) compute(points, threads, flops, bytes int) time.Duration {
	if points <= 0 {
		return 0
	}
	share := (points + threads - 1) / threads
	ns := float64(share) * (c.PointNS + float64(flops)*c.FlopNS + float64(bytes)*c.ByteNS)
	if c.MemBytesPerNS > 0 {
		ns = max(ns, float64(points)*(c.PointBytes+float64(bytes))/c.MemBytesPerNS)
	}
	if threads > 1 {
		ns += c.ForkNS
	}
	return time.Duration(math.Ceil(ns))
}
