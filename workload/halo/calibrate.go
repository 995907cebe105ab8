package halo

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
)

// Fit is how Calibrate arrived at its costs: which costs the runs
// determined, which kept DefaultCosts' value and why, and how well the
// fitted model reproduces each run's interior.
type Fit struct {
	// Kernel is the kernel of the runs fitted (one kernel: Costs has one
	// point_ns).
	Kernel string
	// Fitted names the costs the runs determined, in Costs' order.
	Fitted []string
	// Kept lists each cost left at DefaultCosts' value, with why:
	// "flop_ns (no run with flops_per_point > 0)".
	Kept []string
	// Fixed lists each cost given rather than fitted, with where it came
	// from: "fork_ns 556 ns (BenchmarkTeamFork ...)".
	Fixed []string
	// Notes are the fit's other decisions (a cost pinned at 0, the
	// memory ceiling dropped).
	Notes []string
	// Determined says, for each fitted cost, how closely the runs
	// determine it (its standard error), in Costs' order.
	Determined []Determined
	// Rows are the runs of the interior fit, in input order, with the
	// fitted model's residual.
	Rows []RowFit
	// CallRows are the runs whose posts call_ns is the median of
	// (file:line).
	CallRows []string
	// Skipped are the rows the interior fit left out: "file:line: why".
	Skipped []string
	// MedianResidual and WorstResidual are the median and the largest
	// |relative residual| of t_interior over Rows; Worst is the worst
	// row's place (file:line).
	MedianResidual, WorstResidual float64
	Worst                         string
}

// RowFit is one run of the interior fit.
type RowFit struct {
	Where string // file:line
	Mode  string
	// The run's parameters: T, N, R, S, flops_per_point, bytes_per_point.
	Threads, N, Radius, Steps, Flops, Bytes int
	// MeasuredNS is t_interior_mean_avg, and ModelNS the fitted costs'
	// interior, in ns.
	MeasuredNS, ModelNS float64
	// Residual is (ModelNS − MeasuredNS) / MeasuredNS.
	Residual float64
	// MemoryBound is whether the fitted model puts the run's steps at
	// the memory ceiling rather than the arithmetic.
	MemoryBound bool
}

// The unknowns of the interior fit, in the order the fit takes them: one
// the runs cannot separate from those before it keeps DefaultCosts' value.
const (
	uPoint = iota
	uFlop
	uByte
	uFork
	uMem // ns per byte of memory traffic: 1 / mem_bytes_per_ns
	nUnknown
)

// unknownNames are the costs file's names of the unknowns.
func unknownNames() [nUnknown]string {
	return [nUnknown]string{"point_ns", "flop_ns", "byte_ns", "fork_ns", "mem_bytes_per_ns"}
}

// interiorModes are the modes whose interior is computation alone: the
// master does not test during it.
func interiorModes() []string {
	return []string{phasegap.ModeNB, phasegap.ModeBlk, phasegap.ModePersist}
}

// interior is the model's time for the interior of one iteration
// (Rank.interior): S steps, step s computing the N − 2·s·R points at
// least s·R from either end.
func (c Costs) interior(n, threads, radius, steps, flops, bytes int) time.Duration {
	var total time.Duration
	for step := 1; step <= steps; step++ {
		total += c.compute(n-2*step*radius, threads, flops, bytes)
	}
	return total
}

// calRow is one run of the interior fit.
type calRow struct {
	RowFit
	y float64 // MeasuredNS
}

// assignment says, for each row and step, whether the step is at the
// memory ceiling (true) or arithmetic (false).
type assignment [][]bool

func (a assignment) key() string {
	var b strings.Builder
	for _, row := range a {
		for _, m := range row {
			b.WriteByte('0' + bool2byte(m))
		}
		b.WriteByte('|')
	}
	return b.String()
}

