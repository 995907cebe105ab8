package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/harness"
)

// untilStopped is a two-node loopback cluster whose scenario runs until
// stopped (duration 0): rounds of 1 s windows.
type untilStopped struct {
	t   *testing.T
	bin string
	dir string
}

func newUntilStopped(t *testing.T) *untilStopped {
	t.Helper()
	if testing.Short() {
		t.Skip("runs chronosync node processes for several seconds")
	}
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	dir := t.TempDir()
	a := time.Now().UnixNano()%200 + 20
	write(t, filepath.Join(dir, "c.yaml"), "name: forever\nduration: 0s\nnodes: 2\nprotocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}\n")
	write(t, filepath.Join(dir, "cluster.yaml"), fmt.Sprintf("scenario: c.yaml\naddresses: [127.81.%d.1, 127.81.%d.2]\n", a, a))
	return &untilStopped{t: t, bin: bin, dir: dir}
}

// start starts chronosync node of rank with --out out and the state
// directory state (the host lock's).
func (u *untilStopped) start(rank int, out, state string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	u.t.Helper()
	cmd := exec.Command(u.bin, append([]string{"node", "--cluster", "cluster.yaml", "--rank", strconv.Itoa(rank), "--out", out, "--state-dir", state, "--no-timepage"}, args...)...)
	cmd.Dir = u.dir
	buf := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, buf
}

// roundLines returns the round lines of the rounds.jsonl at path, read as
// a live file is (a torn last line ignored), with nil while it is absent.
func roundLines(path string) []offsets.Round {
	_, _, rounds, err := offsets.ReadRounds(path)
	if err != nil {
		return nil
	}
	return rounds
}

