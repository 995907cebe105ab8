package plot

import (
	"math"
	"strings"
	"testing"
)

// pts builds points from (T, t_wait, t_interior) triples.
func pts(v ...[3]float64) []Point {
	out := make([]Point, len(v))
	for i, x := range v {
		out[i] = Point{T: int(x[0]), TWait: x[1], TInterior: x[2], WaitFrac: x[1] / (x[1] + x[2])}
	}
	return out
}

func TestKnee(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		points []Point
		wantT  int // 0: no knee
	}{
		{"empty", nil, 0},
		{"one point", pts([3]float64{1, 10, 100}), 0},
		{"no knee: the interior shrinks faster", pts([3]float64{1, 10, 400}, [3]float64{2, 20, 200}, [3]float64{4, 40, 100}), 0},
		{"knee at the second point", pts([3]float64{1, 10, 400}, [3]float64{2, 200, 300}, [3]float64{4, 400, 250}), 2},
		{"knee later", pts([3]float64{1, 10, 400}, [3]float64{2, 20, 200}, [3]float64{4, 150, 100}, [3]float64{8, 300, 90}), 4},
		{"flat", pts([3]float64{1, 50, 100}, [3]float64{2, 50, 100}, [3]float64{4, 50, 100}), 0},
		{"equal growth is no knee", pts([3]float64{1, 10, 100}, [3]float64{2, 30, 80}), 0},
		{"an interior that grows while the wait stays is no knee", pts([3]float64{1, 20, 300}, [3]float64{2, 20, 301}), 0},
		{"an interior that grows by a fork while the wait grows by a sliver is no knee", pts([3]float64{1, 31.36, 208.7}, [3]float64{2, 31.37, 209.2}, [3]float64{4, 31.37, 209.2}), 0},
		{"a wait that grows by 0.1 % of the iteration is no knee", pts([3]float64{1, 0, 1000}, [3]float64{2, 1, 1000}), 0},
		{"a wait that grows by more than 0.1 % of the iteration is", pts([3]float64{1, 0, 1000}, [3]float64{2, 1.01, 1000}), 2},
		{"the fitted fork of 249 µs still makes one (the old costs, P = 2, F = 0)", pts([3]float64{1, 31.36, 233.9}, [3]float64{2, 32.17, 382.3}), 2},
		{"a latency-bound wait that grows by what the interior shrank, rounded up, is no knee (sim, jitter_5ms_2ms, P = 2)",
			pts([3]float64{1, 4748.581, 251.419}, [3]float64{2, 4759.3625, 240.6375}), 0},
		{"unsorted T", pts([3]float64{8, 300, 90}, [3]float64{1, 10, 400}, [3]float64{4, 150, 100}, [3]float64{2, 20, 200}), 4},
		{"NaN step skipped", pts([3]float64{1, 10, 400}, [3]float64{2, nan, 200}, [3]float64{4, 400, 100}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := Knee(tc.points)
			if ok != (tc.wantT != 0) || k.T != tc.wantT {
				t.Errorf("Knee = T %d, %v; want T %d, %v", k.T, ok, tc.wantT, tc.wantT != 0)
			}
		})
	}
}

// TestKneesCountDegraded: a series' knee row counts its T values with a
// degraded run up to the knee (all of them without one).
func TestKneesCountDegraded(t *testing.T) {
	p := func(T int, wait, interior float64, degraded int) Point {
		return Point{T: T, WaitFrac: wait / (wait + interior), TWait: wait, TInterior: interior, TIter: wait + interior, Runs: 1, Degraded: degraded}
	}
	pn := []Panel{{Facet: Facet{H: 256, Mode: "phase_nb"}, Series: []Series{
		// The knee at T = 2; T = 4 is degraded too, past it.
		{Name: "knee", Points: []Point{p(1, 10, 400, 0), p(2, 400, 200, 1), p(4, 800, 100, 1)}},
		// No knee: every T counts.
		{Name: "flat", Points: []Point{p(1, 10, 400, 1), p(2, 10, 200, 0), p(4, 10, 100, 1)}},
	}}}
	got := Knees(pn)
	if len(got) != 2 || !got[0].Found || got[0].At.T != 2 || got[0].Degraded != 1 || got[1].Found || got[1].Degraded != 2 {
		t.Errorf("Knees = %+v; want the knee at T 2 with 1 degraded T, no knee with 2", got)
	}
}

func TestKneeTables(t *testing.T) {
	knees := []KneeRow{
		{Facet: Facet{H: 256, Flops: 64, Mode: "phase_nb"}, Series: "sim", Found: true,
			At: Point{T: 4, WaitFrac: 0.25, TWait: 150.5, TInterior: 1234.5678}, NT: 4},
		{Facet: Facet{H: 256, Flops: 64, Mode: "phase_nb"}, Series: "mpi a|b", NT: 3, Degraded: 2},
	}
	csv, err := KneesCSV(knees)
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := "H,flops_per_point,bytes_per_point,mode,series,T_knee,wait_frac,t_wait,t_interior,n_T,degraded_T\n" +
		"256,64,0,phase_nb,sim,4,0.25,150.5,1234.5678,4,0\n" +
		"256,64,0,phase_nb,mpi a|b,,,,,3,2\n"
	if string(csv) != wantCSV {
		t.Errorf("KneesCSV =\n%s\nwant\n%s", csv, wantCSV)
	}
	md := string(KneesMarkdown(knees))
	for _, want := range []string{
		"| H | flops_per_point |",
		"| 256 | 64 | 0 | phase_nb | sim | 4 | 0.25 | 150 | 1235 | 4 | 0 |",
		`| 256 | 64 | 0 | phase_nb | mpi a\|b | none in range | - | - | - | 3 | 2 |`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("KneesMarkdown lacks %q:\n%s", want, md)
		}
	}
}