func bool2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Calibrate fits Costs to the rows of PhaseGap's results CSVs: the MPI
// runs' (the simulator's and the real backend's rows are left out).
//
// The interior: t_interior_mean_avg of the runs of phase_nb, phase_blk
// and phase_persist (the modes that do not test during the interior;
// static schedule or one thread; no progress thread, whose helper shares
// the CPUs) is the model's interior, Σ over the S steps of
// ceil(points/T)·(point_ns + F·flop_ns + B·byte_ns), or, at the memory
// ceiling, points·(point_bytes + B)/mem_bytes_per_ns, plus fork_ns per
// step when T > 1. Each step is either arithmetic or at the ceiling, so
// the model is linear in (point_ns, flop_ns, byte_ns, fork_ns,
// 1/mem_bytes_per_ns) once that is decided: the fit alternates a weighted
// least-squares solve (each run weighs 1/its time, so that the relative
// residuals are minimised; each set of the costs the runs can separate
// is tried, the rest at DefaultCosts') with deciding each step's branch
// from the solution, from several starts (every step arithmetic;
// DefaultCosts' branches; for each run, the ceiling its own time
// implies), and keeps the costs with the smallest relative residuals
// under the model itself (on a tie: fewer steps at the ceiling, then
// more costs fitted). point_bytes keeps its default: times cannot
// separate it from mem_bytes_per_ns. A cost the runs do not determine
// (no run with flops_per_point > 0, none with bytes_per_point > 0, none
// with T > 1, none at the memory ceiling, or one not separable from the
// others) keeps DefaultCosts' value, and Fit says so; one fitted below 0
// is pinned at 0; when no run is at the ceiling but the default's would
// put some there, mem_bytes_per_ns is 0 (none).
//
// call_ns is the median over the nonblocking runs of t_post_mean_avg / 4:
// the model charges a post as four calls. eager_limit keeps its default.
func Calibrate(rows []report.Record) (Costs, Fit, error) {
	return CalibrateWith(rows, CalibrateOptions{})
}

