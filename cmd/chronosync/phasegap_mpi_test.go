//go:build mpi

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/trace/xspace"
)

// mpirunPhasegap runs chronosync phasegap on np ranks under mpirun and
// returns its combined output.
func mpirunPhasegap(t *testing.T, np int, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	cmd := exec.Command("mpirun", append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np), bin, "phasegap"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// readRow reads results.csv: its header and its one row, by column.
func readRow(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%s: %d records, want a header and one row", path, len(recs))
	}
	if !slices.Equal(recs[0], report.Columns()) {
		t.Fatalf("%s: header %v\nwant %v", path, recs[0], report.Columns())
	}
	row := map[string]string{}
	for i, k := range recs[0] {
		row[k] = recs[1][i]
	}
	return row
}

func num(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s = %q: %v", col, row[col], err)
	}
	return v
}

// TestPhasegapModes runs every mode on 2 and 4 ranks under mpirun on this
// machine (oversubscribed: 2 cores): results.csv has the schema; the
// checksum is the same in every mode for the same inputs; phase_blk hides
// nothing (overlap_ratio < 0.05); phase_nb and phase_persist hide most of
// the exchange behind an interior longer than it (> 0.5); nb_test and
// omp_tasks report their tests; trace.json is a Chrome trace.
func TestPhasegapModes(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	if testing.Short() {
		t.Skip("runs ten mpirun jobs")
	}
	for _, np := range []int{2, 4} {
		sums := map[string]string{}
		for _, mode := range phasegap.Modes() {
			dir := filepath.Join(t.TempDir(), mode)
			out, err := mpirunPhasegap(t, np, "--mode", mode, "--ranks", strconv.Itoa(np), "--threads", "1",
				"--N", "100000", "--halo", "64", "--iters", "60", "--warmup", "10", "--poll-every", "2000",
				"--trace", "1", "--trace-iters", "10", "--out-dir", dir)
			if err != nil {
				t.Fatalf("np %d %s: %v\n%s", np, mode, err, out)
			}
			row := readRow(t, filepath.Join(dir, "results.csv"))
			t.Logf("np %d %-13s iter %s µs, interior %s, wait %s, comm window %s, overlap %s, tests %s", np, mode,
				row["t_iter_mean"], row["t_interior_mean_avg"], row["t_wait_mean_avg"], row["t_comm_window_mean_avg"], row["overlap_ratio"], row["mpi_test_calls_mean"])
			if row["schema_version"] != "1" || row["mode"] != mode || row["P"] != strconv.Itoa(np) {
				t.Errorf("np %d %s: row %v", np, mode, row)
			}
			sums[mode] = row["checksum64"]
			checkRecords(t, row, np)
			overlap := num(t, row, "overlap_ratio")
			switch mode {
			case phasegap.ModeBlk:
				if overlap >= 0.05 {
					t.Errorf("np %d phase_blk: overlap_ratio %.3f, want < 0.05", np, overlap)
				}
			case phasegap.ModeNB, phasegap.ModePersist:
				if overlap <= 0.5 {
					t.Errorf("np %d %s: overlap_ratio %.3f, want > 0.5", np, mode, overlap)
				}
			case phasegap.ModeNBTest, phasegap.ModeTasks:
				if num(t, row, "mpi_test_calls_mean") <= 0 || num(t, row, "polls_to_complete_p95") <= 0 {
					t.Errorf("np %d %s: tests %s, polls to complete p95 %s: want both counted", np, mode, row["mpi_test_calls_mean"], row["polls_to_complete_p95"])
				}
			}
			checkTrace(t, filepath.Join(dir, "trace.json"), np, 10)
			for r := range np {
				space, err := xspace.Read(filepath.Join(dir, fmt.Sprintf("rank%d.xplane.pb", r)))
				if err != nil {
					t.Fatal(err)
				}
				if p := space.Planes[0]; p.Name != fmt.Sprintf("/rank:%d", r) || len(p.Lines[0].Events) != 5*10 {
					t.Errorf("np %d %s rank %d: plane %q with %d events on its first line, want /rank:%d with 5 × 10", np, mode, r, p.Name, len(p.Lines[0].Events), r)
				}
			}
			var m map[string]any
			if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err != nil || json.Unmarshal(b, &m) != nil {
				t.Errorf("np %d %s: manifest.json: %v", np, mode, err)
			}
		}
		// A helper thread progressing the exchange (MPI_THREAD_MULTIPLE),
		// and the dynamic schedule, compute the same.
		dir := filepath.Join(t.TempDir(), "progress")
		out, err := mpirunPhasegap(t, np, "--mode", "phase_nb", "--ranks", strconv.Itoa(np), "--threads", "1",
			"--N", "100000", "--halo", "64", "--iters", "60", "--warmup", "10", "--progress", "progress_thread",
			"--omp-schedule", "dynamic", "--omp-chunk", "5000", "--out-dir", dir)
		if err != nil {
			t.Fatalf("np %d progress_thread: %v\n%s", np, err, out)
		}
		row := readRow(t, filepath.Join(dir, "results.csv"))
		if row["mpi_thread_requested"] != "multiple" {
			t.Errorf("np %d progress_thread: requested %q, want multiple (what MPI_Init_thread was asked)", np, row["mpi_thread_requested"])
		}
		if row["mpi_thread_provided"] != "MPI_THREAD_MULTIPLE" || num(t, row, "mpi_test_calls_mean") <= 0 {
			t.Errorf("np %d progress_thread: provided %s, tests %s", np, row["mpi_thread_provided"], row["mpi_test_calls_mean"])
		}
		sums["progress_thread"] = row["checksum64"]
		for mode, s := range sums {
			if s != sums[phasegap.ModeNB] {
				t.Errorf("np %d: checksums differ (%s): %v", np, mode, sums)
				break
			}
		}
	}
}

