package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/plot"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/phasegap/sweep"
	"github.com/chronosync/chronosync/workload/halo"
)

// TestModelNoFalseKnee: with the costs calibrated on this VM, the model
// at zero flops (the memory-bound stencil, where the MPI runs show the
// interior does not shrink with T) has no knee at P = 1 or 2 for T up to
// 8, and its interior does not grow from T = 1 to T = 2 by more than a
// fork/join (under 1 µs). The costs fitted before fork_ns came from the benchmark
// (fork_ns 249 µs) grew it by 148 µs, and every P = 2 series had its
// knee at T = 2.
func TestModelNoFalseKnee(t *testing.T) {
	costsPath, err := filepath.Abs(vmCosts)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := halo.LoadCosts(costsPath)
	if err != nil {
		t.Fatal(err)
	}
	if costs.ForkNS > 10e3 {
		t.Fatalf("%s: fork_ns %v: the fork/join benchmark measures under 1 µs (BenchmarkTeamFork); a fitted fork absorbs what the runs cannot tell from it", vmCosts, costs.ForkNS)
	}
	m, err := sweep.Parse([]byte(fmt.Sprintf("name: knee\nlink: {delay: 20us}\ncosts: %q\nsweeps: [{name: zero}]\n", costsPath)), "knee.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &sweepRunner{m: m}
	for _, p := range []int{1, 2} {
		for _, mode := range []string{phasegap.ModeNB, phasegap.ModeBlk, phasegap.ModeNBTest, phasegap.ModePersist, phasegap.ModeTasks} {
			var recs []report.Record
			for _, threads := range []int{1, 2, 4, 8} {
				q := phasegap.DefaultParams()
				q.Mode, q.Ranks, q.Threads, q.N, q.Halo, q.Iters, q.Warmup, q.PollEvery = mode, p, threads, 200000, 256, 40, 4, 4096
				pt := sweep.Point{Sweep: "zero", Transport: sweep.TransportSim, Params: q, Preset: "none"}
				dir := pt.Dir(t.TempDir())
				if _, err := r.Run(context.Background(), pt, dir); err != nil {
					t.Fatalf("%s: %v", pt.ID(), err)
				}
				rows, err := report.ReadCSVFile(filepath.Join(dir, "phasegap", "results.csv"))
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, rows...)
			}
			panels, err := plot.Group(recs)
			if err != nil {
				t.Fatal(err)
			}
			if len(panels) != 1 || len(panels[0].Series) != 1 {
				t.Fatalf("P=%d %s: %d panels", p, mode, len(panels))
			}
			pts := panels[0].Series[0].Points
			if k, ok := plot.Knee(pts); ok {
				t.Errorf("P=%d %s: knee at T=%d (t_wait %v µs, t_interior %v µs): the MPI runs show none", p, mode, k.T, k.TWait, k.TInterior)
			}
			if grew := pts[1].TInterior - pts[0].TInterior; grew > 1 {
				t.Errorf("P=%d %s: the interior grew by %.2f µs from T=1 to T=2, more than a fork/join (under 1 µs)", p, mode, grew)
			}
		}
	}
}