// CalibrateWith is Calibrate with opt's choices: fork_ns measured by the
// fork/join benchmark rather than fitted (opt.ForkFrom set).
func CalibrateWith(rows []report.Record, opt CalibrateOptions) (Costs, Fit, error) {
	var fit Fit
	def := DefaultCosts()
	var fixed [nUnknown]bool
	if opt.ForkFrom != "" {
		if math.IsNaN(opt.ForkNS) || math.IsInf(opt.ForkNS, 0) || opt.ForkNS < 0 || opt.ForkNS > 1e12 {
			return Costs{}, Fit{}, fmt.Errorf("calibrate: fork_ns %v (%s): expected a finite number from 0 to 1e12", opt.ForkNS, opt.ForkFrom)
		}
		def.ForkNS, fixed[uFork] = opt.ForkNS, true
		fit.Fixed = append(fit.Fixed, fmt.Sprintf("fork_ns %.4g ns (%s)", opt.ForkNS, opt.ForkFrom))
	}
	var cal []calRow
	var calls []float64
	var imbalance []imbalanceRow
	kernelAt := ""
	for _, rec := range rows {
		where := fmt.Sprintf("%s:%d", rec.File, rec.Line)
		skip := func(format string, a ...any) { fit.Skipped = append(fit.Skipped, where+": "+fmt.Sprintf(format, a...)) }
		if t := rec.Transport(); t != report.WorldMPI {
			skip("transport %s: not an MPI run", t)
			continue
		}
		if rec.Str("status") == report.StatusDegraded && !opt.IncludeDegraded {
			skip("degraded (%s): the machine's times as much as the run's (--include-degraded fits it)", rec.Str("degraded_reason"))
			continue
		}
		r, err := parseCalRow(rec, where)
		if err != nil {
			return Costs{}, Fit{}, err
		}
		post, err := rec.Float("t_post_mean_avg")
		if err != nil {
			return Costs{}, Fit{}, err
		}
		if r.Mode != phasegap.ModeBlk && !math.IsNaN(post) && !math.IsInf(post, 0) && post >= 0 {
			calls = append(calls, post*1e3/4)
			fit.CallRows = append(fit.CallRows, where)
		}
		if nr, ok, err := imbalanceSample(rec, r); err != nil {
			return Costs{}, Fit{}, err
		} else if ok {
			imbalance = append(imbalance, nr)
			// The interior fit takes a fast rank's interior, which the
			// model's costs give; the slow ranks' is the imbalance's.
			r.y, r.MeasuredNS = nr.interior, nr.interior
		}
		kernel := rec.Str("kernel")
		switch {
		case !slices.Contains(interiorModes(), r.Mode):
			skip("mode %s tests during the interior (the fit takes %s)", r.Mode, strings.Join(interiorModes(), ", "))
		case rec.Str("progress") == "progress_thread":
			skip("progress_thread: its helper thread shares the CPUs, which the model does not charge")
		case r.Threads > 1 && rec.Str("omp_schedule") != "static":
			skip("omp_schedule %s: the model shares the interior statically", rec.Str("omp_schedule"))
		case math.IsNaN(r.y) || math.IsInf(r.y, 0) || r.y <= 0:
			skip("t_interior_mean_avg %v: expected a time above 0", r.y/1e3)
		case r.N-2*r.Radius <= 0:
			skip("no interior points (N %d ≤ 2·R·S = %d)", r.N, 2*r.Radius*r.Steps)
		default:
			if fit.Kernel == "" {
				fit.Kernel, kernelAt = kernel, where
			} else if kernel != fit.Kernel {
				return Costs{}, Fit{}, fmt.Errorf("%s: kernel %s, but %s has kernel %s: calibrate one kernel at a time (Costs has one point_ns)", where, kernel, kernelAt, fit.Kernel)
			}
			cal = append(cal, r)
		}
	}
	if len(cal) == 0 {
		msg := fmt.Sprintf("no usable run among %d rows: calibrating needs at least one MPI run of phase_nb, phase_blk or phase_persist (static schedule or --threads 1, no progress thread)", len(rows))
		if len(fit.Skipped) > 0 {
			n := min(len(fit.Skipped), 5)
			msg += "; skipped: " + strings.Join(fit.Skipped[:n], "; ")
			if n < len(fit.Skipped) {
				msg += fmt.Sprintf(" (and %d more)", len(fit.Skipped)-n)
			}
		}
		return Costs{}, Fit{}, errors.New(msg)
	}

	base := def
	var keptCall string
	if len(calls) > 0 {
		base.CallNS = stats.Median(calls)
	} else {
		keptCall = "call_ns (no run of a nonblocking mode: phase_nb, nb_test, phase_persist or omp_tasks)"
	}
	best, err := fitInterior(cal, base, fixed)
	if err != nil {
		return Costs{}, Fit{}, err
	}
	c := best.c
	if fixed[uFork] {
		// What these runs alone would make of fork_ns, for the record.
		free, err := fitInterior(cal, base, [nUnknown]bool{})
		if err != nil {
			return Costs{}, Fit{}, err
		}
		fit.Notes = append(fit.Notes, forkAlone(free, cal))
	}

	// What was fitted and what kept, in Costs' order.
	names := unknownNames()
	for j := range nUnknown {
		switch {
		case fixed[j]:
		case best.fitted[j]:
			fit.Fitted = append(fit.Fitted, names[j])
		case best.pinned[j] && j == uMem:
			fit.Notes = append(fit.Notes, fmt.Sprintf("mem_bytes_per_ns 0 (no ceiling): the fit gave 1/mem_bytes_per_ns %.4g, below 0", best.neg[j]))
		case best.pinned[j]:
			fit.Notes = append(fit.Notes, fmt.Sprintf("%s pinned at 0: the fit gave %.4g", names[j], best.neg[j]))
		case j == uMem && best.noCeiling:
			fit.Notes = append(fit.Notes, fmt.Sprintf("mem_bytes_per_ns 0 (no ceiling): no run is at the memory ceiling, and the default's (%g) would put some there", def.MemBytesPerNS))
		default:
			fit.Kept = append(fit.Kept, names[j]+" ("+best.why[j]+")")
		}
		if j == uMem {
			fit.Kept = append(fit.Kept, "point_bytes (times cannot separate it from mem_bytes_per_ns, which is fitted with it fixed)")
		}
	}
	if keptCall == "" {
		fit.Fitted = append(fit.Fitted, "call_ns")
	} else {
		fit.Kept = append(fit.Kept, keptCall)
	}
	fit.Kept = append(fit.Kept, "eager_limit (these runs do not measure it; ompi_info --all | grep eager_limit shows OpenMPI's)")
	if len(imbalance) > 0 {
		c.ImbalanceNS, c.ImbalanceFrac = fitImbalance(imbalance)
		fit.Determined = append(fit.Determined, imbalanceDetermined(imbalance, c.ImbalanceNS, c.ImbalanceFrac)...)
		fit.Fitted = append(fit.Fitted, "imbalance_ns", "imbalance_frac")
		fit.Notes = append(fit.Notes, fmt.Sprintf("imbalance from the interiors of %d runs on P ≥ 2 ranks (a slow rank's minus a fast one's; the interior fit takes the fast one's): %.4g ns + %.4g × interior", len(imbalance), c.ImbalanceNS, c.ImbalanceFrac))
	} else {
		fit.Kept = append(fit.Kept, "imbalance_ns (no run of phase_nb, phase_blk or phase_persist on P ≥ 2 ranks)",
			"imbalance_frac (no run of phase_nb, phase_blk or phase_persist on P ≥ 2 ranks)")
	}

	// Residuals under the model itself.
	var abs []float64
	for _, r := range cal {
		rf := r.RowFit
		rf.ModelNS = float64(c.interior(r.N, r.Threads, r.Radius, r.Steps, r.Flops, r.Bytes))
		rf.Residual = (rf.ModelNS - r.y) / r.y
		rf.MemoryBound = slices.Contains(assign(c, []calRow{r})[0], true)
		fit.Rows = append(fit.Rows, rf)
		abs = append(abs, math.Abs(rf.Residual))
		if a := math.Abs(rf.Residual); fit.Worst == "" || a > fit.WorstResidual {
			fit.WorstResidual, fit.Worst = a, rf.Where
		}
	}
	fit.MedianResidual = stats.Median(abs)
	fit.Determined = append(interiorDetermined(cal, best, c), fit.Determined...)
	if err := c.Validate(); err != nil {
		return Costs{}, Fit{}, fmt.Errorf("calibrate: the fitted costs are out of range: %w", err)
	}
	return c, fit, nil
}

