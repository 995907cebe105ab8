package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/workload/halo"
)

// writeCalibrationRuns writes run directories dir/<name>/results.csv of
// phase_nb rows whose interiors follow point_ns 1.5, flop_ns 0.5 and
// fork_ns 800 (no memory ceiling), and a hidden staging directory that
// must be left out.
func writeCalibrationRuns(t *testing.T, dir string) {
	t.Helper()
	for _, r := range []struct {
		name     string
		threads  int
		flops    int
		interior float64 // µs: ceil((N−2)/T)·(1.5 + F·0.5) ns, + 800 ns when T > 1
	}{
		{"t1f0", 1, 0, 99998 * 1.5 / 1e3},
		{"t1f8", 1, 8, 99998 * 5.5 / 1e3},
		{"t2f0", 2, 0, (49999*1.5 + 800) / 1e3},
		{"t2f8", 2, 8, (49999*5.5 + 800) / 1e3},
		{".t2f8.tmp-1", 2, 8, 1},
	} {
		cfg := report.Config{Params: params.Params{Settings: params.Settings{Mode: "phase_nb",
			Threads: r.threads, N: 100000, Halo: 16, Kernel: "stencil3", Radius: 1, Timesteps: 1,
			PollEvery: 1024, Progress: "inline_poll", Schedule: "static", Flops: r.flops, Iters: 10,
			Warmup: 1}, Ranks: 1, CheckEvery: 50, Sync: "none"}, Transport: "auto"}
		row := report.Row{Config: cfg, Derived: report.Derive(cfg)}
		row.TInterior = report.AvgMax{Avg: r.interior, Max: r.interior}
		row.TPost = report.AvgMax{Avg: 1.2, Max: 1.2}
		var b bytes.Buffer
		if err := report.WriteCSV(&b, []report.Row{row}, true); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, r.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, r.name, "results.csv"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPhasegapCalibrate: the command finds the runs, writes a costs file
// LoadCosts reads, and prints the fit; bad arguments are refused.
func TestPhasegapCalibrate(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	writeCalibrationRuns(t, runs)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "costs.yaml")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"fork measured", []string{runs, "-o", filepath.Join(dir, "auto.yaml")}, 0,
			[]string{"fixed: fork_ns", "measured by calibrate on this machine", "per fork/join of 2 threads (median of 20 batches",
				"note: fork_ns fitted from these runs alone would be 800 ns", "how closely the runs determine each fitted cost"}},
		{"fork fitted", []string{runs, "--fork-ns", "fit", "-o", filepath.Join(dir, "fit.yaml")}, 0,
			[]string{"point_ns          1.5", "fork_ns 800 ± "}},
		{"bad fork", []string{runs, "--fork-ns", "-3", "-o", filepath.Join(dir, "bad.yaml")}, 1,
			[]string{`--fork-ns "-3": expected auto, fit, or a number of ns`}},
		{"fits", []string{runs, filepath.Join(runs, "t1f0", "results.csv"), "--fork-ns", "800", "-o", out}, 0,
			[]string{"kernel stencil3: 4 runs fitted", "point_ns          1.5", "flop_ns           0.5", "fixed: fork_ns 800 ns (--fork-ns 800)", "fitted",
				"point_ns 1.5 ± ", "determined by the runs",
				"kept default: no run with bytes_per_point > 0", "mem_bytes_per_ns  0", "no ceiling", "t1f0/results.csv:2", "wrote " + out}},
		{"no -o", []string{runs}, 1, []string{"-o is required"}},
		{"no results", []string{filepath.Join(dir, "empty"), "-o", out}, 1, []string{"empty: no results.csv in it or below"}},
		{"missing", []string{filepath.Join(dir, "none"), "-o", out}, 1, []string{"none: no such file"}},
		{"other kernel", []string{runs, "--kernel", "axpy", "-o", out}, 1, []string{"no usable run among 0 rows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"phasegap", "calibrate"}, tc.args...), &stdout, &stderr)
			all := stdout.String() + stderr.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
	c, err := halo.LoadCosts(out)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	if !near(c.PointNS, 1.5) || !near(c.FlopNS, 0.5) || !near(c.ForkNS, 800) || !near(c.CallNS, 300) || c.MemBytesPerNS != 0 {
		t.Errorf("costs file: %+v", c)
	}
	data, _ := os.ReadFile(out)
	if !strings.HasPrefix(string(data), "# Costs of PhaseGap's model") || !strings.Contains(string(data), "from 4 results files") {
		t.Errorf("costs file's note:\n%s", data)
	}
}
