package report

import (
	"math"
	"slices"
)

// AvgMax is a cross-rank pair: the average and the maximum of the per-rank
// means, in microseconds.
type AvgMax struct{ Avg, Max float64 }

// WaitSkewEps is the floor of wait_skew's denominator, in microseconds: one
// nanosecond, the resolution of the samples.
const WaitSkewEps = 1e-3

// Row is one run's result: its configuration and the cross-rank metrics,
// one CSV line (see Columns for the names and order). Times in
// microseconds. A metric that cannot be computed (a pure-communication
// figure without calibration data) is NaN, written as an empty CSV cell and
// a JSON null.
type Row struct {
	Config Config
	Derived

	TIterMean, TIterP50, TIterP95 float64 // typical rank: averages of per-rank values

	TPost, TInterior, TWait, TBoundary, TPoll, TCommWindow AvgMax

	WaitFrac     float64 // t_wait_mean_avg / t_iter_mean
	WaitSkew     float64 // t_wait_mean_max / max(t_wait_mean_avg, WaitSkewEps)
	OverlapRatio float64 // the plan's overlap metric, see the package doc

	MPITestCallsMean, MPIWaitCallsMean      float64
	PollsToCompleteMean, PollsToCompleteP95 float64

	Checksum64  uint64
	BWEffective float64 // bytes_total / t_comm_window_mean_avg, bytes per microsecond

	// Beyond the plan.
	TIterMeanMax       float64 // max of per-rank t_iter means
	TPureCommMean      float64 // average over ranks of the calibration's comm window
	OSUOverlapPct      float64 // OSUOverlapPct over rank averages
	IMBNBCOverlapPct   float64 // IMBNBCOverlapPct of the rank with the longest t_ovrl
	SMBAvailabilityPct float64 // SMBAvailabilityPct over rank averages
}

// Aggregate combines the ranks' summaries into the run's row as the plan's
// "Cross-rank aggregation" defines; checksum is the all-reduced checksum.
// The result does not depend on the order of ranks.
//
// wait_frac uses the typical-rank means, t_wait_mean_avg / t_iter_mean
// (t_iter_mean being t_iter_mean_avg): since every rank runs the same
// iterations, this is the share of all ranks' time spent waiting, and it
// pairs with the t_wait and t_iter columns of the same row.
//
// overlap_ratio is avg(hidden)/avg(ideal) over ranks of the per-iteration
// terms (see the package doc). The extra figures map PhaseGap's phases onto
// each tool's terms, per rank, with t_ovrl = t_post + t_interior + t_wait
// (the post-compute-wait block as those tools time it), the tool's compute
// = t_interior (OSU's compute minus test calls = t_interior - t_poll), and
// t_pure = the mean PureComm; SMB's work_t is the mean PureWork when every
// rank measured one, else t_interior - t_poll.
func Aggregate(cfg Config, ranks []RankSummary, checksum uint64) Row {
	rs := slices.Clone(ranks)
	slices.SortStableFunc(rs, func(a, b RankSummary) int { return a.Rank - b.Rank })
	row := Row{Config: cfg, Derived: Derive(cfg), Checksum64: checksum}

	over := func(f func(*RankSummary) float64) AvgMax {
		var out AvgMax
		for i := range rs {
			v := f(&rs[i])
			out.Avg += v
			if i == 0 || v > out.Max {
				out.Max = v
			}
		}
		if len(rs) > 0 {
			out.Avg /= float64(len(rs))
		}
		return out
	}
	row.TPost = over(func(s *RankSummary) float64 { return s.Post.Mean })
	row.TInterior = over(func(s *RankSummary) float64 { return s.Interior.Mean })
	row.TWait = over(func(s *RankSummary) float64 { return s.Wait.Mean })
	row.TBoundary = over(func(s *RankSummary) float64 { return s.Boundary.Mean })
	row.TPoll = over(func(s *RankSummary) float64 { return s.Poll.Mean })
	row.TCommWindow = over(func(s *RankSummary) float64 { return s.CommWindow.Mean })
	iter := over(func(s *RankSummary) float64 { return s.Iter.Mean })
	row.TIterMean, row.TIterMeanMax = iter.Avg, iter.Max
	row.TIterP50 = over(func(s *RankSummary) float64 { return s.Iter.P50 }).Avg
	row.TIterP95 = over(func(s *RankSummary) float64 { return s.Iter.P95 }).Avg

	row.WaitFrac = ratio(row.TWait.Avg, row.TIterMean)
	row.WaitSkew = row.TWait.Max / math.Max(row.TWait.Avg, WaitSkewEps)
	row.OverlapRatio = ratio(over(func(s *RankSummary) float64 { return s.HiddenMean }).Avg,
		over(func(s *RankSummary) float64 { return s.IdealHideMean }).Avg)

	row.MPITestCallsMean = over(func(s *RankSummary) float64 { return s.TestCallsMean }).Avg
	row.MPIWaitCallsMean = over(func(s *RankSummary) float64 { return s.WaitCallsMean }).Avg
	row.PollsToCompleteMean = over(func(s *RankSummary) float64 { return s.PollsToComplete.Mean }).Avg
	row.PollsToCompleteP95 = over(func(s *RankSummary) float64 { return s.PollsToComplete.P95 }).Avg
	row.BWEffective = ratio(float64(row.BytesTotal), row.TCommWindow.Avg)

	row.TPureCommMean, row.OSUOverlapPct, row.IMBNBCOverlapPct, row.SMBAvailabilityPct =
		math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(rs) == 0 || slices.ContainsFunc(rs, func(s RankSummary) bool { return s.PureCommSamples == 0 }) {
		return row
	}
	pure := over(func(s *RankSummary) float64 { return s.PureComm.Mean }).Avg
	ovrl := over(func(s *RankSummary) float64 { return tOvrl(s) }).Avg
	row.TPureCommMean = pure
	row.OSUOverlapPct = OSUOverlapPct(ovrl, row.TInterior.Avg, row.TPoll.Avg, pure)
	worst := rs[0]
	for _, s := range rs[1:] {
		if tOvrl(&s) > tOvrl(&worst) {
			worst = s
		}
	}
	row.IMBNBCOverlapPct = IMBNBCOverlapPct(worst.PureComm.Mean, worst.Interior.Mean, tOvrl(&worst))
	work := row.TInterior.Avg - row.TPoll.Avg
	if !slices.ContainsFunc(rs, func(s RankSummary) bool { return s.PureWorkSamples == 0 }) {
		work = over(func(s *RankSummary) float64 { return s.PureWork.Mean }).Avg
	}
	row.SMBAvailabilityPct = SMBAvailabilityPct(ovrl, work, pure)
	return row
}

