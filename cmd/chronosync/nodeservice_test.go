package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/nodestatus"
	"github.com/chronosync/chronosync/ntpshm"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/timepage"
)

// startServing starts `chronosync node` of rank in u's cluster with args,
// its output in a buffer the test may read while it runs.
func (u *untilStopped) startServing(rank int, args ...string) (*exec.Cmd, *lockedBuffer) {
	u.t.Helper()
	cmd := exec.Command(u.bin, append([]string{"node", "--cluster", "cluster.yaml", "--rank", strconv.Itoa(rank), "--out", "out", "--state-dir", "state"}, args...)...)
	cmd.Dir = u.dir
	buf := new(lockedBuffer)
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, buf
}

// waitFor polls f every 50 ms for up to 20 s; it fails the test with what
// f last said when f never says "".
func waitFor(t *testing.T, what string, f func() string, logs ...*lockedBuffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		why := f()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			var s []string
			for _, l := range logs {
				s = append(s, l.String())
			}
			t.Fatalf("%s: not within 20 s: %s; logs:\n%s", what, why, strings.Join(s, "\n---\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var metricsAddrRE = regexp.MustCompile(`msg="serving metrics" address=(127\.0\.0\.1:\d+)`)

// scrape returns the text exposition of the metrics server at addr.
func scrape(addr string) (string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(b), nil
}

// metricValue is the value of the sample of exposition whose name and
// labels are series (e.g. `chronosync_round_id`), and whether there is one.
func metricValue(exposition, series string) (float64, bool) {
	for _, l := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(l, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// TestNodeServesHost: a two-node loopback cluster run until stopped serves
// its hosts (before issue 31's wiring, none of the flags existed and a
// node published nothing while it ran). With --metrics 127.0.0.1:0, a
// time page in a temporary directory and the default status socket (in
// the state directory, beside the host lock), after two rounds:
//   - node 1's page reads ok through timepage.Reader: a round ≥ 1, status
//     ok or degraded, σ finite and positive, and CLOCK_REALTIME now
//     converted to global time within 6σ + 10 µs of itself (both nodes'
//     clocks are this host's CLOCK_REALTIME, so global time is too);
//   - the C header (where gcc is) reads the same page and agrees with Go
//     to the nanosecond;
//   - node 1's /metrics has chronosync_node_offset_seconds{node="1"}, and
//     the master's has the round metrics (chronosync_round_id ≥ 1 and a
//     round latency observation: harness.Options.OnRound reaches it);
//   - node 1's /metrics has its per-edge probe counts and t3 sources
//     (chronosync_edge_probe_pairs_sent_total{src="1",dst="0"} > 0 and
//     chronosync_edge_probe_t3_total of the edge: harness.Options.OnWindow
//     reaches it), its prober's counters (chronosync_probe_pairs_sent_total
//     > 0) and its loop lateness (chronosync_loop_timers_total > 0 and the
//     lateness quantiles: harness.Options.OnStats reaches it); before,
//     none of these families was on a node;
//   - `chronosync status --socket` prints node 1's last round, ok (or
//     degraded by a loaded machine), and its peers table with node 0
//     (probes sent > 0, an edge sigma); the master's lists node 1 (before:
//     "No peers.");
//
// then SIGTERM: both exit 0, the page answers stale at once (expired, not
// waiting for its deadline), the status sockets are gone and the page file
// stays.
func TestNodeServesHost(t *testing.T) {
	u := newUntilStopped(t)
	pages := []string{filepath.Join(u.dir, "page0"), filepath.Join(u.dir, "page1")}
	n0, out0 := u.startServing(0, "--metrics", "127.0.0.1:0", "--timepage", pages[0])
	n1, out1 := u.startServing(1, "--metrics", "127.0.0.1:0", "--timepage", pages[1])
	logs := []*lockedBuffer{out0, out1}
	socks := []string{filepath.Join(u.dir, "state", "node0.sock"), filepath.Join(u.dir, "state", "node1.sock")}

	// Two rounds, and node 1's page has a model.
	var r *timepage.Reader
	waitFor(t, "node 1's time page with a model", func() string {
		if r == nil {
			fp, err := timepage.OpenFile(pages[1])
			if err != nil {
				return err.Error()
			}
			t.Cleanup(func() { fp.Close() })
			if r, err = timepage.NewReader(fp); err != nil {
				return err.Error()
			}
		}
		m, err := r.Load()
		if err != nil {
			return err.Error()
		}
		if m.RoundID < 2 {
			return fmt.Sprintf("round %d", m.RoundID)
		}
		return ""
	}, logs...)

	// (a) The page.
	m, err := r.Load()
	if err != nil {
		t.Fatal(err)
	}
	if m.NodeID != 1 || m.ReferenceNode != 0 || m.ClockID != timepage.ClockRealtime || (m.Status != timepage.StatusOK && m.Status != timepage.StatusDegraded) {
		t.Errorf("page model: node %d, reference %d, clock %d, status %v; want node 1, reference 0, CLOCK_REALTIME, ok or degraded", m.NodeID, m.ReferenceNode, m.ClockID, m.Status)
	}
	if d := time.Duration(m.ValidUntilNS - m.PublishedNS); d != 3*(time.Second+500*time.Millisecond) {
		t.Errorf("page model valid for %v after it was published, want 3 round periods (1 s window + 500 ms gather) = 4.5 s", d)
	}
	local := time.Now().UnixNano()
	g, sigma, err := r.ToGlobal(local)
	if err != nil {
		t.Fatalf("ToGlobal(now): %v", err)
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		t.Errorf("ToGlobal(now): sigma %v, want finite and > 0", sigma)
	}
	if d := math.Abs(float64(g - local)); d > 6*sigma+10e3 {
		t.Errorf("ToGlobal(now) = now %+d ns, sigma %.1f ns: global time on loopback is CLOCK_REALTIME, want within 6 sigma + 10 µs", g-local, sigma)
	}
	t.Logf("node 1's page: round %d, ToGlobal(now) = now %+d ns, sigma %.1f ns", m.RoundID, g-local, sigma)

	// The C reader, where gcc is.
	if gcc, err := exec.LookPath("gcc"); err != nil {
		t.Log("gcc not found: the C reader's check is skipped")
	} else {
		bin := filepath.Join(t.TempDir(), "creader")
		root := filepath.Join("..", "..")
		out, err := exec.Command(gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I"+filepath.Join(root, "include"),
			"-o", bin, filepath.Join(root, "timepage", "testdata", "creader.c"), "-lm").CombinedOutput()
		if err != nil {
			t.Fatalf("gcc creader.c: %v\n%s", err, out)
		}
		local := time.Now().UnixNano()
		out, err = exec.Command(bin, "convert", pages[1], strconv.FormatInt(local, 10)).Output()
		if err != nil {
			t.Fatalf("creader convert: %v", err)
		}
		var rc int
		var cg int64
		var cs float64
		if _, err := fmt.Sscan(string(out), &rc, &cg, &cs); err != nil {
			t.Fatalf("creader printed %q: %v", out, err)
		}
		g, s, err := r.ToGlobal(local)
		if rc != 0 || err != nil || cg-g > 1 || g-cg > 1 || math.Abs(cs-s) > 1e-6*s {
			t.Errorf("C reader: rc %d, global %d, sigma %g; Go reader: %v, %d, %g: want CHRONOSYNC_OK (0) and the same answer", rc, cg, cs, err, g, s)
		}
	}

	// (b) Metrics.
	addrs := make([]string, 2)
	for i, l := range logs {
		mm := metricsAddrRE.FindStringSubmatch(l.String())
		if mm == nil {
			t.Fatalf("node %d logged no metrics address:\n%s", i, l)
		}
		addrs[i] = mm[1]
	}
	waitFor(t, "node 1's metrics", func() string {
		exp, err := scrape(addrs[1])
		if err != nil {
			return err.Error()
		}
		if _, ok := metricValue(exp, `chronosync_node_offset_seconds{node="1"}`); !ok {
			return "no chronosync_node_offset_seconds{node=\"1\"}"
		}
		return ""
	}, logs...)
	waitFor(t, "the master's round metrics", func() string {
		exp, err := scrape(addrs[0])
		if err != nil {
			return err.Error()
		}
		if v, ok := metricValue(exp, "chronosync_round_id"); !ok || v < 1 {
			return fmt.Sprintf("chronosync_round_id %v (%v)", v, ok)
		}
		if v, ok := metricValue(exp, "chronosync_round_latency_seconds_count"); !ok || v < 1 {
			return fmt.Sprintf("chronosync_round_latency_seconds_count %v (%v)", v, ok)
		}
		return ""
	}, logs...)

	// Node 1's per-edge, prober and loop metrics (OnWindow, OnStats).
	waitFor(t, "node 1's per-edge, prober and loop metrics", func() string {
		exp, err := scrape(addrs[1])
		if err != nil {
			return err.Error()
		}
		for _, c := range []struct {
			series string
			min    float64
		}{
			{`chronosync_edge_probe_pairs_sent_total{dst="0",src="1"}`, 1},
			{`chronosync_edge_probe_pairs_answered_total{dst="0",src="1"}`, 1},
			{`chronosync_probe_pairs_sent_total{node="1"}`, 1},
			{`chronosync_loop_timers_total{node="1"}`, 1},
			{`chronosync_loop_lateness_p99_seconds{node="1"}`, 0},
			{`chronosync_loop_lateness_max_seconds{node="1"}`, 0},
			{`chronosync_datagrams_dropped_total{node="1",reason="not_node"}`, 0},
		} {
			if v, ok := metricValue(exp, c.series); !ok || v < c.min {
				return fmt.Sprintf("%s = %v (present: %v), want ≥ %v", c.series, v, ok, c.min)
			}
		}
		t3 := 0.0
		for _, src := range []string{"kernel", "user"} {
			v, _ := metricValue(exp, fmt.Sprintf(`chronosync_edge_probe_t3_total{dst="0",source="%s",src="1"}`, src))
			t3 += v
		}
		if t3 < 1 {
			return "no chronosync_edge_probe_t3_total of edge 1→0"
		}
		return ""
	}, logs...)

	// (c) chronosync status, on the default socket in the state directory.
	var out []byte
	var ee *exec.ExitError
	peerRow := regexp.MustCompile(`(?m)^0\s+127\.81\.\d+\.1\s+(ok|insufficient)\s+\d+\.\ds ago\s+([1-9]\d*)\s+\d+\s+\d+\.\d\d%\s+\S+$`)
	waitFor(t, "node 1's status with its peer", func() string {
		out, err = exec.Command(u.bin, "status", "--socket", socks[1]).Output()
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitDegraded) {
			return fmt.Sprintf("chronosync status: %v\n%s", err, out)
		}
		if !peerRow.Match(out) {
			return fmt.Sprintf("no peer row for node 0 (heard, probes sent > 0):\n%s", out)
		}
		return ""
	}, logs...)
	lr := regexp.MustCompile(`(?m)^Last round      : (\d+) at `).FindSubmatch(out)
	if lr == nil || string(lr[1]) == "0" || !regexp.MustCompile(`(?m)^Node            : 1 \(127\.81\.\d+\.2\) of 2, pid \d+$`).Match(out) ||
		!regexp.MustCompile(`(?m)^Status          : (ok|degraded)`).Match(out) {
		t.Errorf("chronosync status: want node 1, ok (or degraded by a loaded machine), its last round; got:\n%s", out)
	}
	t.Logf("chronosync status:\n%s", out)
	master, err := exec.Command(u.bin, "status", "--socket", socks[0]).Output()
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitDegraded) {
		t.Fatalf("chronosync status of the master: %v\n%s", err, master)
	}
	if !regexp.MustCompile(`(?m)^1\s+127\.81\.\d+\.2\s+(ok|insufficient)\s`).Match(master) {
		t.Errorf("the master's status: want its peers table with node 1; got:\n%s", master)
	}
	t.Logf("the master's status:\n%s", master)

	// SIGTERM.
	for i, n := range []*exec.Cmd{n1, n0} {
		buf := &bytes.Buffer{}
		if code := stop(t, n, buf); code != 0 {
			t.Errorf("node %d exited %d after SIGTERM:\n%s", 1-i, code, logs[1-i])
		}
	}
	if _, _, err := r.ToGlobal(time.Now().UnixNano()); !errors.Is(err, timepage.ErrStale) {
		t.Errorf("node 1's page after SIGTERM: %v, want %v (the node expires its model on stop)", err, timepage.ErrStale)
	}
	for _, s := range socks {
		if _, err := os.Lstat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("status socket %s after SIGTERM: %v, want it removed", s, err)
		}
	}
	for _, p := range pages {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("time page %s after SIGTERM: %v, want it left for mapped readers", p, err)
		}
	}
}

// TestNodeTimePageOneWriter: one publisher a page. While a node publishes
// to a page, another node (of another cluster of the same name: its own
// host lock) given that page by --timepage is refused, naming the page,
// before it runs; one whose default page it is runs without a page and
// says so (a second node publishing into one page would tear its models).
func TestNodeTimePageOneWriter(t *testing.T) {
	u := newUntilStopped(t)
	// A name of this test's own, so that the default page is too.
	name := fmt.Sprintf("pagetest-%d", time.Now().UnixNano()%1e9)
	write(t, filepath.Join(u.dir, "c2.yaml"), "name: "+name+"\nduration: 1s\nnodes: 2\nprotocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 500ms}\n")
	write(t, filepath.Join(u.dir, "other.yaml"), "scenario: c2.yaml\naddresses: [127.83.0.1, 127.83.0.2]\n")
	page := timepage.Path(name, 0)
	t.Cleanup(func() { os.Remove(page) })
	_, out0 := u.startServing(0, "--timepage", page)
	waitFor(t, "node 0's log of its page", func() string {
		if !strings.Contains(out0.String(), `msg="time page"`) {
			return "not yet"
		}
		return ""
	}, out0)
	for i, tc := range []struct {
		name string
		args []string
		// wantErr: refused with this; else it runs, and logs wantLog.
		wantErr, wantLog string
	}{
		{name: "named", args: []string{"--timepage", page}, wantErr: "time page " + page + ": another process publishes to it"},
		{name: "default", wantLog: `msg="no time page: another process publishes to the default one; give this node --timepage PATH" path=` + page},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"node", "--cluster", "other.yaml", "--rank", "0", "--out", fmt.Sprintf("other%d", i),
				"--state-dir", fmt.Sprintf("other-state%d", i), "--duration", "1s"}, tc.args...)
			cmd := exec.Command(u.bin, args...)
			cmd.Dir = u.dir
			out, err := cmd.CombinedOutput()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(string(out), tc.wantErr) {
					t.Errorf("%v, want refused with %q:\n%s", err, tc.wantErr, out)
				}
				return
			}
			// Alone, its peer absent, the node fails for want of rounds
			// (exit 1), but after running: its summary is printed.
			if !strings.Contains(string(out), tc.wantLog) || !strings.Contains(string(out), "run directory: ") {
				t.Errorf("%v, want it run and log %q:\n%s", err, tc.wantLog, out)
			}
		})
	}
}

