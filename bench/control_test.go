package bench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
)

// controlScenario is the control plane's overhead run at n nodes: the sync
// protocol in master-controlled rounds over random 8-regular links (a full
// mesh below 9 nodes) of 50 µs and 10 Gbit/s, every node's interface at
// 10 Gbit/s (links.nic: the gather queues at the master's), probes sparse
// (every 10 ms on each edge: the probes are not what is measured), four
// rounds of 200 ms windows.
func controlScenario(n int) string {
	topo := "{kind: random_regular, degree: 8}"
	if n <= 8 {
		topo = "{kind: full_mesh}"
	}
	return fmt.Sprintf(`name: control-%d
seed: 1
duration: 1s
nodes: %d
clocks:
  default: {offset: "uniform(-1ms, 1ms)", drift_ppm: "uniform(-50, 50)"}
topology: %s
links:
  nic: 10gbit
  default: {delay: 50us, rate: {rate: 10gbit}}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 10ms, window: 200ms, rounds: 4}
`, n, n, topo)
}

// controlRow is one N's round overhead.
type controlRow struct {
	N                int
	EndToStart       float64 // ROUND_END → ROUND_START, p50, µs
	GatherWait       float64 // ROUND_END → last report, p50, µs
	BytesPerRound    float64 // the reports gathered a round
	Rounds, Unsolved int
}

