package halo

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/chronosync/chronosync/analysis/stats"
)

// CalibrateOptions are CalibrateWith's choices beyond the rows.
type CalibrateOptions struct {
	// ForkNS is fork_ns as the fork/join benchmark measured it
	// (phasegap.MeasureForkCost, BenchmarkTeamFork), and ForkFrom where
	// it came from. With ForkFrom set, fork_ns is taken as given, not
	// fitted: the interiors of runs with T > 1 at one N cannot separate
	// a fork's fixed cost from the memory ceiling's, and a fit then puts
	// whatever T > 1 costs beyond the arithmetic into the fork (249 µs
	// a fork/join on this VM, against 0.6–0.9 µs measured). Empty: fit
	// it, as Calibrate does.
	ForkNS   float64
	ForkFrom string
	// IncludeDegraded fits the runs whose results say degraded (status:
	// a loaded or oversubscribed machine, CPU steal) too; by default
	// they are skipped, their times being the machine's as much as the
	// benchmark's.
	IncludeDegraded bool
}

// DeterminedWithin is the relative standard error up to which a fitted
// cost counts as determined by the runs.
const DeterminedWithin = 0.10

// Determined is how closely the runs determine one fitted cost: its
// standard error from the weighted least squares (the residuals' variance
// times the diagonal of (AᵀA)⁻¹), in the cost's own units.
type Determined struct {
	Name  string
	Value float64
	// StdErr is the standard error; NaN when the runs are no more than
	// the costs fitted (no residual to judge them by).
	StdErr float64
	// Runs is how many runs have a part of their time in this cost.
	Runs int
}

// OK reports whether the runs determine the cost: a standard error of
// at most DeterminedWithin of its value.
func (d Determined) OK() bool {
	return !math.IsNaN(d.StdErr) && d.StdErr <= DeterminedWithin*math.Abs(d.Value)
}

// String is the cost, its standard error and the verdict in one line.
func (d Determined) String() string {
	if math.IsNaN(d.StdErr) {
		return fmt.Sprintf("%s %.4g: not determined: %d runs carry it, no more than the costs fitted, so nothing measures its error", d.Name, d.Value, d.Runs)
	}
	rel := 0.0
	switch {
	case d.Value != 0:
		rel = d.StdErr / math.Abs(d.Value)
	case d.StdErr > 0:
		rel = math.Inf(1)
	}
	verdict := "determined by the runs"
	if !d.OK() {
		verdict = fmt.Sprintf("not determined by the runs (standard error above %.0f%% of the value)", 100*DeterminedWithin)
	}
	return fmt.Sprintf("%s %.4g ± %.2g (%.1f%%, %d runs): %s", d.Name, d.Value, d.StdErr, 100*rel, d.Runs, verdict)
}

// stdErrors are the standard errors of a least-squares fit with design
// columns cols (n rows each) and residuals resid: √(σ²·diag((AᵀA)⁻¹)),
// σ² = Σ resid² / (n − k). NaN for every one when n ≤ k or AᵀA is
// singular.
func stdErrors(cols [][]float64, resid []float64) []float64 {
	k, n := len(cols), len(resid)
	out := make([]float64, k)
	for i := range out {
		out[i] = math.NaN()
	}
	if k == 0 || n <= k {
		return out
	}
	ata := mat.NewDense(k, k, nil)
	for a := range k {
		for b := range k {
			ata.Set(a, b, dot(cols[a], cols[b]))
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(ata); err != nil {
		return out
	}
	s2 := dot(resid, resid) / float64(n-k)
	for j := range k {
		if v := s2 * inv.At(j, j); v >= 0 {
			out[j] = math.Sqrt(v)
		}
	}
	return out
}

// interiorDetermined is the standard error of each cost the interior fit
// took (best.fitted), under the branches c gives each step, weighted as
// the fit is (each run by 1/its time).
func interiorDetermined(rows []calRow, best candidate, c Costs) []Determined {
	a := assign(c, rows)
	names := unknownNames()
	var js []int
	for j := range nUnknown {
		if best.fitted[j] {
			js = append(js, j)
		}
	}
	cols := make([][]float64, len(js))
	runs := make([]int, len(js))
	resid := make([]float64, len(rows))
	for k := range cols {
		cols[k] = make([]float64, len(rows))
	}
	for i, r := range rows {
		d := design(r, a[i], c.PointBytes)
		for k, j := range js {
			cols[k][i] = d[j] / r.y
			if d[j] != 0 {
				runs[k]++
			}
		}
		resid[i] = (float64(c.interior(r.N, r.Threads, r.Radius, r.Steps, r.Flops, r.Bytes)) - r.y) / r.y
	}
	se := stdErrors(cols, resid)
	var out []Determined
	for k, j := range js {
		d := Determined{Name: names[j], Value: best.x[j], StdErr: se[k], Runs: runs[k]}
		if j == uMem && best.x[j] > 0 {
			// The fit's unknown is 1/mem_bytes_per_ns; the relative
			// error of its inverse is the same to first order.
			d.Value = 1 / best.x[j]
			d.StdErr = se[k] / best.x[j] * d.Value
		}
		out = append(out, d)
	}
	return out
}

// imbalanceDetermined is the standard errors of fitImbalance's a and b
// (extra = a + b × interior, unweighted).
func imbalanceDetermined(rows []imbalanceRow, a, b float64) []Determined {
	ones, xs, resid := make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		ones[i], xs[i] = 1, r.interior
		resid[i] = r.extra - (a + b*r.interior)
	}
	se := stdErrors([][]float64{ones, xs}, resid)
	return []Determined{
		{Name: "imbalance_ns", Value: a, StdErr: se[0], Runs: len(rows)},
		{Name: "imbalance_frac", Value: b, StdErr: se[1], Runs: len(rows)},
	}
}

// forkAlone says what the runs alone make of fork_ns (the fit free), and
// which runs carry it, beside the fixed value taken.
func forkAlone(free candidate, rows []calRow) string {
	var ns, fs, bs []int
	n := 0
	for _, r := range rows {
		if r.Threads > 1 {
			n++
			if !slices.Contains(ns, r.N) {
				ns = append(ns, r.N)
			}
			if !slices.Contains(fs, r.Flops) {
				fs = append(fs, r.Flops)
			}
			if !slices.Contains(bs, r.Bytes) {
				bs = append(bs, r.Bytes)
			}
		}
	}
	if n == 0 {
		return "fork_ns: no run with T > 1, so these runs could not fit it either"
	}
	slices.Sort(ns)
	slices.Sort(fs)
	var abs []float64
	for _, r := range rows {
		m := float64(free.c.interior(r.N, r.Threads, r.Radius, r.Steps, r.Flops, r.Bytes))
		abs = append(abs, math.Abs(m-r.y)/r.y)
	}
	fitted := "kept its default"
	if free.fitted[uFork] {
		fitted = fmt.Sprintf("would be %.4g ns", free.c.ForkNS)
	}
	why := ""
	if len(ns) == 1 && len(fs) == 1 && len(bs) == 1 {
		why = "; at one N and one intensity a fork's fixed cost and a memory ceiling both add a constant, so these runs cannot tell them apart"
	}
	return fmt.Sprintf("fork_ns fitted from these runs alone %s (median |residual| %.2f%%, mem_bytes_per_ns %.4g): %d runs with T > 1, N in {%s}, flops_per_point in {%s}%s",
		fitted, 100*stats.Median(abs), free.c.MemBytesPerNS, n, joinInts(ns), joinInts(fs), why)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
