package halo

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
)

// trueCosts are costs whose every step time is a whole number of ns on
// the synthetic grid (quarters of a ns per point, shares multiples of 4,
// N − 2·s·R multiples of 16), so that compute's rounding up to the ns
// leaves the data exact; the memory ceiling (16 B/ns) binds for some runs
// and not others.
func trueCosts() Costs {
	return Costs{PointNS: 1.25, FlopNS: 0.5, ByteNS: 0.25, ForkNS: 640, MemBytesPerNS: 16, PointBytes: 16, CallNS: 256, EagerLimit: 4096}
}

// run is one synthetic run's parameters.
type run struct {
	mode                    string
	threads, n, steps, f, b int
}

// grid is every combination of the values given, modes in turn.
func grid(modes []string, threads, ns, steps, flops, bytes []int) []run {
	var out []run
	for _, t := range threads {
		for _, n := range ns {
			for _, s := range steps {
				for _, f := range flops {
					for _, b := range bytes {
						out = append(out, run{modes[len(out)%len(modes)], t, n, s, f, b})
					}
				}
			}
		}
	}
	return out
}

const synthRadius = 8

// exactWorst bounds the residuals of a fit to exact data: compute rounds
// each step up to the ns, so costs a rounding error above the truth's
// add up to 1 ns a step (a few 1e-4 of the shortest runs here).
const exactWorst = 1e-3

// synthConfig is a full run configuration, as an MPI run records it.
func synthConfig(r run) report.Config {
	return report.Config{Params: phasegap.Params{Settings: phasegap.Settings{Mode: r.mode, Threads: r.threads,
		N: r.n, Halo: 64, Kernel: phasegap.KernelStencil3, Radius: synthRadius, Timesteps: r.steps,
		PollEvery: 1024, Progress: "inline_poll", Schedule: "static", Flops: r.f, Bytes: r.b, Iters: 100,
		Warmup: 10}, Ranks: 2, Check: true, CheckEvery: 50, Sync: "none"}, MPIThreadRequested: "funneled",
		MPIThreadProvided: "funneled", OMPPlaces: "cores", Transport: "shm", OutDir: "runs/t", RunID: "t1",
		CSVMode: "write", Manifest: true, Platform: "linux", Hostname: "h", GitSHA: "abc",
		Timestamp: "2026-01-02T03:04:05Z", MPIImpl: "Open MPI", MPIVersion: "4.1.4", Impairment: "none"}
}

// synthRow is the row of run r under costs c, its times from the model's
// compute as iterate.go sums it (in µs, as the CSV has them), each
// multiplied by 1 + noise·(a standard normal draw) when noise > 0.
func synthRow(r run, c Costs, rng *rand.Rand, noise float64) report.Row {
	cfg := synthConfig(r)
	row := report.Row{Config: cfg, Derived: report.Derive(cfg)}
	var in time.Duration
	for step := 1; step <= r.steps; step++ {
		in += c.compute(r.n-2*step*synthRadius, r.threads, r.f, r.b)
	}
	jitter := func(v float64) float64 {
		if noise > 0 {
			v *= 1 + noise*rng.NormFloat64()
		}
		return v
	}
	us := jitter(float64(in) / 1e3)
	row.TInterior = report.AvgMax{Avg: us, Max: us}
	if r.mode != phasegap.ModeBlk {
		post := jitter(4 * c.CallNS / 1e3)
		row.TPost = report.AvgMax{Avg: post, Max: post}
	}
	return row
}