// TestModelStatus: what `chronosync status` gets from a node's model, with
// its signs: the status's offset is global time minus the node's clock at
// the window's end (offsets.Offset.OffsetNS is the node's clock minus
// global time at the window's start), its drift global's rate against the
// node's less one; the deadline counts from the model's arrival; degraded
// by the round or by a failed self-check.
func TestModelStatus(t *testing.T) {
	const start = int64(1_795_000_000_000_000_000)
	base := nodestatus.Status{Node: 1, Nodes: 2, PID: 42}
	model := func(offsetNS, driftPPM float64, sc *offsets.SelfCheck, deg rounds.Degraded) rounds.Model {
		return rounds.Model{
			Offset: offsets.Offset{RoundID: 7, WindowID: 7, WindowStartNS: start, WindowEndNS: start + 1e9, NodeID: 1,
				OffsetNS: offsetNS, DriftPPM: driftPPM, UncertaintyNS: 20, DriftUncertaintyPPM: 0.01, SelfCheck: sc},
			Reference: 0, Degraded: deg, ReceivedAt: start + 1_500_000_000, RoundLatency: 3 * time.Millisecond,
		}
	}
	for _, tc := range []struct {
		name       string
		m          rounds.Model
		delta      int64
		wantState  nodestatus.State
		wantReason string
		wantOffset float64 // global − local at the window's end
		wantDrift  float64
		wantCheck  nodestatus.SelfCheck
	}{
		{name: "ahead", m: model(1000, 0, nil, 0), wantState: nodestatus.StateOK, wantOffset: -1000},
		{name: "behind and fast", m: model(-1000, 2, nil, 0), wantState: nodestatus.StateOK, wantOffset: 1000 - 2000, wantDrift: -2},
		{name: "reference", m: model(0, 0, &offsets.SelfCheck{Predictions: 4, Within3Sigma: 4, MaxSigma: 1}, 0), wantState: nodestatus.StateOK,
			wantCheck: nodestatus.SelfCheck{Within: 4, Of: 4, Pass: true}},
		{name: "degraded round", m: model(5, 0, nil, rounds.DegradedPartial), wantState: nodestatus.StateDegraded, wantReason: "round degraded: ", wantOffset: -5},
		{name: "self-check fails", m: model(5, 0, &offsets.SelfCheck{Predictions: 4, Within3Sigma: 3, MaxSigma: 12}, 0), wantState: nodestatus.StateDegraded,
			wantReason: "self-check failed: 3 of 4", wantOffset: -5, wantCheck: nodestatus.SelfCheck{Within: 3, Of: 4}},
		{name: "injected clock offset", m: model(1000, 0, nil, 0), delta: 250_000, wantState: nodestatus.StateOK, wantOffset: -1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, reason := modelState(tc.m)
			if state != tc.wantState || !strings.HasPrefix(reason, tc.wantReason) || (tc.wantReason == "") != (reason == "") {
				t.Errorf("modelState: %q, %q; want %q, a reason starting %q", state, reason, tc.wantState, tc.wantReason)
			}
			st := modelStatus(base, tc.m, state, reason, 4500*time.Millisecond, tc.delta)
			if st.Node != 1 || st.PID != 42 || st.State != state || st.Reason != reason || st.LastRound.ID != 7 || st.LastRound.LatencyNS != 3e6 {
				t.Errorf("status %+v: want base's node and pid, the state, round 7, latency 3 ms", st)
			}
			if math.Abs(st.OffsetNS-tc.wantOffset) > 1e-6 || math.Signbit(st.OffsetNS) != (tc.wantOffset < 0) {
				t.Errorf("OffsetNS %v, want %v (global minus local at the window's end)", st.OffsetNS, tc.wantOffset)
			}
			if st.DriftPPM != tc.wantDrift || math.Signbit(st.DriftPPM) != (tc.wantDrift < 0) || st.DriftSigmaPPM != 0.01 {
				t.Errorf("DriftPPM %v ± %v, want %v ± 0.01", st.DriftPPM, st.DriftSigmaPPM, tc.wantDrift)
			}
			if want := tc.m.Offset.SigmaAt(tc.m.Offset.WindowEndNS); st.OffsetSigmaNS != want {
				t.Errorf("OffsetSigmaNS %v, want SigmaAt(window end) %v", st.OffsetSigmaNS, want)
			}
			if st.SelfCheck != tc.wantCheck {
				t.Errorf("SelfCheck %+v, want %+v", st.SelfCheck, tc.wantCheck)
			}
			// Times on CLOCK_REALTIME: the node's clock less delta.
			if want := time.Unix(0, start+1e9-tc.delta); !st.LastRound.End.Equal(want) {
				t.Errorf("LastRound.End %v, want the window's end %v", st.LastRound.End, want)
			}
			if want := time.Unix(0, start+1_500_000_000+4_500_000_000-tc.delta); !st.ValidUntil.Equal(want) {
				t.Errorf("ValidUntil %v, want arrival + 4.5 s = %v", st.ValidUntil, want)
			}
		})
	}
}