// parseCalRow reads a row's parameters and t_interior, refusing values
// beyond PhaseGap's limits.
func parseCalRow(rec report.Record, where string) (calRow, error) {
	r := calRow{RowFit: RowFit{Where: where, Mode: rec.Str("mode")}}
	for _, f := range []struct {
		col    string
		to     *int
		lo, hi int
	}{
		{"T", &r.Threads, 1, phasegap.MaxThreads},
		{"N", &r.N, 1, phasegap.MaxN},
		{"radius", &r.Radius, 0, phasegap.MaxRadius},
		{"timesteps", &r.Steps, 1, phasegap.MaxSteps},
		{"flops_per_point", &r.Flops, 0, phasegap.MaxIntense},
		{"bytes_per_point", &r.Bytes, 0, phasegap.MaxIntense},
	} {
		v, err := rec.Int(f.col)
		if err != nil {
			return calRow{}, err
		}
		if v < f.lo || v > f.hi {
			return calRow{}, fmt.Errorf("%s: column %s: %d: expected %d to %d", where, f.col, v, f.lo, f.hi)
		}
		*f.to = v
	}
	us, err := rec.Float("t_interior_mean_avg")
	if err != nil {
		return calRow{}, err
	}
	r.y = us * 1e3
	r.MeasuredNS = r.y
	return r, nil
}

// candidate is one solve of the interior fit and the costs it gives.
type candidate struct {
	x      [nUnknown]float64
	fitted [nUnknown]bool
	pinned [nUnknown]bool
	neg    [nUnknown]float64 // a pinned unknown's negative solution
	why    [nUnknown]string  // why an unknown kept its default
	// noCeiling: the memory ceiling is off (mem_bytes_per_ns 0), the
	// runs showing none where the default's would be.
	noCeiling bool
	c         Costs
	ssr       float64 // Σ relative residual², under the model itself
	atCeiling int     // steps at the memory ceiling under c
}