// records writes rows to a results.csv and reads them back.
func records(t *testing.T, rows []report.Row) []report.Record {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteCSV(f, rows, true); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := report.ReadCSVFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// costValues are c's values by costs-file name.
func costValues(c Costs) map[string]float64 {
	out := map[string]float64{}
	for _, f := range costFields(&c) {
		if f.i != nil {
			out[f.name] = float64(*f.i)
		} else {
			out[f.name] = *f.f
		}
	}
	return out
}

// TestCalibrate: rows generated from known costs give those costs back
// (within 1e-6 exact, a few % with 2% noise); a cost the rows cannot
// determine keeps DefaultCosts' value, and the fit says why.
func TestCalibrate(t *testing.T) {
	nb := []string{phasegap.ModeNB, phasegap.ModeBlk, phasegap.ModePersist}
	full := grid(nb, []int{1, 2, 4}, []int{2048, 20480, 204800}, []int{1, 2}, []int{0, 16}, []int{0, 8})
	noCeiling := trueCosts()
	noCeiling.MemBytesPerNS = 0
	for _, tc := range []struct {
		name  string
		runs  []run
		truth Costs
		noise float64
		tol   float64
		// kept are the costs that must keep DefaultCosts' value, each
		// with the start of its reason.
		kept map[string]string
		// noCeiling: the fit must find no memory ceiling
		// (mem_bytes_per_ns 0) and say so.
		noCeiling bool
		// fittedAs are fitted costs that must take another value than
		// the truth's (a cost absorbing one kept at its default).
		fittedAs map[string]float64
		worst    float64
	}{
		{name: "exact", runs: full, truth: trueCosts(), tol: 1e-6, worst: exactWorst},
		{name: "2% noise", runs: slices.Concat(full, full, full), truth: trueCosts(), noise: 0.02, tol: 0.05, worst: 0.1},
		{name: "no flops", runs: grid(nb, []int{1, 2, 4}, []int{2048, 204800}, []int{1}, []int{0}, []int{0, 8}), truth: trueCosts(), tol: 1e-6, worst: exactWorst,
			kept: map[string]string{"flop_ns": "no run with flops_per_point > 0"}},
		{name: "no bytes", runs: grid(nb, []int{1, 2, 4}, []int{2048, 204800}, []int{1}, []int{0, 16}, []int{0}), truth: trueCosts(), tol: 1e-6, worst: exactWorst,
			kept: map[string]string{"byte_ns": "no run with bytes_per_point > 0"}},
		{name: "one thread", runs: grid(nb, []int{1}, []int{2048, 204800}, []int{1, 2}, []int{0, 16}, []int{0, 8}), truth: trueCosts(), tol: 1e-6, worst: exactWorst,
			kept: map[string]string{"fork_ns": "no run with T > 1"}, noCeiling: true},
		{name: "blocking only", runs: grid([]string{phasegap.ModeBlk}, []int{1, 2}, []int{2048, 204800}, []int{1}, []int{0, 16}, []int{0, 8}), truth: trueCosts(), tol: 1e-6, worst: exactWorst,
			kept: map[string]string{"call_ns": "no run of a nonblocking mode"}},
		{name: "one flops value", runs: grid(nb, []int{1, 2}, []int{2048, 204800}, []int{1}, []int{16}, []int{0}), truth: trueCosts(), tol: 1e-6, worst: exactWorst,
			kept:     map[string]string{"point_ns": "not separable from flop_ns, fork_ns", "byte_ns": "no run with bytes_per_point", "mem_bytes_per_ns": "no run is at the memory ceiling"},
			fittedAs: map[string]float64{"flop_ns": (1.25 + 16*0.5 - 1.1) / 16}},
		{name: "no ceiling", runs: grid(nb, []int{1, 2, 4}, []int{2048, 204800}, []int{1}, []int{0, 16}, []int{0, 8}), truth: noCeiling, tol: 1e-6, worst: exactWorst,
			noCeiling: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var rows []report.Row
			for _, r := range tc.runs {
				rows = append(rows, synthRow(r, tc.truth, rng, tc.noise))
			}
			got, fit, err := Calibrate(records(t, rows))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v\nfitted %q\nkept %q\nnotes %q\nresiduals: median %.3g worst %.3g", got, fit.Fitted, fit.Kept, fit.Notes, fit.MedianResidual, fit.WorstResidual)
			want, gotV, def := costValues(tc.truth), costValues(got), costValues(DefaultCosts())
			for name, w := range want {
				why, kept := tc.kept[name]
				switch {
				case kept || name == "point_bytes" || name == "eager_limit":
					if gotV[name] != def[name] {
						t.Errorf("%s = %v, want the default %v", name, gotV[name], def[name])
					}
					i := slices.IndexFunc(fit.Kept, func(k string) bool { return strings.HasPrefix(k, name+" (") })
					if i < 0 || !strings.Contains(fit.Kept[i], why) {
						t.Errorf("Kept %q: want %s (%s...)", fit.Kept, name, why)
					}
					if slices.Contains(fit.Fitted, name) {
						t.Errorf("%s both kept and in Fitted %v", name, fit.Fitted)
					}
				case name == "mem_bytes_per_ns" && tc.noCeiling:
					if gotV[name] != 0 || !slices.ContainsFunc(fit.Notes, func(n string) bool { return strings.HasPrefix(n, "mem_bytes_per_ns 0 (no ceiling)") }) {
						t.Errorf("%s = %v, notes %q: want 0, no ceiling", name, gotV[name], fit.Notes)
					}
				default:
					if v, ok := tc.fittedAs[name]; ok {
						w = v
					}
					if math.Abs(gotV[name]-w) > tc.tol*w {
						t.Errorf("%s = %v, want %v within %g", name, gotV[name], w, tc.tol)
					}
					if !slices.Contains(fit.Fitted, name) {
						t.Errorf("%s not in Fitted %v", name, fit.Fitted)
					}
				}
			}
			if len(fit.Rows) != len(tc.runs) || fit.WorstResidual > tc.worst || fit.MedianResidual > fit.WorstResidual {
				t.Errorf("%d rows fitted of %d; residuals median %g worst %g (%s), want worst ≤ %g", len(fit.Rows), len(tc.runs), fit.MedianResidual, fit.WorstResidual, fit.Worst, tc.worst)
			}
			if r := fit.Rows[0]; !strings.HasSuffix(r.Where, "results.csv:2") || r.MeasuredNS <= 0 {
				t.Errorf("first row %+v", r)
			}
		})
	}
}