// waitRounds waits until the rounds.jsonl at path has a round line after
// round after, n of them, for up to 20 s; it returns the round lines.
func (u *untilStopped) waitRounds(path string, after uint64, n int, logs ...*bytes.Buffer) []offsets.Round {
	u.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rounds := roundLines(path)
		k := 0
		for _, r := range rounds {
			if r.RoundID > after {
				k++
			}
		}
		if k >= n {
			return rounds
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("%s: %d rounds after round %d in 20 s, want %d; logs:\n%s", path, k, after, n, joinLogs(logs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func joinLogs(logs []*bytes.Buffer) string {
	var s []string
	for _, b := range logs {
		s = append(s, b.String())
	}
	return strings.Join(s, "\n---\n")
}

// stop sends SIGTERM to cmd by its PID and waits for it: its exit status.
func stop(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) int {
	t.Helper()
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(15 * time.Second):
		t.Fatalf("PID %d did not exit within 15 s of SIGTERM:\n%s", cmd.Process.Pid, out)
	}
	return -1
}

// TestNodeRunsUntilSIGTERM: a cluster whose scenario has duration 0 runs
// until SIGTERM (before, the scenario was refused: duration "0s" is not
// positive). Stopped by PID after three rounds, both nodes exit 0 and
// print their summary; the master's offsets.jsonl reads strictly against
// its rounds.jsonl, and its summary.json is written with its rank and
// rounds.
func TestNodeRunsUntilSIGTERM(t *testing.T) {
	u := newUntilStopped(t)
	state := filepath.Join(u.dir, "state")
	n0, out0 := u.start(0, "out", state)
	n1, out1 := u.start(1, "out", state)
	rank0 := filepath.Join(u.dir, "out", "rank0")
	u.waitRounds(filepath.Join(rank0, "rounds.jsonl"), 0, 3, out0, out1)
	// Written in place as it goes: no staging directory, no summary yet.
	if _, err := os.Stat(filepath.Join(rank0, harness.FileSummary)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("summary.json before the stop: %v", err)
	}
	for i, p := range []struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}{{n0, out0}, {n1, out1}} {
		if code := stop(t, p.cmd, p.out); code != 0 {
			t.Errorf("rank %d exited %d after SIGTERM, want 0:\n%s", i, code, p.out)
		}
		if !strings.Contains(p.out.String(), "run directory: out/rank"+strconv.Itoa(i)) {
			t.Errorf("rank %d printed no summary:\n%s", i, p.out)
		}
	}
	_, offs, err := offsets.ReadStrict(filepath.Join(rank0, "offsets.jsonl"))
	if err != nil || len(offs) < 2 {
		t.Fatalf("offsets.jsonl: %d records, %v", len(offs), err)
	}
	var sum harness.Summary
	b, err := os.ReadFile(filepath.Join(rank0, harness.FileSummary))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil || sum.Real == nil || sum.Real.Rank == nil || *sum.Real.Rank != 0 || sum.Sync == nil || sum.Sync.Rounds < 3 {
		t.Fatalf("summary.json: %v; %s", err, b)
	}
}

// TestNodeKill9Restart: the master killed with SIGKILL mid-run, the round
// it was writing torn (as a kill inside its write leaves it), and
// restarted on the same directory: it cuts the torn tail (logged, and in
// incarnations.jsonl), continues the files with rounds numbered after the
// last whole one (at most the round in progress missing), and node 1,
// never restarted, rejoins its rounds. Both files read strictly at the
// end. Before, a run staged its directory and renamed it at its end: a
// killed node left nothing in --out.
func TestNodeKill9Restart(t *testing.T) {
	u := newUntilStopped(t)
	state := filepath.Join(u.dir, "state")
	n0, out0 := u.start(0, "out", state)
	n1, out1 := u.start(1, "out", state)
	rank0 := filepath.Join(u.dir, "out", "rank0")
	rpath, opath := filepath.Join(rank0, "rounds.jsonl"), filepath.Join(rank0, "offsets.jsonl")
	u.waitRounds(rpath, 0, 3, out0, out1)
	if err := n0.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = n0.Wait()
	before := roundLines(rpath)
	last := before[len(before)-1].RoundID
	// The kill fell inside the next round's write of offsets.jsonl.
	torn := []byte(fmt.Sprintf(`{"type":"offset","round_id":%d,"window_id":`, last+1))
	f, err := os.OpenFile(opath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn)
	f.Close()
	if _, _, err := offsets.ReadStrict(opath); err == nil || !strings.Contains(err.Error(), "torn") {
		t.Fatalf("the killed master's offsets.jsonl: ReadStrict %v, want the torn line refused", err)
	}

	n0, out0 = u.start(0, "out", state)
	after := u.waitRounds(rpath, last, 2, out0, out1)
	for i, p := range []struct {
		cmd *exec.Cmd
		out *bytes.Buffer
	}{{n0, out0}, {n1, out1}} {
		if code := stop(t, p.cmd, p.out); code != 0 {
			t.Errorf("rank %d exited %d after SIGTERM, want 0:\n%s", i, code, p.out)
		}
	}
	_, offs, err := offsets.ReadStrict(opath)
	if err != nil {
		t.Fatalf("offsets.jsonl after the restart: %v", err)
	}
	var ids []uint64
	for _, r := range after {
		ids = append(ids, r.RoundID)
	}
	if !slices.IsSorted(ids) || ids[len(before)] > last+2 {
		t.Errorf("round ids %v: the rounds after the restart must follow round %d, at most the round in progress missing", ids, last)
	}
	rejoined := false
	for _, r := range after[len(before):] {
		rejoined = rejoined || slices.Contains(r.Reported, 1)
	}
	if !rejoined {
		t.Errorf("node 1 reported in none of the rounds after the restart: %+v\n%s", after[len(before):], out1)
	}
	if offs[len(offs)-1].RoundID <= last {
		t.Errorf("no offsets after the restart (last record of round %d)", offs[len(offs)-1].RoundID)
	}
	incs := readIncarnations(t, filepath.Join(rank0, harness.FileIncarnations))
	if len(incs) != 2 || incs[1].Incarnation != 2 || incs[1].LastRound != last || incs[1].OffsetsCut != int64(len(torn)) {
		t.Errorf("incarnations: %+v; want the second with last round %d and %d bytes cut", incs, last, len(torn))
	}
	log, _ := os.ReadFile(filepath.Join(rank0, harness.FileLog))
	if want := fmt.Sprintf("cut %d bytes of offsets.jsonl", len(torn)); !bytes.Contains(log, []byte(want)) {
		t.Errorf("run.log says nothing of the cut (%q):\n%s", want, log)
	}
}

func readIncarnations(t *testing.T, path string) []harness.Incarnation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []harness.Incarnation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inc harness.Incarnation
		if err := json.Unmarshal(sc.Bytes(), &inc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, inc)
	}
	return out
}

