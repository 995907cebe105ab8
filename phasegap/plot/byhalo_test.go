package plot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// msgSweep is the message-size sweep's shape: T = 1, H from 1 to 8192,
// MPI and the simulator, two modes; the waits grow with H.
func msgSweep() []run {
	var runs []run
	for _, mode := range []string{"nb_test", "phase_nb"} {
		for _, h := range []int{1, 64, 4096, 8192} {
			for _, tr := range []string{"shm", "sim"} {
				wait := 10 + float64(h)/100
				if tr == "sim" {
					wait *= 2
				}
				runs = append(runs, run{mode: mode, transport: tr, impairment: "none", h: h, p: 2, t: 1, wait: wait, interior: 200})
			}
		}
	}
	return runs
}

// TestGroupByH: a panel per T, intensity and mode; points in ascending
// H; repeats at one H averaged; a panel of one H per series left out.
func TestGroupByH(t *testing.T) {
	runs := append(msgSweep(),
		run{mode: "phase_nb", transport: "shm", impairment: "none", h: 64, p: 2, t: 1, wait: 30.64, interior: 200}, // a repeat
		run{mode: "phase_blk", transport: "shm", impairment: "none", h: 256, p: 2, t: 2, wait: 5, interior: 100},   // one H only
	)
	panels, err := GroupByH(records(t, runs...))
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, pn := range panels {
		titles = append(titles, pn.Facet.Title())
		if pn.Axis != AxisH {
			t.Errorf("%s: axis %q, want H", pn.Facet.Title(), pn.Axis)
		}
	}
	if want := []string{"T=1 F=0 B=0 nb_test", "T=1 F=0 B=0 phase_nb"}; !slices.Equal(titles, want) {
		t.Fatalf("panels %q, want %q", titles, want)
	}
	pn := panels[1]
	if len(pn.Series) != 2 || pn.Series[0].Name != "mpi" || pn.Series[1].Name != "sim" {
		t.Fatalf("series %+v, want mpi then sim", pn.Series)
	}
	var hs []int
	for _, p := range pn.Series[0].Points {
		hs = append(hs, p.T)
	}
	if want := []int{1, 64, 4096, 8192}; !slices.Equal(hs, want) {
		t.Errorf("H values %v, want %v", hs, want)
	}
	if p := pn.Series[0].Points[1]; p.Runs != 2 || p.TWait != (10.64+30.64)/2 {
		t.Errorf("H=64: %d runs, t_wait %v; want 2 runs averaged to %v", p.Runs, p.TWait, (10.64+30.64)/2)
	}
}

// TestPlotAgainstH: a message-size sweep gets the figures against H,
// titled so; a sweep of one H per series gets none (TestPlot).
func TestPlotAgainstH(t *testing.T) {
	out := t.TempDir()
	res, err := Plot(records(t, msgSweep()...), out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, filepath.Base(f))
	}
	for _, want := range []string{"t_wait_vs_H.png", "t_wait_vs_H.svg", "wait_frac_vs_H.png", "wait_frac_vs_H.svg",
		"overlap_ratio_vs_H.png", "overlap_ratio_vs_H.svg"} {
		if !slices.Contains(names, want) {
			t.Errorf("Plot wrote %v, lacks %s", names, want)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "t_wait_vs_H.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"t_wait_vs_H against H", "T=1 F=0 B=0 phase_nb", "halo width", ">8192<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("t_wait_vs_H.svg lacks %q", want)
		}
	}
}
