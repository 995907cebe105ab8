package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestNodeRPDCluster: rpd's cluster file (ADDRESS,rank=RANK lines) starts a
// cluster: two `chronosync node --cluster cluster.rpd` processes on
// loopback, one given its rank by RPDT_CLOCKSYNC_RANK, the other by its
// address in RPDT_CLOCKSYNC_IP (over an OMPI_COMM_WORLD_RANK that says
// otherwise), run rpd's default scenario for --duration and complete
// rounds. Before, the file was refused as YAML.
func TestNodeRPDCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two cluster nodes for 5 s")
	}
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	dir := t.TempDir()
	a := time.Now().UnixNano()%200 + 20
	write(t, filepath.Join(dir, "cluster.rpd"), fmt.Sprintf("# rpd's ChronoSync cluster\n127.79.%d.1,rank=0\n127.79.%d.2,rank=1 # second host\n", a, a))
	envs := []string{"RPDT_CLOCKSYNC_RANK=0", fmt.Sprintf("RPDT_CLOCKSYNC_IP=127.79.%d.2", a)}
	var procs []*exec.Cmd
	var outs, errs []*bytes.Buffer
	for rank, env := range envs {
		cmd := exec.Command(bin, "node", "--cluster", "cluster.rpd", "--duration", "5s", "--out", "out", "--log-format", "json", "--log-level", "debug", "--no-timepage", "--no-status-socket")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env, "OMPI_COMM_WORLD_RANK=0", "CHRONOSYNC_STATE_DIR="+filepath.Join(dir, fmt.Sprintf("state%d", rank)))
		out, errb := new(bytes.Buffer), new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		procs, outs, errs = append(procs, cmd), append(outs, out), append(errs, errb)
	}
	for rank, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("rank %d: %v\nstdout:\n%s\nstderr:\n%s", rank, err, outs[rank], errs[rank])
		}
	}
	for rank, env := range envs {
		// The log says which variable gave the rank, and what was loaded.
		var sawRank, sawCluster bool
		for _, l := range strings.Split(strings.TrimSpace(errs[rank].String()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				continue // not every stderr line is the command's log
			}
			switch rec["msg"] {
			case "rank from the environment":
				sawRank = rec["rank"] == float64(rank) && rec["variable"] == strings.Split(env, "=")[0]
			case "cluster loaded":
				sawCluster = rec["rpd"] == true && rec["nodes"] == float64(2) && rec["scenario"] == "rpd-cluster"
			}
		}
		if !sawRank || !sawCluster {
			t.Errorf("rank %d: log lacks the rank from %s or the rpd cluster loaded:\n%s", rank, env, errs[rank])
		}
		// ok, or degraded by a loaded machine; never failed (no round).
		if !regexp.MustCompile(`(?m)^status: (ok|degraded)$`).MatchString(outs[rank].String()) {
			t.Errorf("rank %d: neither ok nor degraded:\n%s", rank, outs[rank])
		}
	}
	// --log-format json reaches the nodes' records in run.log.
	runLog, err := os.ReadFile(filepath.Join(dir, "out", "rank0", "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	jsonRecs := 0
	for _, l := range strings.Split(string(runLog), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["level"] != nil && rec["t"] != nil {
			jsonRecs++
		}
	}
	if jsonRecs == 0 {
		t.Errorf("run.log has no JSON record:\n%s", runLog)
	}
	// The master ran rounds of rpd's default scenario.
	if !regexp.MustCompile(`(?m)^sync: mode rounds, estimator svm, [1-9]\d* rounds, reference node 0$`).MatchString(outs[0].String()) {
		t.Errorf("rank 0 completed no round:\n%s", outs[0])
	}
}
