package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeNeverSawRoundExit: `chronosync node` for rank 1 of a cluster
// whose master is not running ran its whole duration with no round and
// no probe, printed `status: ok` and exited 0. It prints `status:
// failed:` with the reason and exits 1, as a failed run does.
func TestNodeNeverSawRoundExit(t *testing.T) {
	dir := t.TempDir()
	a, b := 1+rand.IntN(250), rand.IntN(256)
	write(t, filepath.Join(dir, "s.yaml"), `name: alone
duration: 1s
nodes: 2
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 100ms}
`)
	cluster := filepath.Join(dir, "cluster.yaml")
	write(t, cluster, fmt.Sprintf("scenario: s.yaml\naddresses: [127.%d.%d.1, 127.%d.%d.2]\n", a, b, a, b))
	var stdout, stderr bytes.Buffer
	code := run([]string{"node", "--cluster", cluster, "--rank", "1", "--out", filepath.Join(dir, "out"), "--no-timepage", "--no-status-socket"}, &stdout, &stderr)
	want := fmt.Sprintf("no round started in 1s (master unreachable? node 0 at 127.%d.%d.1)", a, b)
	if code != 1 || !strings.Contains(stdout.String(), "status: failed: "+want+"\n") || !strings.Contains(stderr.String(), "the run failed: "+want) {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}
