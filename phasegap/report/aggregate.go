package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// AvgMax is a cross-rank pair: the average and the maximum of the per-rank
// means, in microseconds.
type AvgMax struct{ Avg, Max float64 }

// Pct is one phase's percentiles across ranks: the average and the
// maximum of the per-rank nearest-rank p50 and p95, in microseconds.
type Pct struct{ P50, P95 AvgMax }

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

	// The phases' percentiles (t_iter's averages are TIterP50/TIterP95
	// too).
	TIterPct, TPostPct, TInteriorPct, TWaitPct, TBoundaryPct, TPollPct, TCommWindowPct Pct

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

	// The inputs of the IMB-NBC figure (that rank's t_ovrl, t_pure and
	// t_CPU) and of SMB's (iter_t, work_t, base_t: rank averages), so
	// that both can be recomputed from the row.
	IMBTOvrl, IMBTPure, IMBTCPU  float64
	SMBIterT, SMBWorkT, SMBBaseT float64

	// HiddenFrac is the share of the pure exchange's time that the run
	// hid (see HiddenFrac); NaN without a pure-communication pass.
	HiddenFrac float64
	// PollsCompletedFrac is the share of the iterations that tested
	// whose exchange a test found complete (the rest ended in Waitall);
	// NaN when no iteration tested.
	PollsCompletedFrac float64
	// RankCPUs is the fewest CPUs a rank could run on (its binding); 0
	// when no rank said.
	RankCPUs int
	// Host is the machine's conditions around the run, measured by the
	// caller (an MPI run); a model run leaves it unmeasured.
	Host Host
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
	pct := func(f func(*RankSummary) Stat) Pct {
		return Pct{P50: over(func(s *RankSummary) float64 { return f(s).P50 }),
			P95: over(func(s *RankSummary) float64 { return f(s).P95 })}
	}
	row.TIterPct = pct(func(s *RankSummary) Stat { return s.Iter })
	row.TPostPct = pct(func(s *RankSummary) Stat { return s.Post })
	row.TInteriorPct = pct(func(s *RankSummary) Stat { return s.Interior })
	row.TWaitPct = pct(func(s *RankSummary) Stat { return s.Wait })
	row.TBoundaryPct = pct(func(s *RankSummary) Stat { return s.Boundary })
	row.TPollPct = pct(func(s *RankSummary) Stat { return s.Poll })
	row.TCommWindowPct = pct(func(s *RankSummary) Stat { return s.CommWindow })

	row.WaitFrac = ratio(row.TWait.Avg, row.TIterMean)
	row.WaitSkew = row.TWait.Max / math.Max(row.TWait.Avg, WaitSkewEps)
	row.OverlapRatio = ratio(over(func(s *RankSummary) float64 { return s.HiddenMean }).Avg,
		over(func(s *RankSummary) float64 { return s.IdealHideMean }).Avg)

	row.MPITestCallsMean = over(func(s *RankSummary) float64 { return s.TestCallsMean }).Avg
	row.MPIWaitCallsMean = over(func(s *RankSummary) float64 { return s.WaitCallsMean }).Avg
	row.PollsToCompleteMean, row.PollsToCompleteP95, row.PollsCompletedFrac = pollFigures(rs)
	for _, s := range rs {
		if c := int(s.CPUs); c > 0 && (row.RankCPUs == 0 || c < row.RankCPUs) {
			row.RankCPUs = c
		}
	}
	row.BWEffective = ratio(float64(row.BytesTotal), row.TCommWindow.Avg)

	row.TPureCommMean, row.OSUOverlapPct, row.IMBNBCOverlapPct, row.SMBAvailabilityPct, row.HiddenFrac =
		math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	row.IMBTOvrl, row.IMBTPure, row.IMBTCPU = math.NaN(), math.NaN(), math.NaN()
	row.SMBIterT, row.SMBWorkT, row.SMBBaseT = math.NaN(), math.NaN(), math.NaN()
	if len(rs) == 0 || slices.ContainsFunc(rs, func(s RankSummary) bool { return s.PureCommSamples == 0 }) {
		return row
	}
	pure := over(func(s *RankSummary) float64 { return s.PureComm.Mean }).Avg
	ovrl := over(func(s *RankSummary) float64 { return tOvrl(s) }).Avg
	row.TPureCommMean = pure
	row.HiddenFrac = HiddenFrac(row.TWait.Avg, pure)
	row.OSUOverlapPct = OSUOverlapPct(ovrl, row.TInterior.Avg, row.TPoll.Avg, pure)
	worst := rs[0]
	for _, s := range rs[1:] {
		if tOvrl(&s) > tOvrl(&worst) {
			worst = s
		}
	}
	row.IMBTOvrl, row.IMBTPure, row.IMBTCPU = tOvrl(&worst), worst.PureComm.Mean, worst.Interior.Mean
	row.IMBNBCOverlapPct = IMBNBCOverlapPct(row.IMBTPure, row.IMBTCPU, row.IMBTOvrl)
	work := row.TInterior.Avg - row.TPoll.Avg
	if !slices.ContainsFunc(rs, func(s RankSummary) bool { return s.PureWorkSamples == 0 }) {
		work = over(func(s *RankSummary) float64 { return s.PureWork.Mean }).Avg
	}
	row.SMBIterT, row.SMBWorkT, row.SMBBaseT = ovrl, work, pure
	row.SMBAvailabilityPct = SMBAvailabilityPct(ovrl, work, pure)
	return row
}