// better reports whether a fits better than b: a smaller relative
// residual; or as small a one with fewer steps at the memory ceiling (a
// ceiling only where the runs show one); or with more costs fitted; or
// with the earlier costs fitted (point_ns before flop_ns before ...).
// Residuals within tie of each other are as small: tie is the
// rounding of compute, up to 1 ns a step.
func (a *candidate) better(b *candidate, tie float64) bool {
	tol := 1e-9*max(a.ssr, b.ssr) + tie
	if math.Abs(a.ssr-b.ssr) > tol {
		return a.ssr < b.ssr
	}
	if a.atCeiling != b.atCeiling {
		return a.atCeiling < b.atCeiling
	}
	na, nb := 0, 0
	for j := range nUnknown {
		na += int(bool2byte(a.fitted[j]))
		nb += int(bool2byte(b.fitted[j]))
	}
	if na != nb {
		return na > nb
	}
	for j := range nUnknown {
		if a.fitted[j] != b.fitted[j] {
			return a.fitted[j]
		}
	}
	return false
}

// fitInterior decides each step's branch and solves, alternately, from
// several starts (every step arithmetic; DefaultCosts' branches; the
// branches that the all-arithmetic fit gives with each run's own memory
// ceiling), and returns the candidate that fits best. An assignment of
// branches is solved once: its continuation is the same from any start.
func fitInterior(rows []calRow, base Costs, fixed [nUnknown]bool) (candidate, error) {
	allArith := make(assignment, len(rows))
	for i, r := range rows {
		allArith[i] = make([]bool, r.Steps)
	}
	var best candidate
	found := false
	seen := map[string]bool{}
	tie := rounding(rows)
	follow := func(a assignment) (candidate, error) {
		var first candidate
		for i := 0; i < 32 && !seen[a.key()]; i++ {
			seen[a.key()] = true
			cd, err := solve(rows, a, base, tie, fixed)
			if err != nil {
				return candidate{}, err
			}
			if i == 0 {
				first = cd
			}
			if !found || cd.better(&best, tie) {
				best, found = cd, true
			}
			a = assign(cd.c, rows)
		}
		return first, nil
	}
	arith, err := follow(allArith)
	if err != nil {
		return candidate{}, err
	}
	if _, err := follow(assign(base, rows)); err != nil {
		return candidate{}, err
	}
	// For each run, the ceiling that gives its measured time, with the
	// all-arithmetic fit's other costs.
	for _, r := range rows {
		d := design(r, make([]bool, r.Steps), base.PointBytes)
		var traffic float64
		for s := 1; s <= r.Steps; s++ {
			if pts := r.N - 2*s*r.Radius; pts > 0 {
				traffic += float64(pts) * (base.PointBytes + float64(r.Bytes))
			}
		}
		m := (r.y - d[uFork]*arith.x[uFork]) / traffic
		if !(m > 0) || traffic == 0 {
			continue
		}
		c := arith.costs(base)
		c.MemBytesPerNS = 1 / m
		if _, err := follow(assign(c, rows)); err != nil {
			return candidate{}, err
		}
	}
	return best, nil
}

// costs are base with the candidate's solution.
func (cd candidate) costs(base Costs) Costs {
	c := base
	c.PointNS, c.FlopNS, c.ByteNS, c.ForkNS = cd.x[uPoint], cd.x[uFlop], cd.x[uByte], cd.x[uFork]
	switch {
	case cd.noCeiling:
		c.MemBytesPerNS = 0
	case cd.fitted[uMem] || cd.pinned[uMem]:
		c.MemBytesPerNS = 0
		if m := cd.x[uMem]; m > 0 && 1/m <= 1e12 {
			c.MemBytesPerNS = 1 / m
		}
	}
	return c
}