// TestControlOverhead runs the sync protocol's control plane at several N
// (CHRONOSYNC_CONTROL_N, default 8,64,512,4096) and writes, into
// CHRONOSYNC_CONTROL_OUT, the round overhead against N (overhead.md, a
// table with fits of a + b·log2 N and a + b·N; overhead.png) and each
// run's directory. It is make control's, not make test's (minutes): it
// skips without CHRONOSYNC_CONTROL_OUT. Every run must complete its
// rounds.
func TestControlOverhead(t *testing.T) {
	out := os.Getenv("CHRONOSYNC_CONTROL_OUT")
	if out == "" {
		t.Skip("the control plane's overhead against N takes minutes: make control")
	}
	ns := []int{8, 64, 512, 4096}
	if s := os.Getenv("CHRONOSYNC_CONTROL_N"); s != "" {
		ns = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				t.Fatalf("CHRONOSYNC_CONTROL_N %q: expected node counts ≥ 2, comma-separated", s)
			}
			ns = append(ns, n)
		}
	}
	var rows []controlRow
	for _, n := range ns {
		name := fmt.Sprintf("control-%d", n)
		sc, err := scenario.Parse(name+".yaml", []byte(controlScenario(n)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := harness.Run(sc, harness.Options{Out: filepath.Join(out, name)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sy := res.Summary.Sync
		if sy == nil || sy.Rounds != 4 {
			t.Fatalf("%s: %+v rounds, want 4", name, sy)
		}
		c := sy.Control
		r := controlRow{N: n, EndToStart: c.EndToStart.P50 / 1e3, GatherWait: c.GatherWait.P50 / 1e3,
			BytesPerRound: c.MessageBytes.Mean, Rounds: sy.Rounds, Unsolved: len(c.Errors)}
		rows = append(rows, r)
		t.Logf("N %d: ROUND_END→ROUND_START p50 %.1f µs, gather wait %.1f µs, %.0f bytes a round", n, r.EndToStart, r.GatherWait, r.BytesPerRound)
	}
	md, err := controlReport(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "overhead.md"), md, 0o644); err != nil {
		t.Fatal(err)
	}
	png, err := controlPlot(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "overhead.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", md)
}

// lineFit is y = A + B·x by least squares, with R².
type lineFit struct{ A, B, R2 float64 }

func fitLine(x, y []float64) lineFit {
	a, b := stat.LinearRegression(x, y, nil, false)
	return lineFit{A: a, B: b, R2: stat.RSquared(x, y, nil, a, b)}
}

// controlFits fits the overhead against log2 N and against N.
func controlFits(rows []controlRow) (logFit, linFit lineFit) {
	var lx, nx, y []float64
	for _, r := range rows {
		lx, nx, y = append(lx, math.Log2(float64(r.N))), append(nx, float64(r.N)), append(y, r.EndToStart)
	}
	return fitLine(lx, y), fitLine(nx, y)
}

// controlReport is overhead.md: the table and both fits.
func controlReport(rows []controlRow) ([]byte, error) {
	if len(rows) < 2 {
		return nil, fmt.Errorf("%d node counts: a fit needs two or more", len(rows))
	}
	var b bytes.Buffer
	b.WriteString("| N | ROUND_END→ROUND_START p50 (µs) | gather wait p50 (µs) | the rest: the master's solve (µs) | bytes gathered a round |\n|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.0f |\n", r.N, r.EndToStart, r.GatherWait, r.EndToStart-r.GatherWait, r.BytesPerRound)
	}
	lg, ln := controlFits(rows)
	fmt.Fprintf(&b, "\nfit a + b·log2 N: a %.1f µs, b %.1f µs, R² %.3f\n", lg.A, lg.B, lg.R2)
	fmt.Fprintf(&b, "fit a + b·N: a %.1f µs, b %.3f µs, R² %.3f\n", ln.A, ln.B, ln.R2)
	return b.Bytes(), nil
}

// controlPlot draws the overhead against N (log axis) with both fits.
func controlPlot(rows []controlRow) ([]byte, error) {
	p := gplot.New()
	p.Title.Text = "round overhead (ROUND_END→ROUND_START p50) against N"
	p.X.Label.Text = "N (nodes, log scale)"
	p.Y.Label.Text = "µs"
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	pts := make(plotter.XYs, len(rows))
	for i, r := range rows {
		pts[i] = plotter.XY{X: float64(r.N), Y: r.EndToStart}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	p.Add(sc)
	p.Legend.Add("measured", sc)
	lg, ln := controlFits(rows)
	for i, f := range []struct {
		name string
		fn   func(x float64) float64
	}{
		{fmt.Sprintf("%.0f + %.0f·log2 N µs (R² %.2f)", lg.A, lg.B, lg.R2), func(x float64) float64 { return lg.A + lg.B*math.Log2(x) }},
		{fmt.Sprintf("%.0f + %.2f·N µs (R² %.2f)", ln.A, ln.B, ln.R2), func(x float64) float64 { return ln.A + ln.B*x }},
	} {
		var xs plotter.XYs
		lo, hi := float64(rows[0].N), float64(rows[len(rows)-1].N)
		for i := 0; i <= 64; i++ {
			x := lo * math.Pow(hi/lo, float64(i)/64)
			xs = append(xs, plotter.XY{X: x, Y: f.fn(x)})
		}
		l, err := plotter.NewLine(xs)
		if err != nil {
			return nil, err
		}
		if i == 1 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(f.name, l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	w, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestControlFits: the fits recover a line in log2 N and a line in N.
func TestControlFits(t *testing.T) {
	var logRows, linRows []controlRow
	for _, n := range []int{8, 64, 512, 4096} {
		logRows = append(logRows, controlRow{N: n, EndToStart: 40 + 25*math.Log2(float64(n))})
		linRows = append(linRows, controlRow{N: n, EndToStart: 100 + 0.5*float64(n)})
	}
	lg, _ := controlFits(logRows)
	_, ln := controlFits(linRows)
	if math.Abs(lg.A-40) > 1e-6 || math.Abs(lg.B-25) > 1e-6 || lg.R2 < 0.999999 {
		t.Errorf("log fit %+v, want a 40, b 25, R² 1", lg)
	}
	if math.Abs(ln.A-100) > 1e-6 || math.Abs(ln.B-0.5) > 1e-9 || ln.R2 < 0.999999 {
		t.Errorf("linear fit %+v, want a 100, b 0.5, R² 1", ln)
	}
	if _, err := controlReport(logRows[:1]); err == nil {
		t.Error("controlReport of one row: no error")
	}
	png, err := controlPlot(linRows)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("controlPlot: %v, %d bytes", err, len(png))
	}
}
