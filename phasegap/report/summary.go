package report

import (
	"fmt"
	"math"
	"slices"
)

// Stat is the mean and the nearest-rank 50th and 95th percentiles of one
// quantity (microseconds for times).
type Stat struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
}

// RankSummary is one rank's summary of its samples; times in microseconds.
// It flattens to a fixed-length vector (Vector, SummaryFromVector) so that
// ranks can MPI_Gather it to rank 0.
type RankSummary struct {
	Rank            int
	Samples         int // measured iterations summarized
	PureCommSamples int // len(Rank.PureComm)
	PureWorkSamples int // len(Rank.PureWork)

	Post, Interior, Wait, Boundary, Poll, CommWindow, Iter Stat

	// PollsToComplete is over the iterations a test completed (those
	// with PollsToComplete > 0) only, in polls: an iteration that did
	// not poll, or whose exchange a test never found complete (it ended
	// in Waitall), has no such count, and counting it as 0 would read
	// low. PollCompleted counts those iterations, PollingIters the
	// iterations that tested at all.
	PollsToComplete Stat
	PureComm        Stat // calibration: comm window with no compute
	PureWork        Stat // calibration: interior with no communication

	TestCallsMean, WaitCallsMean float64 // per iteration

	// HiddenMean and IdealHideMean are the means of the plan's per-iteration
	// t_hidden and t_ideal_hide; overlap_ratio is their ratio.
	HiddenMean, IdealHideMean float64

	// PollingIters and PollCompleted count the iterations that tested
	// (TestCalls > 0) and those a test completed (PollsToComplete > 0).
	PollingIters, PollCompleted float64
	// CPUs is how many CPUs the rank may run on (its binding,
	// Rank.CPUs); 0 when unknown.
	CPUs float64
	// CPUSeconds is Rank.CPUSeconds: the CPU time the rank used.
	CPUSeconds float64
}

// vectorVersion heads every vector, so that ranks running different
// layouts are caught instead of misread.
const vectorVersion = 2

// VectorLen is the length of RankSummary.Vector's result.
const VectorLen = 5 + 10*3 + 8

// stats lists the Stat fields in vector order.
func (s *RankSummary) stats() []*Stat {
	return []*Stat{&s.Post, &s.Interior, &s.Wait, &s.Boundary, &s.Poll,
		&s.CommWindow, &s.Iter, &s.PollsToComplete, &s.PureComm, &s.PureWork}
}

// scalars lists the remaining float fields in vector order.
func (s *RankSummary) scalars() []*float64 {
	return []*float64{&s.TestCallsMean, &s.WaitCallsMean, &s.HiddenMean, &s.IdealHideMean,
		&s.PollingIters, &s.PollCompleted, &s.CPUs, &s.CPUSeconds}
}

// Vector flattens s: version, rank, the three counts, each Stat's
// mean/p50/p95, then the scalars; always VectorLen long.
func (s RankSummary) Vector() []float64 {
	v := make([]float64, 0, VectorLen)
	v = append(v, vectorVersion, float64(s.Rank), float64(s.Samples),
		float64(s.PureCommSamples), float64(s.PureWorkSamples))
	for _, st := range s.stats() {
		v = append(v, st.Mean, st.P50, st.P95)
	}
	for _, f := range s.scalars() {
		v = append(v, *f)
	}
	return v
}

// SummaryFromVector is the inverse of Vector. It rejects a vector of the
// wrong length or version, a non-finite value, or a count or rank that is
// not a non-negative integer.
func SummaryFromVector(v []float64) (RankSummary, error) {
	var s RankSummary
	if len(v) != VectorLen {
		return s, fmt.Errorf("report: summary vector has %d values, want %d", len(v), VectorLen)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return s, fmt.Errorf("report: summary vector value %d is %v", i, x)
		}
	}
	if v[0] != vectorVersion {
		return s, fmt.Errorf("report: summary vector version %v, want %d", v[0], vectorVersion)
	}
	ints := []*int{&s.Rank, &s.Samples, &s.PureCommSamples, &s.PureWorkSamples}
	for i, p := range ints {
		x := v[1+i]
		if x < 0 || x != math.Trunc(x) || x > math.MaxInt32 {
			return s, fmt.Errorf("report: summary vector value %d is %v, want a non-negative integer", 1+i, x)
		}
		*p = int(x)
	}
	i := 1 + len(ints)
	for _, st := range s.stats() {
		st.Mean, st.P50, st.P95 = v[i], v[i+1], v[i+2]
		i += 3
	}
	for _, f := range s.scalars() {
		*f = v[i]
		i++
	}
	return s, nil
}