// rounding is Σ (S ns / measured)² over rows: the relative residuals
// compute's rounding up to the ns can make.
func rounding(rows []calRow) float64 {
	var s float64
	for _, r := range rows {
		d := float64(r.Steps) / r.y
		s += d * d
	}
	return s
}

// ssr is Σ ((model − measured)/measured)² over rows under c.
func ssr(c Costs, rows []calRow) float64 {
	var s float64
	for _, r := range rows {
		d := (float64(c.interior(r.N, r.Threads, r.Radius, r.Steps, r.Flops, r.Bytes)) - r.y) / r.y
		s += d * d
	}
	return s
}

// assign decides each row's steps' branch under c, as Costs.compute
// does: at the ceiling when its memory time is the longer.
func assign(c Costs, rows []calRow) assignment {
	a := make(assignment, len(rows))
	for i, r := range rows {
		a[i] = make([]bool, r.Steps)
		if c.MemBytesPerNS <= 0 {
			continue
		}
		for s := 1; s <= r.Steps; s++ {
			pts := r.N - 2*s*r.Radius
			if pts <= 0 {
				continue
			}
			share := (pts + r.Threads - 1) / r.Threads
			arith := float64(share) * (c.PointNS + float64(r.Flops)*c.FlopNS + float64(r.Bytes)*c.ByteNS)
			a[i][s-1] = float64(pts)*(c.PointBytes+float64(r.Bytes))/c.MemBytesPerNS > arith
		}
	}
	return a
}

// design is a row's coefficients of the unknowns under a (one row's
// branches).
func design(r calRow, a []bool, pointBytes float64) [nUnknown]float64 {
	var d [nUnknown]float64
	for s := 1; s <= r.Steps; s++ {
		pts := r.N - 2*s*r.Radius
		if pts <= 0 {
			continue
		}
		share := float64((pts + r.Threads - 1) / r.Threads)
		if a[s-1] {
			d[uMem] += float64(pts) * (pointBytes + float64(r.Bytes))
		} else {
			d[uPoint] += share
			d[uFlop] += share * float64(r.Flops)
			d[uByte] += share * float64(r.Bytes)
		}
		if r.Threads > 1 {
			d[uFork]++
		}
	}
	return d
}

// separable is how much of a column must lie outside the span of the
// others fitted (relative to its norm) for the fit to take it.
const separable = 1e-6

// independent reports whether the columns js have each a part of at
// least separable outside the span of those before it (Gram–Schmidt on
// normalised columns).
func independent(cols [][]float64, js []int) bool {
	var basis [][]float64
	for _, j := range js {
		v := slices.Clone(cols[j])
		nv := norm(v)
		if nv == 0 {
			return false
		}
		scale(v, 1/nv)
		for range 2 {
			for _, q := range basis {
				axpy(v, -dot(v, q), q)
			}
		}
		nr := norm(v)
		if nr < separable {
			return false
		}
		scale(v, 1/nr)
		basis = append(basis, v)
	}
	return true
}

