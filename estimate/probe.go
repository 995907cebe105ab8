// Package estimate fits one edge's clock model, drift (alpha) and offset
// (beta), from a window of four-timestamp probes.
//
// For an edge src→dst, the dst clock minus the src clock, as a function of
// the src clock x, is modelled over the window as the line
// y = Alpha·(x − Origin) + Beta. Each probe gives a forward point
// (T1, T2−T1), which lies above the line by the forward one-way delay, a
// reverse point (T4, T3−T4), below it by the reverse delay, and a midpoint
// ((T1+T4)/2, ((T2−T1)+(T3−T4))/2), off the line by half the delay
// asymmetry. All arithmetic is done on x − Origin.
//
// Three estimators are offered (see Kind): least squares through the
// midpoints (Regression), least squares through the minimum-delay midpoints
// (MinFilter), and the exact maximum-margin line between the forward and
// reverse points (SVM), refined where the delay floor is soft. Before fitting, Estimate keeps only complete pairs,
// cuts the window after the last clock step it detects, and may keep only
// the pure pairs (see Purity).
//
// No estimator can see a constant path asymmetry: with forward delay
// d_fwd and reverse delay d_rev, every estimate of Beta is off by
// +(d_fwd − d_rev)/2.
//
// Estimate is deterministic: the same probes and options give the same Fit,
// bit for bit.
package estimate

import "strconv"

// Probe is one answered probe of an edge src→dst: T1 is src's clock when the
// request left, T2 dst's clock when it arrived, T3 dst's clock when the reply
// left, T4 src's clock when the reply arrived. Probes are sent in
// back-to-back pairs; the two probes of a pair share Pair and have Slot 0
// and 1. T3Source says where T3 came from; the estimators do not read it.
type Probe struct {
	T1, T2, T3, T4 int64
	Pair           uint32
	Slot           uint8
	T3Source       T3Source
}

// T3Source says where a probe's T3 came from.
type T3Source uint8

const (
	// T3Unrecorded: not recorded (a probes.bin of schema 1, a probe made
	// by hand).
	T3Unrecorded T3Source = iota
	// T3User: dst's clock read in user space just before it sent the
	// reply, so the reply's send path (tens of µs on a VM) is in it; or
	// the user-space fallback of a transmit timestamp that came too late.
	T3User
	// T3Kernel: the reply's transmit timestamp as the world returned it
	// (the kernel's software transmit timestamp on the real backend, the
	// send instant in the simulator), carried in dst's next reply.
	T3Kernel
)

// String returns "unrecorded", "user" or "kernel".
func (s T3Source) String() string {
	switch s {
	case T3Unrecorded:
		return "unrecorded"
	case T3User:
		return "user"
	case T3Kernel:
		return "kernel"
	}
	return "T3Source(" + strconv.Itoa(int(s)) + ")"
}
