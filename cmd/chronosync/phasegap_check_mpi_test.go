//go:build mpi

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
)

// TestPhasegapStall: a rank stopped with SIGSTOP mid-run makes the other
// rank's stall watchdog (the automatic limit: 20× the slowest warmup
// iteration, at least 1 s) end the job with its message, instead of
// leaving it in Waitall forever. The test signals and kills only what it
// started: mpirun, and the rank it stopped.
func TestPhasegapStall(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	cmd := exec.Command("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", bin, "phasegap",
		"--ranks", "2", "--N", "200000", "--iters", "200000", "--warmup", "20", "--out-dir", filepath.Join(t.TempDir(), "run"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var stopped int
	t.Cleanup(func() {
		if stopped > 0 {
			_ = syscall.Kill(stopped, syscall.SIGCONT)
			_ = syscall.Kill(stopped, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		<-done
	})
	var ranks []int
	for deadline := time.Now().Add(10 * time.Second); len(ranks) < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ranks = children(cmd.Process.Pid)
	}
	if len(ranks) < 2 {
		t.Fatalf("mpirun (pid %d) started %v, want two ranks", cmd.Process.Pid, ranks)
	}
	time.Sleep(2 * time.Second) // past the warmup, mid-run
	if err := syscall.Kill(ranks[1], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped = ranks[1]
	start := time.Now()
	select {
	case err := <-done:
		done <- err
		t.Logf("the job ended %v after the SIGSTOP:\n%s", time.Since(start).Round(time.Millisecond), out.String())
		if err == nil || !strings.Contains(out.String(), "phasegap: stall: rank 0: iteration ") ||
			!strings.Contains(out.String(), "over the stall limit") {
			t.Errorf("mpirun: %v, want a non-zero exit with rank 0's stall message", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the job still runs 30 s after rank pid %d was stopped:\n%s", ranks[1], out.String())
	}
}

// TestPhasegapCheckZero: --check 0 writes no checksum: an empty
// checksum64 cell, no checksum64 key in manifest.json (null in its
// result row), "checksum none" on stdout.
func TestPhasegapCheckZero(t *testing.T) {
	needs.Command(t, "openmpi-bin", "mpirun")
	dir := filepath.Join(t.TempDir(), "run")
	out, err := mpirunPhasegap(t, 2, "--ranks", "2", "--N", "2000", "--iters", "20", "--warmup", "2", "--check", "0", "--out-dir", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if row := readRow(t, filepath.Join(dir, "results.csv")); row["checksum64"] != "" {
		t.Errorf("checksum64 %q, want empty", row["checksum64"])
	}
	var m map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if _, ok := m["checksum64"]; ok {
		t.Errorf("manifest.json has checksum64 %v, want none", m["checksum64"])
	}
	if res, _ := m["result"].(map[string]any); res == nil || res["checksum64"] != nil {
		t.Errorf("manifest result checksum64 %v, want null", res["checksum64"])
	}
	if !strings.Contains(out, "checksum none (--check 0)") {
		t.Errorf("stdout:\n%s", out)
	}
}