// Summarize computes one rank's summary. An empty rank summarizes to zeros.
func Summarize(r Rank) RankSummary {
	s := RankSummary{Rank: r.Rank, Samples: len(r.Samples),
		PureCommSamples: len(r.PureComm), PureWorkSamples: len(r.PureWork)}
	col := func(f func(*Sample) int64) []int64 {
		out := make([]int64, len(r.Samples))
		for i := range r.Samples {
			out[i] = f(&r.Samples[i])
		}
		return out
	}
	const us = 1e3 // ns per microsecond
	s.Post = stat(col(func(x *Sample) int64 { return x.Post }), us)
	s.Interior = stat(col(func(x *Sample) int64 { return x.Interior }), us)
	s.Wait = stat(col(func(x *Sample) int64 { return x.Wait }), us)
	s.Boundary = stat(col(func(x *Sample) int64 { return x.Boundary }), us)
	s.Poll = stat(col(func(x *Sample) int64 { return x.Poll }), us)
	s.CommWindow = stat(col(func(x *Sample) int64 { return x.CommWindow }), us)
	s.Iter = stat(col(func(x *Sample) int64 { return x.Total }), us)
	var polls []int64
	for i := range r.Samples {
		x := &r.Samples[i]
		if x.TestCalls > 0 {
			s.PollingIters++
		}
		if x.PollsToComplete > 0 {
			polls = append(polls, int64(x.PollsToComplete))
		}
	}
	s.PollCompleted = float64(len(polls))
	s.PollsToComplete = stat(polls, 1)
	s.CPUs, s.CPUSeconds = float64(r.CPUs), r.CPUSeconds
	s.PureComm = stat(slices.Clone(r.PureComm), us)
	s.PureWork = stat(slices.Clone(r.PureWork), us)
	s.TestCallsMean = stat(col(func(x *Sample) int64 { return int64(x.TestCalls) }), 1).Mean
	s.WaitCallsMean = stat(col(func(x *Sample) int64 { return int64(x.WaitCalls) }), 1).Mean
	s.HiddenMean = stat(col(func(x *Sample) int64 { h, _ := hideTerms(x); return h }), us).Mean
	s.IdealHideMean = stat(col(func(x *Sample) int64 { _, i := hideTerms(x); return i }), us).Mean
	return s
}

// hideTerms returns the plan's per-iteration t_hidden and t_ideal_hide:
// ideal = min(t_comm_window, t_interior), hidden = clamp(t_comm_window -
// t_wait, 0, ideal).
func hideTerms(x *Sample) (hidden, ideal int64) {
	ideal = max(0, min(x.CommWindow, x.Interior))
	hidden = min(max(x.CommWindow-x.Wait, 0), ideal)
	return hidden, ideal
}

// stat summarizes vals (sorting them in place), dividing by scale.
func stat(vals []int64, scale float64) Stat {
	if len(vals) == 0 {
		return Stat{}
	}
	var sum int64
	for _, v := range vals {
		sum += v
	}
	slices.Sort(vals)
	return Stat{
		Mean: float64(sum) / float64(len(vals)) / scale,
		P50:  float64(NearestRank(vals, 50)) / scale,
		P95:  float64(NearestRank(vals, 95)) / scale,
	}
}

// NearestRank returns the nearest-rank p-th percentile of sorted (ascending):
// the smallest value with at least p% of the values at or below it,
// sorted[ceil(p*n/100)-1]. It returns 0 for an empty slice; p is clamped
// to [0, 100], and p = 0 gives the minimum.
func NearestRank(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	p = min(max(p, 0), 100)
	k := max((p*n+99)/100, 1)
	return sorted[k-1]
}