// TestNodeOnePerHost: while a node of a cluster runs, a second chronosync
// node of that cluster and rank on the host is refused, naming the first
// one's PID, though it writes another --out (before, it started: two
// nodes measured one host against each other's sockets); once the first
// has stopped, one starts again.
func TestNodeOnePerHost(t *testing.T) {
	u := newUntilStopped(t)
	state := filepath.Join(u.dir, "state")
	first, out := u.start(0, "out", state)
	c, err := harness.LoadCluster(filepath.Join(u.dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lock := harness.NodeLockPath(state, c, 0)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(lock); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no host lock %s in 10 s:\n%s", lock, out)
		}
	}
	second := exec.Command(u.bin, "node", "--cluster", "cluster.yaml", "--rank", "0", "--out", "elsewhere", "--state-dir", state, "--no-timepage")
	second.Dir = u.dir
	got, err := second.CombinedOutput()
	want := fmt.Sprintf("PID %d holds %s", first.Process.Pid, lock)
	if err == nil || !strings.Contains(string(got), want) {
		t.Errorf("second node: %v, output:\n%s\nwant a refusal with %q", err, got, want)
	}
	if _, err := os.Stat(filepath.Join(u.dir, "elsewhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused node wrote its --out: %v", err)
	}
	stop(t, first, out)
	again, againOut := u.start(0, "out", state)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(lock); strings.TrimSpace(string(b)) == strconv.Itoa(again.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a node started after the first stopped holds no lock %s in 10 s:\n%s", lock, againOut)
		}
	}
	stop(t, again, againOut)
}

// TestNodeRotates: with --rotate-size 1 the master rotates offsets.jsonl
// and rounds.jsonl after every round, to offsets.N.jsonl and
// rounds.N.jsonl, and probes.bin after every window, to probes.N.bin, and
// still stops cleanly (exit 0: its summary read the fresh probes.bin); every segment reads strictly against its own rounds file
// and together they hold every round once, in order.
func TestNodeRotates(t *testing.T) {
	u := newUntilStopped(t)
	state := filepath.Join(u.dir, "state")
	n0, out0 := u.start(0, "out", state, "--rotate-size", "1")
	n1, out1 := u.start(1, "out", state)
	rank0 := filepath.Join(u.dir, "out", "rank0")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ns, _ := offsets.Segments(rank0); len(ns) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 segments in 20 s:\n%s", joinLogs([]*bytes.Buffer{out0, out1}))
		}
	}
	if code := stop(t, n0, out0); code != 0 {
		t.Errorf("rank 0 exited %d after SIGTERM, want 0:\n%s", code, out0)
	}
	stop(t, n1, out1)
	// probes.bin rotates at the same cap, on its own.
	if _, err := os.Stat(filepath.Join(rank0, "probes.1.bin")); err != nil {
		t.Errorf("probes.bin was not rotated: %v", err)
	}
	ns, err := offsets.Segments(rank0)
	if err != nil {
		t.Fatal(err)
	}
	var rounds []uint64
	for _, n := range append(ns, 0) {
		_, offs, err := offsets.ReadStrict(filepath.Join(rank0, offsets.SegmentName("offsets.jsonl", n)))
		if err != nil {
			t.Fatalf("segment %d: %v", n, err)
		}
		for _, o := range offs {
			if len(rounds) == 0 || rounds[len(rounds)-1] != o.RoundID {
				rounds = append(rounds, o.RoundID)
			}
		}
	}
	if len(rounds) < 3 || !slices.IsSorted(rounds) {
		t.Errorf("rounds across the segments: %v", rounds)
	}
	for i := 1; i < len(rounds); i++ {
		if rounds[i] == rounds[i-1] {
			t.Errorf("round %d in two segments: %v", rounds[i], rounds)
		}
	}
}