// tOvrl is the mean time of the post-compute-wait block.
func tOvrl(s *RankSummary) float64 { return s.Post.Mean + s.Interior.Mean + s.Wait.Mean }

// ratio is a/b, or 0 when b is not positive.
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return 0
	}
	return a / b
}

// OSUOverlapPct is the OSU Micro-Benchmarks' overlap for their non-blocking
// benchmarks (print_stats_nbc in c/util/osu_util_mpi.c, OMB 6.1:
// github.com/paklui/osu-micro-benchmarks, mirror of
// mvapich.cse.ohio-state.edu/benchmarks/; README: "the amount of
// computation that can be performed while the communication progresses in
// the background"):
//
//	overlap% = max(0, 100 - 100*(overall - (cpu - test)) / pure)
//
// overall is the time from the post to the end of MPI_Wait, cpu the compute
// between them including MPI_Test calls, test the time in those calls, pure
// the same operation's latency without compute; OSU averages each over
// iterations and then over ranks before applying it. NaN when pure <= 0.
func OSUOverlapPct(overall, cpu, test, pure float64) float64 {
	if !(pure > 0) {
		return math.NaN()
	}
	return math.Max(0, 100-100*(overall-(cpu-test))/pure)
}

// IMBNBCOverlapPct is Intel MPI Benchmarks' IMB-NBC overlap, as the IMB
// User Guide defines it ("Measuring Communication and Computation Overlap",
// intel.com/content/www/us/en/docs/mpi-library/user-guide-benchmarks/2021-8/measuring-communication-and-computation-overlap.html):
//
//	overlap% = 100 * max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU)))
//
// t_pure is the operation without compute, t_CPU the compute run
// concurrently with it, t_ovrl the post-compute-wait time; the values are
// those of the rank with the largest t_ovrl. (The source,
// github.com/intel/mpi-benchmarks src_c/IMB_output.c, divides by
// max(t_pure, t_CPU) in its NBC build since 2018; IMB sizes t_CPU to t_pure
// so the two agree there, but PhaseGap's interior is not so sized and the
// documented min keeps the figure "hidden / hideable" like overlap_ratio.)
// NaN when min(t_pure, t_CPU) <= 0.
func IMBNBCOverlapPct(tPure, tCPU, tOvrl float64) float64 {
	d := math.Min(tPure, tCPU)
	if !(d > 0) {
		return math.NaN()
	}
	return 100 * math.Max(0, math.Min(1, (tPure+tCPU-tOvrl)/d))
}

// SMBAvailabilityPct is the application availability of Sandia's SMB
// mpi_overhead benchmark (github.com/sandialabs/SMB doc/overhead.html and
// src/mpi_overhead/mpi_overhead.c, show_results): with iter_t the
// post-work-wait loop time, work_t the same work without messaging and
// base_t the message transfer time,
//
//	overhead = iter_t - work_t
//	availability% = 100 * (1 - overhead / base_t)
//
// not clamped, as SMB prints it. SMB grows the work until it dominates the
// loop; PhaseGap has one work size, its interior, so the figure matches
// SMB's only where the interior is longer than the transfer (below that,
// un-hidden transfer time counts as overhead). NaN when base_t <= 0.
func SMBAvailabilityPct(iterT, workT, baseT float64) float64 {
	if !(baseT > 0) {
		return math.NaN()
	}
	return 100 * (1 - (iterT-workT)/baseT)
}