// checkRecords: an MPI row records the host's CPUs and the ranks'
// binding apart, the host's load and oversubscription, a status that
// says degraded exactly when it gives reasons (P×T above the host's CPUs
// always among them), the hiding figure from its own columns, and a git
// SHA that is a revision or "unknown".
func checkRecords(t *testing.T, row map[string]string, np int) {
	t.Helper()
	host, rank := num(t, row, "host_cpus"), num(t, row, "rank_cpus")
	if host < 1 || rank < 1 || rank > host || num(t, row, "oversubscription") != float64(np)/host {
		t.Errorf("np %d: host_cpus %s, rank_cpus %s, oversubscription %s", np, row["host_cpus"], row["rank_cpus"], row["oversubscription"])
	}
	if row["load1_start"] == "" || row["load1_end"] == "" {
		t.Errorf("np %d: load %q → %q: want both read", np, row["load1_start"], row["load1_end"])
	}
	over := float64(np) > host
	if st, why := row["status"], row["degraded_reason"]; (st == "degraded") != (why != "") || st != "ok" && st != "degraded" ||
		over && !strings.Contains(why, "oversubscribed") {
		t.Errorf("np %d on %v CPUs: status %q, reason %q", np, host, st, why)
	}
	wait, pure, hf := num(t, row, "t_wait_mean_avg"), num(t, row, "t_pure_comm_mean"), num(t, row, "hidden_frac")
	if want := math.Max(0, math.Min(1, 1-wait/pure)); math.Abs(hf-want) > 1e-9 {
		t.Errorf("np %d: hidden_frac %v, want clamp(1 − %v/%v) = %v", np, hf, wait, pure, want)
	}
	if sha := row["git_sha"]; sha != "unknown" && len(sha) < 7 {
		t.Errorf("np %d: git_sha %q", np, sha)
	}
}

