package halo

import (
	"math"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
)

// TestCalibrateForkFixed: runs at one N whose T = 2 steps are at the
// memory ceiling at F = 0 (T = 1 and F = 8 are not). Given the true fork_ns, the fit recovers the other
// costs and the ceiling; left to fit fork_ns too, these runs cannot tell
// a fork from the ceiling, and the fixed fit's note says what the free
// one makes of it.
func TestCalibrateForkFixed(t *testing.T) {
	truth := trueCosts() // 16 B/ns: 1 ns a point, between T = 1's 1.25 and T = 2's 0.625 at F = 0
	var rows []report.Row
	for _, r := range grid([]string{phasegap.ModeNB}, []int{1}, []int{32784, 65552}, []int{1}, []int{0, 8}, []int{0}) {
		rows = append(rows, synthRow(r, truth, nil, 0))
	}
	// T = 2 at one N and F = 0 only, as on the 2-CPU VM.
	rows = append(rows, synthRow(run{phasegap.ModeNB, 2, 65552, 1, 0, 0}, truth, nil, 0))
	got, fit, err := CalibrateWith(records(t, rows), CalibrateOptions{ForkNS: truth.ForkNS, ForkFrom: "BenchmarkTeamFork"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ForkNS != truth.ForkNS {
		t.Errorf("fork_ns %v, want the given %v", got.ForkNS, truth.ForkNS)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"point_ns", got.PointNS, truth.PointNS}, {"flop_ns", got.FlopNS, truth.FlopNS}, {"mem_bytes_per_ns", got.MemBytesPerNS, truth.MemBytesPerNS}} {
		if math.Abs(c.got-c.want) > 1e-3*c.want {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(fit.Fixed) != 1 || !strings.HasPrefix(fit.Fixed[0], "fork_ns 640 ns (BenchmarkTeamFork)") {
		t.Errorf("Fixed %q", fit.Fixed)
	}
	for _, f := range fit.Fitted {
		if f == "fork_ns" {
			t.Errorf("fork_ns fitted: %q", fit.Fitted)
		}
	}
	s := fit.String()
	for _, want := range []string{"fixed: fork_ns 640 ns", "note: fork_ns fitted from these runs alone", "1 runs with T > 1, N in {65552}",
		"cannot tell them apart", "point_ns 1.25 ± "} {
		if !strings.Contains(s, want) {
			t.Errorf("fit lacks %q:\n%s", want, s)
		}
	}
	free, _, err := Calibrate(records(t, rows))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(free.ForkNS-truth.ForkNS) < 1 {
		t.Errorf("fitted free, fork_ns %v: the runs were to leave it confounded with the ceiling (%+v)", free.ForkNS, free)
	}
	if _, _, err := CalibrateWith(records(t, rows), CalibrateOptions{ForkNS: math.NaN(), ForkFrom: "x"}); err == nil {
		t.Error("fork_ns NaN accepted")
	}
}

// TestStdErrors: a straight line's standard errors are the textbook's,
// SE(b) = σ/√Sxx and SE(a) = σ·√(1/n + x̄²/Sxx); as many points as
// unknowns leave none.
func TestStdErrors(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6}
	ys := []float64{5.1, 7.9, 11.2, 13.8, 17.1, 19.9} // about 2 + 3x
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	b := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	a := (sy - b*sx) / n
	ones := make([]float64, len(xs))
	resid := make([]float64, len(xs))
	var ss float64
	for i := range xs {
		ones[i] = 1
		resid[i] = ys[i] - a - b*xs[i]
		ss += resid[i] * resid[i]
	}
	sigma := math.Sqrt(ss / (n - 2))
	mean := sx / n
	cxx := sxx - n*mean*mean
	want := []float64{sigma * math.Sqrt(1/n+mean*mean/cxx), sigma / math.Sqrt(cxx)}
	got := stdErrors([][]float64{ones, xs}, resid)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*want[i] {
			t.Errorf("SE[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if se := stdErrors([][]float64{ones[:2], xs[:2]}, resid[:2]); !math.IsNaN(se[0]) || !math.IsNaN(se[1]) {
		t.Errorf("two points, two unknowns: SE %v, want NaN", se)
	}
	if se := stdErrors([][]float64{xs, xs}, resid); !math.IsNaN(se[0]) {
		t.Errorf("collinear columns: SE %v, want NaN", se)
	}
}

func TestDetermined(t *testing.T) {
	for _, tc := range []struct {
		d    Determined
		ok   bool
		want string
	}{
		{Determined{Name: "flop_ns", Value: 1.141, StdErr: 0.082, Runs: 9}, true, "flop_ns 1.141 ± 0.082 (7.2%, 9 runs): determined by the runs"},
		{Determined{Name: "imbalance_ns", Value: 60483, StdErr: 21652, Runs: 33}, false, "not determined by the runs (standard error above 10% of the value)"},
		{Determined{Name: "fork_ns", Value: 800, StdErr: math.NaN(), Runs: 2}, false, "fork_ns 800: not determined: 2 runs carry it"},
	} {
		if tc.d.OK() != tc.ok || !strings.Contains(tc.d.String(), tc.want) {
			t.Errorf("%+v: OK %v, %q; want %v, %q", tc.d, tc.d.OK(), tc.d.String(), tc.ok, tc.want)
		}
	}
}
