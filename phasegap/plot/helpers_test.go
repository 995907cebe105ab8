package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// run describes one synthetic run: its keys and its times in µs.
type run struct {
	mode, transport, impairment string
	h, flops, p, t              int
	wait, interior              float64
}

// row is run's results row; t_iter = interior + wait + 10 µs.
func (r run) row() report.Row {
	cfg := report.Config{Params: params.Params{Settings: params.Settings{Mode: r.mode, Threads: r.t, N: 1000,
		Halo: r.h, Kernel: "stencil3", Radius: 1, Timesteps: 1, PollEvery: 64, Progress: "inline_poll",
		Schedule: "static", Iters: 5, Warmup: 1, Flops: r.flops}, Ranks: r.p, Check: true, CheckEvery: 50,
		Sync: "none"}, MPIThreadRequested: "funneled", MPIThreadProvided: "funneled", OMPPlaces: "cores",
		TraceDetail: "rank", Transport: r.transport, OutDir: "runs/t", RunID: "t1", CSVMode: "write",
		Platform: "linux", Hostname: "host", GitSHA: "abc123", Timestamp: "2026-01-02T03:04:05Z",
		MPIImpl: "Open MPI", MPIVersion: "4.1.4", Impairment: r.impairment}
	iter := r.interior + r.wait + 10
	row := report.Row{Config: cfg, TIterMean: iter, WaitFrac: r.wait / iter, WaitSkew: 1.2, OverlapRatio: 0.9}
	row.TWait = report.AvgMax{Avg: r.wait, Max: r.wait * 1.2}
	row.TInterior = report.AvgMax{Avg: r.interior, Max: r.interior}
	return row
}

// writeResults writes runs as dir/results.csv and returns its path.
func writeResults(t *testing.T, dir string, runs ...run) string {
	t.Helper()
	rows := make([]report.Row, len(runs))
	for i, r := range runs {
		rows[i] = r.row()
	}
	var b bytes.Buffer
	if err := report.WriteCSV(&b, rows, true); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "results.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// records writes runs into a temporary run directory and loads them.
func records(t *testing.T, runs ...run) []report.Record {
	t.Helper()
	dir := t.TempDir()
	writeResults(t, dir, runs...)
	recs, err := Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