// TestHostClockDelta: a cluster node's clock S is CLOCK_REALTIME plus the
// scenario's injected constant offset and steps; clock-step faults are not
// in the delta, and each is reason to warn.
func TestHostClockDelta(t *testing.T) {
	now := int64(1_795_000_000_000_000_000)
	for _, tc := range []struct {
		name      string
		p         clockmodel.Params
		faults    int
		wantDelta int64
		wantWhy   string
	}{
		{name: "production", wantDelta: 0, wantWhy: ""},
		{name: "offset", p: clockmodel.Params{Offset: 250 * time.Microsecond}, wantDelta: 250_000, wantWhy: "injects a clock offset"},
		{name: "offset and step", p: clockmodel.Params{Offset: -time.Millisecond, Steps: []clockmodel.Step{{At: time.Second, By: 5 * time.Millisecond}}},
			wantDelta: 4_000_000, wantWhy: "injects a clock offset"},
		{name: "step faults", faults: 2, wantDelta: 0, wantWhy: "2 clock_step fault(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, why := hostClockDelta(tc.p, tc.faults, now)
			if d != tc.wantDelta || !strings.Contains(why, tc.wantWhy) || (tc.wantWhy == "") != (why == "") {
				t.Errorf("hostClockDelta = %d, %q; want %d, a reason with %q", d, why, tc.wantDelta, tc.wantWhy)
			}
		})
	}
}

