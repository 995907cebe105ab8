package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/busy"
	"github.com/chronosync/chronosync/harness"
)

// TestNodeRanksShareOutDir: two ranks of one cluster launched as mpirun
// launches them on one host (the same command line, --out out, the rank
// from OMPI_COMM_WORLD_RANK) each write their own run directory, out/rank0
// and out/rank1, and the master's holds its rounds. A third process that
// takes rank 0 too (a launcher that gave no rank) is refused while rank 0
// runs, naming its PID; and rank 0 pointed at a directory that rank 1
// wrote is refused, leaving it as it was. Before, both ranks wrote out,
// and the last to finish (rank 1: an offsets.jsonl with its meta line
// only) replaced the master's results; both said "status: ok" and "run
// directory: out".
func TestNodeRanksShareOutDir(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two cluster nodes for 3 s")
	}
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	dir := t.TempDir()
	a := time.Now().UnixNano()%200 + 20
	write(t, filepath.Join(dir, "c.yaml"), "name: cluster2\nduration: 3s\nnodes: 2\nprotocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}\n")
	write(t, filepath.Join(dir, "cluster.yaml"), fmt.Sprintf("scenario: c.yaml\naddresses: [127.78.%d.1, 127.78.%d.2]\n", a, a))
	node := func(env string, args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, append([]string{"node", "--cluster", "cluster.yaml", "--no-timepage", "--no-status-socket"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		return cmd, out
	}

	meter := busy.Start()
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for rank := range 2 {
		cmd, out := node(fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", rank), "--out", "out")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		procs, outs = append(procs, cmd), append(outs, out)
	}
	// Once rank 0 holds out/rank0's lock, a second rank 0 is refused.
	lock := harness.LockPath(filepath.Join(dir, "out", "rank0"))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(lock); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rank 0 took no lock %s in 5 s:\n%s", lock, outs[0])
		}
	}
	// Its own --state-dir, as another host sharing the file system has:
	// the host lock (TestNodeOnePerHost) does not refuse it, the run
	// directory's lock does.
	again, againOut := node("OMPI_COMM_WORLD_RANK=0", "--out", "out", "--state-dir", filepath.Join(dir, "other-host"))
	err = again.Run()
	want := fmt.Sprintf("run directory %s is in use by another process (PID %d holds its lock %s)",
		filepath.Join("out", "rank0"), procs[0].Process.Pid, filepath.Join("out", ".rank0.lock"))
	if err == nil || !strings.Contains(againOut.String(), want) {
		t.Errorf("a second rank 0 while rank 0 runs: %v\n%s\nwant %q", err, againOut, want)
	}
	for rank, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", rank, err, outs[rank])
		}
		if want := "run directory: " + filepath.Join("out", fmt.Sprint("rank", rank)) + "\n"; !strings.Contains(outs[rank].String(), want) {
			t.Errorf("rank %d does not say %q:\n%s", rank, want, outs[rank])
		}
	}
	for rank := range 2 {
		var sum struct {
			Real struct{ Rank *int } `json:"real"`
		}
		rd := filepath.Join(dir, "out", fmt.Sprint("rank", rank))
		if err := json.Unmarshal(readFile(t, filepath.Join(rd, "summary.json")), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Real.Rank == nil || *sum.Real.Rank != rank {
			t.Errorf("%s/summary.json: rank %v, want %d", rd, sum.Real.Rank, rank)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "summary.json")); err == nil {
		t.Errorf("a rank wrote out itself")
	}
	offs := bytes.Count(readFile(t, filepath.Join(dir, "out", "rank0", "offsets.jsonl")), []byte("\n"))
	if offs < 2 {
		meter.SkipIfBusy(t, fmt.Sprintf("the master's offsets.jsonl has %d lines", offs))
		t.Errorf("the master's offsets.jsonl has %d lines, want its meta line and rounds", offs)
	}

	// Rank 0 given a directory that rank 1 wrote: refused, untouched.
	if err := os.CopyFS(filepath.Join(dir, "out2", "rank0"), os.DirFS(filepath.Join(dir, "out", "rank1"))); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, filepath.Join(dir, "out2", "rank0", "summary.json"))
	cmd, out := node("OMPI_COMM_WORLD_RANK=0", "--out", "out2")
	err = cmd.Run()
	want = fmt.Sprintf("run directory %s holds cluster rank 1's run, and this is rank 0: refusing to replace it", filepath.Join("out2", "rank0"))
	if err == nil || !strings.Contains(out.String(), want) {
		t.Errorf("rank 0 into rank 1's directory: %v\n%s\nwant %q", err, out, want)
	}
	if after := readFile(t, filepath.Join(dir, "out2", "rank0", "summary.json")); !bytes.Equal(before, after) {
		t.Errorf("rank 1's directory changed")
	}
}

// readFile returns the file's contents.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
