// Package report writes a run directory's report.html (chronosync report):
// one self-contained HTML page, inline CSS and inline SVG figures drawn
// with gonum/plot, no script and nothing fetched. It draws what the
// directory holds: a sync run's offset error per node with its ±3σ band
// (against the ground truth, or the self-check where there is none),
// drift, round latency, edge residuals and rejected links, probe loss and
// clock steps; a traced run's collective skew before and after correction
// and violations by collective; a PhaseGap run's or sweep's plots against
// T and knees (package phasegap/plot); a peers comparison's error per
// daemon. The same directory gives the same bytes. See docs/report.md.
package report