// TestCalibrateSimulator: the simulator's own runs, with known costs,
// calibrate back to them: the fit's model is the simulator's.
func TestCalibrateSimulator(t *testing.T) {
	truth := trueCosts()
	var rows []report.Row
	for _, r := range grid([]string{phasegap.ModeNB, phasegap.ModeBlk}, []int{1, 2, 4}, []int{2048, 20480}, []int{1, 2}, []int{0, 16}, []int{0}) {
		p := phasegap.DefaultParams()
		p.Mode, p.Threads, p.N, p.Timesteps, p.Flops, p.Radius, p.Halo, p.Iters, p.Warmup = r.mode, r.threads, r.n, r.steps, r.f, synthRadius, 64, 3, 1
		row, _ := runSim(t, p, truth, time.Microsecond, 0)
		cfg := synthConfig(r)
		row.Config, row.Derived = cfg, report.Derive(cfg)
		rows = append(rows, row)
	}
	got, fit, err := Calibrate(records(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	want := truth
	want.ByteNS = DefaultCosts().ByteNS // no run with bytes_per_point > 0
	wantV, gotV := costValues(want), costValues(got)
	for name, w := range wantV {
		if math.Abs(gotV[name]-w) > 1e-6*w {
			t.Errorf("%s = %v, want %v", name, gotV[name], w)
		}
	}
	if fit.WorstResidual > exactWorst {
		t.Errorf("worst residual %g (%s)", fit.WorstResidual, fit.Worst)
	}
}

// TestCalibrateSkips: rows the interior fit cannot use are left out, each
// with its reason, and the rest fit.
func TestCalibrateSkips(t *testing.T) {
	c := trueCosts()
	var rows []report.Row
	for _, r := range grid([]string{phasegap.ModeNB}, []int{1, 2}, []int{2048, 204800}, []int{1}, []int{0, 16}, []int{0}) {
		rows = append(rows, synthRow(r, c, nil, 0))
	}
	odd := func(edit func(*report.Row)) report.Row {
		row := synthRow(run{phasegap.ModeNB, 2, 2048, 1, 0, 0}, c, nil, 0)
		edit(&row)
		return row
	}
	bad := []struct {
		row  report.Row
		want string
	}{
		{odd(func(r *report.Row) { r.Config.Transport = report.WorldSim }), "transport sim: not an MPI run"},
		{odd(func(r *report.Row) { r.Config.Params.Mode = phasegap.ModeNBTest }), "mode nb_test tests during the interior"},
		{odd(func(r *report.Row) { r.Config.Params.Progress = "progress_thread" }), "progress_thread: its helper thread"},
		{odd(func(r *report.Row) { r.Config.Params.Schedule = "dynamic" }), "omp_schedule dynamic: the model shares the interior statically"},
		{odd(func(r *report.Row) { r.TInterior.Avg = math.NaN() }), "t_interior_mean_avg NaN: expected a time above 0"},
		{odd(func(r *report.Row) { r.Config.Params.N = 16 }), "no interior points (N 16 ≤ 2·R·S = 16)"},
		// A loaded machine's run, its interior three times the costs'.
		{odd(func(r *report.Row) {
			r.Host = report.Host{Measured: true, CPUs: 2, LoadStart: 9, LoadEnd: 9}
			r.Host.Judge(1, 2)
			r.TInterior.Avg *= 3
			r.TInterior.Max *= 3
		}), "degraded (load 9.00 before the run > 2 host CPUs): the machine's times"},
	}
	for _, b := range bad {
		rows = append(rows, b.row)
	}
	got, fit, err := Calibrate(records(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(fit.Skipped) != len(bad) {
		t.Fatalf("skipped %q, want %d", fit.Skipped, len(bad))
	}
	for i, b := range bad {
		if !strings.Contains(fit.Skipped[i], b.want) || !strings.Contains(fit.Skipped[i], "results.csv:") {
			t.Errorf("skipped %q, want %q", fit.Skipped[i], b.want)
		}
	}
	// Every MPI row's post counts for call_ns, the skipped ones' too,
	// but for the degraded run's.
	if math.Abs(got.PointNS-c.PointNS) > 1e-9 || got.CallNS != c.CallNS || len(fit.CallRows) != len(rows)-2 {
		t.Errorf("point_ns %v call_ns %v from %d posts", got.PointNS, got.CallNS, len(fit.CallRows))
	}
	// --include-degraded fits the degraded run: one skip fewer, one row
	// more in the fit, and its post counted.
	fitted := len(fit.Rows)
	_, fit, err = CalibrateWith(records(t, rows), CalibrateOptions{IncludeDegraded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(fit.Skipped) != len(bad)-1 || len(fit.Rows) != fitted+1 || len(fit.CallRows) != len(rows)-1 {
		t.Errorf("with the degraded run: %d skipped, %d rows fitted (%d without), %d posts", len(fit.Skipped), len(fit.Rows), fitted, len(fit.CallRows))
	}
}

// TestCalibrateRefuses: no usable run, mixed kernels, values beyond
// PhaseGap's limits.
func TestCalibrateRefuses(t *testing.T) {
	c := trueCosts()
	good := synthRow(run{phasegap.ModeNB, 1, 2048, 1, 0, 0}, c, nil, 0)
	edit := func(f func(*report.Row)) report.Row {
		row := good
		f(&row)
		return row
	}
	for _, tc := range []struct {
		name string
		rows []report.Row
		want string
	}{
		{"nothing", nil, "no usable run among 0 rows: calibrating needs at least one MPI run of phase_nb, phase_blk or phase_persist"},
		{"only polling", []report.Row{edit(func(r *report.Row) { r.Config.Params.Mode = phasegap.ModeTasks })},
			"no usable run among 1 rows: calibrating needs at least one MPI run of phase_nb, phase_blk or phase_persist (static schedule or --threads 1, no progress thread); skipped: "},
		{"two kernels", []report.Row{good, edit(func(r *report.Row) { r.Config.Params.Kernel = phasegap.KernelAxpy })},
			"results.csv:3: kernel axpy, but "},
		{"threads 0", []report.Row{edit(func(r *report.Row) { r.Config.Params.Threads = 0 })}, "results.csv:2: column T: 0: expected 1 to 1024"},
		{"flops beyond", []report.Row{edit(func(r *report.Row) { r.Config.Params.Flops = phasegap.MaxIntense + 1 })}, "column flops_per_point: 1048577: expected 0 to 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Calibrate(records(t, tc.rows))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestCalibrateImbalance: on two ranks, the slow rank's longer interior
// (t_interior_mean_max above the average) gives the imbalance, and the
// interior fit takes the fast rank's, which the costs give.
func TestCalibrateImbalance(t *testing.T) {
	truth := trueCosts()
	truth.ImbalanceNS, truth.ImbalanceFrac = 50_000, 0.04
	var rows []report.Row
	for _, r := range grid([]string{phasegap.ModeNB, phasegap.ModeBlk}, []int{1, 2}, []int{2048, 204800}, []int{1}, []int{0, 16}, []int{0, 8}) {
		row := synthRow(r, truth, nil, 0)
		fast := row.TInterior.Avg
		slow := fast + (truth.ImbalanceNS+truth.ImbalanceFrac*fast*1e3)/1e3
		row.TInterior = report.AvgMax{Avg: (fast + slow) / 2, Max: slow}
		rows = append(rows, row)
	}
	got, fit, err := Calibrate(records(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.ImbalanceNS-truth.ImbalanceNS) > 1e-6*truth.ImbalanceNS || math.Abs(got.ImbalanceFrac-truth.ImbalanceFrac) > 1e-6 ||
		math.Abs(got.PointNS-truth.PointNS) > 1e-6*truth.PointNS {
		t.Errorf("imbalance %v ns + %v × interior, point_ns %v; want %v + %v, %v; notes %q", got.ImbalanceNS, got.ImbalanceFrac, got.PointNS, truth.ImbalanceNS, truth.ImbalanceFrac, truth.PointNS, fit.Notes)
	}
	if !slices.Contains(fit.Fitted, "imbalance_ns") || !slices.ContainsFunc(fit.Notes, func(n string) bool { return strings.HasPrefix(n, "imbalance from the interiors of 16 runs") }) {
		t.Errorf("fitted %q, notes %q", fit.Fitted, fit.Notes)
	}
}