// solve is the best weighted least-squares fit under the branches a:
// over every set of unknowns the rows can separate, those fitted and the
// others at base's values (an unknown fitted below 0 pinned at 0), with
// the memory ceiling at base's or none when the fit does not take it.
func solve(rows []calRow, a assignment, base Costs, tie float64, fixed [nUnknown]bool) (candidate, error) {
	n := len(rows)
	cols := make([][]float64, nUnknown) // weighted: each row divided by its time
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i, r := range rows {
		d := design(r, a[i], base.PointBytes)
		for j := range nUnknown {
			cols[j][i] = d[j] / r.y
		}
	}
	var best candidate
	found := false
	for mask := range 1 << nUnknown {
		var free []int
		for j := range nUnknown {
			if mask&(1<<j) != 0 {
				free = append(free, j)
			}
		}
		if slices.ContainsFunc(free, func(j int) bool { return fixed[j] }) || !independent(cols, free) {
			continue
		}
		cd, err := solveFree(cols, free, base)
		if err != nil {
			return candidate{}, err
		}
		variants := []candidate{cd}
		if !cd.fitted[uMem] && !cd.pinned[uMem] {
			none := cd
			none.noCeiling = true
			variants = append(variants, none)
		}
		for _, v := range variants {
			v.c = v.costs(base)
			v.ssr = ssr(v.c, rows)
			for _, r := range assign(v.c, rows) {
				for _, m := range r {
					v.atCeiling += int(bool2byte(m))
				}
			}
			if !found || v.better(&best, tie) {
				best, found = v, true
			}
		}
	}
	// Why each unknown not fitted kept its default.
	var free []int
	for j := range nUnknown {
		if best.fitted[j] {
			free = append(free, j)
		}
	}
	names := unknownNames()
	for j := range nUnknown {
		switch {
		case best.fitted[j] || best.pinned[j] || fixed[j]:
		case norm(cols[j]) == 0:
			best.why[j] = zeroReason(j, rows)
		case !independent(cols, append(slices.Clone(free), j)):
			var taken []string
			for _, f := range free {
				taken = append(taken, names[f])
			}
			best.why[j] = fmt.Sprintf("not separable from %s by these runs: vary N, T, flops_per_point or bytes_per_point", strings.Join(taken, ", "))
		default:
			best.why[j] = "fitted, it would come out below 0; its default fits better"
		}
	}
	return best, nil
}

// solveFree fits the unknowns free, the others at base's values; an
// unknown fitted below 0 is pinned at 0 and the rest fitted again.
func solveFree(cols [][]float64, free []int, base Costs) (candidate, error) {
	var cd candidate
	cd.x = [nUnknown]float64{base.PointNS, base.FlopNS, base.ByteNS, base.ForkNS, 0}
	if base.MemBytesPerNS > 0 {
		cd.x[uMem] = 1 / base.MemBytesPerNS
	}
	n := len(cols[0])
	free = slices.Clone(free)
	for len(free) > 0 {
		b := make([]float64, n)
		for i := range b {
			b[i] = 1
			for j := range nUnknown {
				if !slices.Contains(free, j) {
					b[i] -= cols[j][i] * cd.x[j]
				}
			}
		}
		A := mat.NewDense(n, len(free), nil)
		norms := make([]float64, len(free))
		for k, j := range free {
			norms[k] = norm(cols[j])
			for i := range n {
				A.Set(i, k, cols[j][i]/norms[k])
			}
		}
		var x mat.VecDense
		if err := x.SolveVec(A, mat.NewVecDense(n, b)); err != nil {
			return candidate{}, fmt.Errorf("calibrate: the least-squares solve failed: %w", err)
		}
		worst := -1
		for k, j := range free {
			cd.x[j] = x.AtVec(k) / norms[k]
			if cd.x[j] < 0 && (worst < 0 || cd.x[j] < cd.x[free[worst]]) {
				worst = k
			}
		}
		if worst < 0 {
			break
		}
		j := free[worst]
		cd.pinned[j], cd.neg[j], cd.x[j] = true, cd.x[j], 0
		free = slices.Delete(free, worst, worst+1)
	}
	for _, j := range free {
		cd.fitted[j] = true
	}
	return cd, nil
}