// freeSHMUnit returns an NTP SHM unit in [200, 255] that no segment has
// (no gpsd, ptp4l or chrony configuration uses those), and removes the
// segment the test makes there when it ends.
func freeSHMUnit(t *testing.T) int {
	t.Helper()
	for u := 200; u <= ntpshm.MaxUnit; u++ {
		_, err := unix.SysvShmGet(ntpshm.KeyBase+u, 0, 0)
		if errors.Is(err, unix.ENOSYS) {
			t.Skipf("SysV shared memory is not available here: %v", err)
		}
		if !errors.Is(err, unix.ENOENT) {
			continue
		}
		t.Cleanup(func() {
			if id, err := unix.SysvShmGet(ntpshm.KeyBase+u, 0, 0); err == nil {
				if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil {
					t.Errorf("cleanup: remove SHM unit %d: %v", u, err)
				}
			}
		})
		return u
	}
	t.Skip("every NTP SHM unit in [200, 255] has a segment already (ipcs -m)")
	return -1
}

// shmSample reads unit's segment as chrony does (mode 1: valid set, count
// unchanged across the copy): the count, and global time minus
// CLOCK_REALTIME of the last sample (clock − receive timestamps).
func shmSample(t *testing.T, unit int) (count int32, offset time.Duration, ok bool) {
	t.Helper()
	id, err := unix.SysvShmGet(ntpshm.KeyBase+unit, 0, 0)
	if err != nil {
		t.Fatalf("shmget unit %d: %v", unit, err)
	}
	b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
	if err != nil {
		t.Fatalf("shmat unit %d: %v", unit, err)
	}
	defer unix.SysvShmDetach(b)
	i32 := func(off int) int32 { return atomic.LoadInt32((*int32)(unsafe.Pointer(&b[off]))) }
	i64 := func(off int) int64 { return atomic.LoadInt64((*int64)(unsafe.Pointer(&b[off]))) }
	c0 := i32(ntpshm.OffCount)
	if i32(ntpshm.OffValid) != 1 {
		return c0, 0, false
	}
	clock := time.Unix(i64(ntpshm.OffClockTimeStampSec), int64(uint32(i32(ntpshm.OffClockTimeStampNSec))))
	recv := time.Unix(i64(ntpshm.OffReceiveTimeStampSec), int64(uint32(i32(ntpshm.OffReceiveTimeStampNSec))))
	if i32(ntpshm.OffCount) != c0 {
		return c0, 0, false
	}
	return c0, clock.Sub(recv), true
}

