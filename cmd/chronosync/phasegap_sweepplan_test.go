package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/sweep"
)

// TestDefaultSweepSizedToPlan: sweeps/default.yaml reaches the plan's P
// up to 4 and T up to C/P for MPI, has omp_tasks in its sweeps, and on
// a 2-CPU machine runs MPI at P=1 with T=1 and 2 and at P=2 with T=1,
// skipping every point with P×T above the CPUs with that reason.
func TestDefaultSweepSizedToPlan(t *testing.T) {
	m, err := sweep.Load("../../sweeps/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &sweepRunner{m: m, cpus: 2, root: true}
	maxP, omp := 0, map[string]bool{}
	type pt struct{ p, t int }
	var mpiRun []pt
	for _, p := range m.Plan() {
		q := p.Params
		maxP = max(maxP, q.Ranks)
		if q.Mode == "omp_tasks" {
			omp[p.Sweep] = true
		}
		if p.Transport != sweep.TransportMPI {
			continue
		}
		why := r.Skip(p)
		over := q.Ranks*q.Threads > 2
		if over != strings.Contains(why, "> 2 CPUs: it would oversubscribe") {
			t.Errorf("%s %s: skip %q; P×T = %d", p.Sweep, p.ID(), why, q.Ranks*q.Threads)
		}
		if !over && !slices.Contains(mpiRun, pt{q.Ranks, q.Threads}) {
			mpiRun = append(mpiRun, pt{q.Ranks, q.Threads})
		}
	}
	if maxP != 4 {
		t.Errorf("largest P %d, want 4", maxP)
	}
	for _, s := range []string{"threads", "msgsize"} {
		if !omp[s] {
			t.Errorf("sweep %s has no omp_tasks point", s)
		}
	}
	slices.SortFunc(mpiRun, func(a, b pt) int { return a.p*10 + a.t - b.p*10 - b.t })
	if want := []pt{{1, 1}, {1, 2}, {2, 1}}; !slices.Equal(mpiRun, want) {
		t.Errorf("MPI (P, T) that fit 2 CPUs %v, want %v", mpiRun, want)
	}
}

// TestSweepListsSkipped: a point that cannot run for lack of CPUs gets
// its index line, status skipped and the reason, and the summary lists
// the reason with its count.
func TestSweepListsSkipped(t *testing.T) {
	m, err := sweep.Parse([]byte("name: s\ntransports: [mpi]\nsweeps: [{name: big, ranks: [4], threads: [1, 2], halo: [16]}]\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	o, err := sweep.Run(context.Background(), m, out, &sweepRunner{m: m, cpus: 2}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, sweep.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("index has %d lines, want a header and 2 points:\n%s", len(recs), b)
	}
	for _, rec := range recs[1:] {
		if rec[4] != sweep.StatusSkipped || !strings.Contains(rec[5], "> 2 CPUs: it would oversubscribe") {
			t.Errorf("index line %q: want skipped for lack of CPUs", rec)
		}
	}
	var sum bytes.Buffer
	printSkipped(&sum, o.Entries)
	for _, want := range []string{"not run here", "mpi: 1 points: P×T = 4×1 = 4 > 2 CPUs", "mpi: 1 points: P×T = 4×2 = 8 > 2 CPUs"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
}