// pollFigures are polls_to_complete's mean and p95 over the iterations
// a test completed, and the share of the testing iterations that a test
// completed: the mean weighted by each rank's completed iterations, the
// p95 averaged over the ranks that had any. NaN where nothing counts.
func pollFigures(rs []RankSummary) (mean, p95, frac float64) {
	var n, polling, p95sum float64
	ranks := 0
	for _, s := range rs {
		polling += s.PollingIters
		if s.PollCompleted > 0 {
			n += s.PollCompleted
			mean += s.PollsToComplete.Mean * s.PollCompleted
			p95sum += s.PollsToComplete.P95
			ranks++
		}
	}
	if n == 0 {
		mean, p95 = math.NaN(), math.NaN()
	} else {
		mean, p95 = mean/n, p95sum/float64(ranks)
	}
	if frac = math.NaN(); polling > 0 {
		frac = n / polling
	}
	return mean, p95, frac
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

// IMBNBCOverlapPct is Intel MPI Benchmarks' IMB-NBC overlap as IMB's
// source computes it: IMB_display_times in src_c/IMB_output.c, built with
// NBC (github.com/intel/mpi-benchmarks, 2019 and since):
//
//	overlap% = 100 * max(0, min(1, (t_pure + t_CPU - t_ovrl) / max(t_pure, t_CPU)))
//
// t_pure is the operation without compute, t_CPU the compute run
// concurrently with it, t_ovrl the post-compute-wait time; the values are
// those of the rank with the largest t_ovrl (IMB takes that rank's
// three). The IMB User Guide ("Measuring Communication and Computation
// Overlap") and IMB's non-NBC branch of the same function divide by
// min(t_pure, t_CPU) instead; IMB sizes t_CPU to t_pure, where the two
// agree, but PhaseGap's interior is not so sized: with an interior far
// longer than the exchange, IMB's figure is the share of the longer of
// the two that the overlap saved, and reads near 0. NaN when
// max(t_pure, t_CPU) <= 0.
func IMBNBCOverlapPct(tPure, tCPU, tOvrl float64) float64 {
	d := math.Max(tPure, tCPU)
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

// PercentileLine is the row's phase percentiles as one line of text, for
// a run's stdout: for each phase the p50 and the p95 (averages over
// ranks of each rank's nearest-rank values) and, in parentheses, the
// largest rank's p95, in µs.
func (r *Row) PercentileLine() string {
	var b strings.Builder
	b.WriteString("µs p50/p95 (max rank p95):")
	for _, ph := range []struct {
		name string
		p    Pct
	}{{"iter", r.TIterPct}, {"post", r.TPostPct}, {"interior", r.TInteriorPct}, {"wait", r.TWaitPct},
		{"boundary", r.TBoundaryPct}, {"poll", r.TPollPct}, {"comm window", r.TCommWindowPct}} {
		fmt.Fprintf(&b, "  %s %.2f/%.2f (%.2f)", ph.name, ph.p.P50.Avg, ph.p.P95.Avg, ph.p.P95.Max)
	}
	return b.String()
}