// checkTrace: a Chrome trace (JSON object with traceEvents), every rank a
// pid, the four phases of each of the last iterations on tid 0, the
// counters and trace_schema_version.
func checkTrace(t *testing.T, path string, ranks, iters int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Name string  `json:"name"`
			Ph   string  `json:"ph"`
			Pid  int     `json:"pid"`
			Tid  int     `json:"tid"`
			Ts   float64 `json:"ts"`
		} `json:"traceEvents"`
		OtherData map[string]any `json:"otherData"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	count := map[string]int{}
	pids := map[int]bool{}
	for _, e := range tr.TraceEvents {
		count[e.Ph+" "+e.Name]++
		pids[e.Pid] = true
	}
	for _, name := range []string{"comm_post", "interior_compute", "waitall", "boundary_compute"} {
		if count["X "+name] != ranks*iters {
			t.Errorf("%s: %d %s spans, want %d (%d ranks × %d iterations)", path, count["X "+name], name, ranks*iters, ranks, iters)
		}
	}
	for _, c := range []string{"bytes_total", "mpi_test_calls", "t_wait", "wait_frac"} {
		if count["C "+c] == 0 {
			t.Errorf("%s: no %s counter", path, c)
		}
	}
	for r := range ranks {
		if !pids[r] {
			t.Errorf("%s: no events of rank %d", path, r)
		}
	}
	if fmt.Sprint(tr.OtherData["trace_schema_version"]) != "1" {
		t.Errorf("%s: otherData %v, want trace_schema_version 1", path, tr.OtherData)
	}
}

// TestPhasegapRefuses: flags out of range, a rank count that disagrees
// with mpirun's and H < B are refused once (by rank 0), with the numbers,
// exit non-zero, and no run directory.
func TestPhasegapRefuses(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ranks", "3"}, "--ranks 3, but the communicator has 2 ranks (mpirun -np 3)"},
		{[]string{"--ranks", "2", "--halo", "1", "--timesteps", "2"}, "--halo 1 is smaller than B = radius × timesteps = 1 × 2 = 2"},
		{[]string{"--ranks", "2", "--mode", "fast"}, `--mode "fast"`},
		{[]string{"--ranks", "2", "--omp-schedule", "fastest"}, `--omp-schedule "fastest": expected one of [static dynamic guided]`},
		{[]string{"--ranks", "2", "--impairment", "lat_2ms"}, `--impairment "lat_2ms": expected one of none, lat_1ms, lat_10ms`},
		// A level given explicitly is never silently raised.
		{[]string{"--ranks", "2", "--progress", "progress_thread", "--mpi-thread", "funneled"},
			"--mpi-thread funneled with --progress progress_thread: the progress thread calls MPI from a second thread, which needs multiple"},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		out, err := mpirunPhasegap(t, 2, append(tc.args, "--out-dir", dir)...)
		if err == nil || !strings.Contains(out, tc.want) || strings.Count(out, "chronosync: phasegap:") != 1 {
			t.Errorf("%v: err %v, output:\n%s\nwant one error containing %q", tc.args, err, out, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: left a run directory", tc.args)
		}
	}
	// Without the key flags' values in range, before MPI starts at all.
	out, err := exec.Command("chronosync", "phasegap", "--trace", "2", "--out-dir", t.TempDir()).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("--trace 2: expected 0 or 1")) {
		t.Errorf("--trace 2: err %v, output %s", err, out)
	}
}

// TestPhasegapRankDies: a rank killed mid-run ends the whole job (mpirun
// aborts the others) instead of leaving them waiting for its halo
// forever.
func TestPhasegapRankDies(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	cmd := exec.Command("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", bin, "phasegap",
		"--ranks", "2", "--N", "20000", "--iters", "100000000", "--warmup", "0", "--out-dir", filepath.Join(t.TempDir(), "run"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	// The ranks are mpirun's children: kill one of them, by its PID.
	var ranks []int
	for deadline := time.Now().Add(10 * time.Second); len(ranks) < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ranks = children(cmd.Process.Pid)
	}
	if len(ranks) < 2 {
		t.Fatalf("mpirun (pid %d) started %v, want two ranks", cmd.Process.Pid, ranks)
	}
	time.Sleep(500 * time.Millisecond) // mid-run
	if err := syscall.Kill(ranks[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err == nil {
			t.Errorf("mpirun exited 0 after a rank was killed:\n%s", out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the job still runs 30 s after rank pid %d was killed:\n%s", ranks[1], out.String())
	}
}

// children returns the PIDs of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}