// TestNodeServiceFeedsChrony: --chrony-shm writes chrony's segment after
// each model and every second while the model is valid, with global time
// minus CLOCK_REALTIME as the model says (a node 250 µs ahead of global
// time: −250 µs); once the model's deadline passes without a new one it
// stops writing (chrony's reach then drains); and Close expires the time
// page at once.
func TestNodeServiceFeedsChrony(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the model to go stale (3 s)")
	}
	unit := freeSHMUnit(t)
	page := filepath.Join(t.TempDir(), "page")
	s, err := startNodeService(nodeServiceConfig{
		hostServices: hostServices{TimePage: page, ChronyUnit: unit},
		Rank:         1, Deadline: 1500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UnixNano()
	s.OnModel(1, rounds.Model{
		Offset: offsets.Offset{RoundID: 3, WindowID: 3, WindowStartNS: now - 1e9, WindowEndNS: now, NodeID: 1,
			OffsetNS: 250e3, UncertaintyNS: 100, DriftUncertaintyPPM: 1e-3},
		ReceivedAt: now,
	})
	var first int32
	waitFor(t, "the first chrony sample", func() string {
		c, off, ok := shmSample(t, unit)
		if !ok {
			return "no valid sample"
		}
		if d := off + 250*time.Microsecond; d < -100*time.Nanosecond || d > 100*time.Nanosecond {
			t.Fatalf("chrony sample: global − CLOCK_REALTIME = %v, want −250 µs within 100 ns", off)
		}
		first = c
		return ""
	})
	// The second's writes, then none once the model is stale (1.5 s).
	time.Sleep(3 * time.Second)
	c1, _, _ := shmSample(t, unit)
	if c1 == first {
		t.Errorf("chrony's segment written once (count %d) in 1.5 s of a valid model, want the 1 s ticker's writes too", c1)
	}
	time.Sleep(1500 * time.Millisecond)
	if c2, _, _ := shmSample(t, unit); c2 != c1 {
		t.Errorf("chrony's segment still written after the model's deadline: count %d, then %d", c1, c2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fp, err := timepage.OpenFile(page)
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	r, err := timepage.NewReader(fp)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := r.Load(); err != nil || m.RoundID != 3 || m.ValidUntilNS > time.Now().UnixNano() {
		t.Errorf("page after Close: %+v, %v; want round 3, expired", m, err)
	}
}

// Example_nodeService: a node's host services take its model of each
// round from the run (harness.Options.OnModel, OnRound) and publish it;
// a local process reads global time from the page.
func Example_nodeService() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	s, err := startNodeService(nodeServiceConfig{
		hostServices: hostServices{TimePage: filepath.Join(dir, "page"), ChronyUnit: -1, StatusSocket: filepath.Join(dir, "node1.sock")},
		Rank:         1,
		Deadline:     3 * 4500 * time.Millisecond,
		Status:       nodestatus.Status{Node: 1, Nodes: 2, PID: os.Getpid()},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	// harness.Options{OnModel: s.OnModel, OnRound: s.OnRound}; here by hand:
	now := time.Now().UnixNano()
	s.OnModel(1, rounds.Model{Offset: offsets.Offset{RoundID: 42, WindowStartNS: now - 4e9, WindowEndNS: now, NodeID: 1,
		OffsetNS: 1500, UncertaintyNS: 20}, ReceivedAt: now})

	fp, _ := timepage.OpenFile(filepath.Join(dir, "page"))
	defer fp.Close()
	r, _ := timepage.NewReader(fp)
	m, _ := r.Load()
	g, sigma, err := r.ToGlobal(now)
	fmt.Printf("page: round %d, %v, global − local = %d ns, sigma %.0f ns, %v\n", m.RoundID, m.Status, g-now, sigma, err)
	st, _ := nodestatus.Query(filepath.Join(dir, "node1.sock"))
	fmt.Printf("status: %s, round %d, offset %+.0f ns\n", st.State, st.LastRound.ID, st.OffsetNS)
	// Output:
	// page: round 42, ok, global − local = -1500 ns, sigma 20 ns, <nil>
	// status: ok, round 42, offset -1500 ns
}
