package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/chronosync/chronosync/nodestatus"
)

// scriptCmds are the test scripts' own commands.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"statusserver": statusServer,
		"jsonlines":    jsonLines,
	}
}

// statusServer is the script command `statusserver PATH STATE`: a fake
// node's status server on the socket PATH, in the test's process until
// the script ends, answering a fixed status in STATE (ok, degraded,
// failed, or stale: its validity deadline passed) as of a fixed clock.
func statusServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: statusserver PATH STATE")
	}
	t0 := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	now := t0
	st := nodestatus.Status{
		Node: 1, Address: "127.0.0.2", Cluster: "cluster.rpd", Nodes: 3,
		Reference: 0, ReferenceAddress: "127.0.0.1", PID: 4242, Started: t0.Add(-90 * time.Minute),
		State:     nodestatus.State(args[1]),
		LastRound: nodestatus.Round{ID: 42, End: t0.Add(-800 * time.Millisecond), LatencyNS: 3.21e6},
		OffsetNS:  -1234.5, OffsetSigmaNS: 45, DriftPPM: 12.345, DriftSigmaPPM: 0.012,
		SelfCheck:  nodestatus.SelfCheck{Within: 11, Of: 12, Pass: true},
		ValidUntil: t0.Add(4 * time.Second),
		Peers: []nodestatus.Peer{
			{Node: 0, Address: "127.0.0.1", State: "ok", LastHeard: t0.Add(-300 * time.Millisecond), ProbesSent: 12000, ProbesLost: 3, EdgeSigmaNS: 61},
			{Node: 2, Address: "127.0.0.3", State: "lost", ProbesSent: 500, ProbesLost: 500, EdgeSigmaNS: 12300},
		},
	}
	switch st.State {
	case "stale":
		st.State, now = nodestatus.StateOK, t0.Add(time.Minute)
	case nodestatus.StateDegraded, nodestatus.StateFailed:
		st.Reason = fmt.Sprintf("the self-check failed: %d of %d within 3 sigma", 5, 12)
		st.SelfCheck.Within, st.SelfCheck.Pass = 5, false
	}
	s, err := nodestatus.Listen(ts.MkAbs(args[0]), nodestatus.Options{Now: func() time.Time { return now }})
	ts.Check(err)
	s.Set(st)
	ts.Defer(func() { s.Close() })
}

// jsonLines is the script command `jsonlines FILE LEVEL...`: every line of
// FILE is a JSON object with time, level and msg, and its levels are
// among LEVELs.
func jsonLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: jsonlines FILE LEVEL...")
	}
	data := ts.ReadFile(args[0])
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if data == "" {
		ts.Fatalf("%s: no log lines", args[0])
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			ts.Fatalf("%s:%d: %q is no JSON object: %v", args[0], i+1, l, err)
		}
		level, _ := rec["level"].(string)
		if _, ok := rec["time"].(string); !ok || rec["msg"] == nil || !slices.Contains(args[1:], level) {
			ts.Fatalf("%s:%d: %q: want time, msg and a level among %v", args[0], i+1, l, args[1:])
		}
	}
	ts.Logf("%d JSON log lines", len(lines))
}

// TestStatusExitCode: status exits 0 for a node that is ok or starting, 3
// (as run --strict) for degraded, 1 for stale, failed or unreachable, and
// prints the report in every case it reached the node.
func TestStatusExitCode(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		state nodestatus.State
		code  int
	}{
		{nodestatus.StateOK, 0}, {nodestatus.StateStarting, 0}, {nodestatus.StateDegraded, exitDegraded},
		{nodestatus.StateStale, 1}, {nodestatus.StateFailed, 1}, {"", 1},
	} {
		path := filepath.Join(dir, fmt.Sprintf("node%d.sock", i))
		if tc.state != "" {
			s, err := nodestatus.Listen(path, nodestatus.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Set(nodestatus.Status{Node: i, State: tc.state})
			defer s.Close()
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{"status", "--socket", path}, &stdout, &stderr)
		printed := strings.Contains(stdout.String(), fmt.Sprintf("Status          : %s\n", tc.state))
		if code != tc.code || printed != (tc.state != "") {
			t.Errorf("state %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.state, code, tc.code, stdout.String(), stderr.String())
		}
	}
}
