package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/plot"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/phasegap/sweep"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/phasegap.md's model-against-MPI table")

const (
	mpiMeasurements = "testdata/phasegap/mpi.csv"       // the MPI runs of sweeps/default.yaml
	vmCosts         = "../../sweeps/costs-this-vm.yaml" // calibrated from them
	phasegapDoc     = "../../docs/phasegap.md"
	tableBegin      = "<!-- model-vs-mpi:begin (go test ./cmd/chronosync -run TestModelAgainstMPI -update) -->\n"
	tableEnd        = "<!-- model-vs-mpi:end -->\n"
)

// paramsOf is the configuration a results row ran.
func paramsOf(t *testing.T, r report.Record) phasegap.Params {
	t.Helper()
	p := phasegap.DefaultParams()
	p.Mode, p.Kernel, p.Schedule, p.Progress = r.Str("mode"), r.Str("kernel"), r.Str("omp_schedule"), r.Str("progress")
	for _, c := range []struct {
		col string
		to  *int
	}{{"P", &p.Ranks}, {"T", &p.Threads}, {"N", &p.N}, {"H", &p.Halo}, {"radius", &p.Radius}, {"timesteps", &p.Timesteps},
		{"flops_per_point", &p.Flops}, {"bytes_per_point", &p.Bytes}, {"iters", &p.Iters}, {"warmup", &p.Warmup},
		{"poll_every", &p.PollEvery}, {"omp_chunk", &p.Chunk}} {
		v, err := r.Int(c.col)
		if err != nil {
			t.Fatal(err)
		}
		*c.to = v
	}
	return p
}

// TestModelAgainstMPI keeps docs/phasegap.md's table honest: it runs the
// simulator's model, with the costs calibrated on this VM, for every
// configuration of the committed MPI measurements and requires the
// table, medians and worst cases in the doc to be what it computes.
func TestModelAgainstMPI(t *testing.T) {
	mpi, err := report.ReadCSVFile(mpiMeasurements)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := filepath.Abs(vmCosts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sweep.Parse([]byte(fmt.Sprintf("name: model\nlink: {delay: 20us}\ncosts: %q\nsweeps: [{name: compare}]\n", costs)), "model.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &sweepRunner{m: m}
	records := append([]report.Record(nil), mpi...)
	seen := map[string]bool{}
	for _, row := range mpi {
		pt := sweep.Point{Sweep: "compare", Transport: sweep.TransportSim, Params: paramsOf(t, row), Preset: "none"}
		if seen[pt.ID()] {
			continue
		}
		seen[pt.ID()] = true
		dir := pt.Dir(t.TempDir())
		if _, err := r.Run(context.Background(), pt, dir); err != nil {
			t.Fatalf("%s: %v", pt.ID(), err)
		}
		sim, err := report.ReadCSVFile(filepath.Join(dir, "phasegap", "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		records = append(records, sim...)
	}
	c, err := plot.Compare(records)
	if err != nil {
		t.Fatal(err)
	}
	if c.Unmatched > 0 || len(c.Pairs) != len(seen) {
		t.Fatalf("%d pairs of %d configurations, %d unmatched", len(c.Pairs), len(seen), c.Unmatched)
	}
	table := c.Markdown()
	doc, err := os.ReadFile(phasegapDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tableBegin)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no model-against-MPI table between %q and %q", phasegapDoc, tableBegin, tableEnd)
	}
	if *updateDocs {
		if err := os.WriteFile(phasegapDoc, []byte(before+tableBegin+table+tableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, _, _ := strings.Cut(rest, tableEnd); got != table {
		t.Errorf("docs/phasegap.md's model-against-MPI table is stale; run go test ./cmd/chronosync -run TestModelAgainstMPI -update. Computed:\n%s", table)
	}
}
