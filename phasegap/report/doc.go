// Package report turns PhaseGap's per-iteration samples into the
// benchmark's outputs: per-rank summaries (flat vectors that ranks gather to
// rank 0), the cross-rank results row, results.csv, manifest.json and the
// Chrome/Perfetto trace.
//
// It is pure Go and pure computation: it never reads a clock, draws a random
// number or lets map order decide an output order, so the simulator's
// samples give the same bytes as the real benchmark's would.
//
// # Units
//
// Samples are integer nanoseconds on the rank's clock. Everything this
// package writes is in microseconds (CSV, manifest, trace "ts"/"dur"),
// except counts, bytes and ratios. bw_effective is in bytes per
// microsecond (= MB/s, 10^6 B/s).
//
// # Statistics
//
// Percentiles are nearest-rank: pXX is the smallest sample such that at
// least XX% of the samples are at or below it (sorted[ceil(XX*n/100)-1]),
// always an observed value. Cross-rank, "_mean_avg" is the average of the
// per-rank means (the typical rank) and "_mean_max" their maximum (the
// bottleneck rank). The CSV's t_iter_mean/p50/p95 and the call/poll counts
// are typical-rank figures too: averages over ranks of the per-rank value.
//
// # Overlap
//
// overlap_ratio follows the plan per iteration: ideal_i = min(comm_i,
// interior_i) and hidden_i = clamp(comm_i - wait_i, 0, ideal_i); the ratio
// is then time-weighted, sum(hidden)/sum(ideal) (per rank the ratio of the
// means; across ranks the ratio of the rank averages), 0 when nothing was
// hideable. Per iteration, because min and clamp do not commute with
// averaging (a run whose comm window is sometimes longer and sometimes
// shorter than the interior would be misjudged from the means); weighted
// by time, so that near-empty iterations, whose ratio is 0 or 1 by chance,
// do not count as much as the ones that matter. Both acceptance cases hold
// exactly: phase_blk (wait == comm window) gives 0, a nonblocking run whose
// window fits in the interior and whose wait is 0 gives 1.
//
// Beyond the plan, three established overlap figures are computed from the
// same samples plus each rank's calibration passes (Rank.PureComm,
// Rank.PureWork); see OSUOverlapPct, IMBNBCOverlapPct and
// SMBAvailabilityPct for their definitions and sources.
package report