// zeroReason says why no row has a coefficient of unknown j.
func zeroReason(j int, rows []calRow) string {
	has := func(f func(calRow) bool) bool { return slices.ContainsFunc(rows, f) }
	switch j {
	case uPoint:
		return "every run is at the memory ceiling"
	case uFlop:
		if !has(func(r calRow) bool { return r.Flops > 0 }) {
			return "no run with flops_per_point > 0"
		}
		return "every run with flops_per_point > 0 is at the memory ceiling"
	case uByte:
		if !has(func(r calRow) bool { return r.Bytes > 0 }) {
			return "no run with bytes_per_point > 0"
		}
		return "every run with bytes_per_point > 0 is at the memory ceiling"
	case uFork:
		return "no run with T > 1"
	}
	return "no run is at the memory ceiling"
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

func scale(a []float64, k float64) {
	for i := range a {
		a[i] *= k
	}
}

// axpy sets y += k·x.
func axpy(y []float64, k float64, x []float64) {
	for i := range y {
		y[i] += k * x[i]
	}
}

// String is the fit in a few lines: the runs, what was fitted, what kept
// and why, the fit's other decisions, the residuals (RowFit.String gives
// each run's).
func (f Fit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s: %d runs' interiors fitted, %d runs' posts (call_ns), %d rows skipped\n", f.Kernel, len(f.Rows), len(f.CallRows), len(f.Skipped))
	if len(f.Fitted) > 0 {
		fmt.Fprintf(&b, "fitted: %s\n", strings.Join(f.Fitted, ", "))
	}
	for _, x := range f.Fixed {
		fmt.Fprintf(&b, "fixed: %s\n", x)
	}
	for _, k := range f.Kept {
		fmt.Fprintf(&b, "kept default: %s\n", k)
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "t_interior residuals, (model − measured)/measured: median |r| %.2f%%, worst %.2f%% (%s)\n", 100*f.MedianResidual, 100*f.WorstResidual, f.Worst)
	for _, d := range f.Determined {
		fmt.Fprintf(&b, "%s\n", d)
	}
	return b.String()
}

// String is the run in one line: where, its parameters, the measured and
// the model's interior, the residual and the branch.
func (r RowFit) String() string {
	bound := "arithmetic"
	if r.MemoryBound {
		bound = "memory ceiling"
	}
	return fmt.Sprintf("%s: %s T=%d N=%d R=%d S=%d F=%d B=%d: measured %.2f µs, model %.2f µs (%+.2f%%, %s)",
		r.Where, r.Mode, r.Threads, r.N, r.Radius, r.Steps, r.Flops, r.Bytes, r.MeasuredNS/1e3, r.ModelNS/1e3, 100*r.Residual, bound)
}

// imbalanceRow is one run's evidence of the ranks' imbalance: the fast
// rank's interior and how much longer the slow rank's is, in ns.
type imbalanceRow struct{ interior, extra float64 }

// imbalanceSample reads a run's imbalance as the model has it (the odd
// ranks slow, by the same time): on P ≥ 2 ranks t_interior_mean_max is a
// slow rank's and t_interior_mean_avg the mean of all, so a slow rank's
// interior is (max − avg)·P/⌊P/2⌋ longer than a fast one's, which is max
// minus that. Modes without tests during the interior and without a
// progress thread only: those add time the model charges elsewhere.
func imbalanceSample(rec report.Record, r calRow) (imbalanceRow, bool, error) {
	if !slices.Contains(interiorModes(), r.Mode) || rec.Str("progress") == "progress_thread" {
		return imbalanceRow{}, false, nil
	}
	p, err := rec.Int("P")
	if err != nil || p < 2 {
		return imbalanceRow{}, false, err
	}
	mx, err := rec.Float("t_interior_mean_max")
	if err != nil || math.IsNaN(mx) || math.IsNaN(r.y) || r.y <= 0 || mx*1e3 < r.y {
		return imbalanceRow{}, false, err
	}
	extra := (mx*1e3 - r.y) * float64(p) / float64(p/2)
	return imbalanceRow{interior: mx*1e3 - extra, extra: extra}, true, nil
}

// fitImbalance fits extra = a + b × interior by least squares, a and b at
// least 0 (one pinned at 0 refits the other alone).
func fitImbalance(rows []imbalanceRow) (a, b float64) {
	n := float64(len(rows))
	var sx, sy, sxx, sxy float64
	for _, r := range rows {
		sx, sy, sxx, sxy = sx+r.interior, sy+r.extra, sxx+r.interior*r.interior, sxy+r.interior*r.extra
	}
	det := n*sxx - sx*sx
	if det > 0 {
		a, b = (sy*sxx-sx*sxy)/det, (n*sxy-sx*sy)/det
	}
	switch {
	case det <= 0 || b < 0: // one interior, or a spread that shrinks with it
		return max(0, sy/n), 0
	case a < 0:
		return 0, max(0, sxy/sxx)
	}
	return a, b
}
