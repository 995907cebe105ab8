package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/ci/busy"
	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/timepage"
)

// envSoak names the environment variable that sets how long
// TestNodeServiceSoak runs its cluster (a Go duration; default
// soakDefault). `make soak` sets it to 10m.
const envSoak = "CHRONOSYNC_SOAK"

const (
	// soakDefault is the soak's length under make test (CI).
	soakDefault = 30 * time.Second
	// soakNodes is the cluster's size.
	soakNodes = 4
	// soakScrapeEvery is the scraper's period.
	soakScrapeEvery = 5 * time.Second
	// soakMetricsPort is every node's metrics port, on its own address in
	// its own namespace.
	soakMetricsPort = 9464
	// soakReaderTail is how long the C reader goes on reading node 1's
	// page after the cluster stopped.
	soakReaderTail = 2 * time.Second
)

// soakScenario runs until stopped (duration 0): four nodes, rounds of 1 s
// windows under node 0, no injected clock offsets (every namespace reads
// the one CLOCK_REALTIME, so global time is CLOCK_REALTIME too).
const soakScenario = `name: soak4
duration: 0s
nodes: 4
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}
`

// soakDuration is $CHRONOSYNC_SOAK, or soakDefault where it is unset.
func soakDuration() (time.Duration, error) {
	v := os.Getenv(envSoak)
	if v == "" {
		return soakDefault, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 10*time.Second {
		return 0, fmt.Errorf("$%s=%q: want a Go duration of 10s or more (like 30s or 10m): %v", envSoak, v, err)
	}
	return d, nil
}

// soakProc is a process the soak started: its PID, output and exit.
type soakProc struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{} // closed once Wait returned
	err  error         // Wait's, once done is closed
	at   time.Time     // when Wait returned
}

// startSoakProc starts cmd with its output in a buffer and a goroutine
// waiting for it; the test's cleanup kills it by PID where it still runs.
func startSoakProc(t *testing.T, name string, cmd *exec.Cmd) *soakProc {
	t.Helper()
	p := &soakProc{name: name, cmd: cmd, out: new(lockedBuffer), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		p.at = time.Now()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

// exitCode waits up to limit for p to exit; its exit status, or -1 for
// a process that did not exit (or died of a signal).
func (p *soakProc) exitCode(limit time.Duration) int {
	select {
	case <-p.done:
	case <-time.After(limit):
		return -1
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// soakSample is what one scrape of a node's /metrics said.
type soakSample struct {
	err                  error
	round                float64 // chronosync_node_model_round_id of the node
	offset, sigma        float64 // chronosync_node_offset_seconds and its σ
	checked, within      float64 // self-check predictions, and those within 3σ
	latency              float64 // master: chronosync_round_latency_last_seconds
	masterRound          float64 // master: chronosync_round_id
	hasModel, hasLatency bool
}

// String is the sample in one column of a scrape's log line.
func (s soakSample) String() string {
	if s.err != nil {
		return "error: " + s.err.Error()
	}
	if !s.hasModel {
		return "no model"
	}
	sc := "-"
	if s.checked > 0 {
		sc = fmt.Sprintf("%.0f/%.0f", s.within, s.checked)
	}
	str := fmt.Sprintf("r%-4.0f off %+9.1fns σ %7.1fns sc %s", s.round, s.offset*1e9, s.sigma*1e9, sc)
	if s.hasLatency {
		str += fmt.Sprintf(" lat %.1fms", s.latency*1e3)
	}
	return str
}

// soakScrape is one scrape of every node.
type soakScrape struct {
	at    time.Duration // since the soak's start
	nodes []soakSample
}

// nsClient is an HTTP client whose connections are opened inside node
// i's namespace (netlab.Lab.Do): the test process stays in its own.
func nsClient(lab *netlab.Lab, i int) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := lab.Do(i, func() error {
			var d net.Dialer
			var err error
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// scrapeNode GETs url with c and reads node's figures from the exposition.
func scrapeNode(c *http.Client, url string, node int) soakSample {
	resp, err := c.Get(url)
	if err != nil {
		return soakSample{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return soakSample{err: fmt.Errorf("GET %s: %s", url, resp.Status)}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return soakSample{err: fmt.Errorf("GET %s: parse the exposition: %w", url, err)}
	}
	n := strconv.Itoa(node)
	var s soakSample
	s.round, s.hasModel = soakValue(fams, "chronosync_node_model_round_id", n)
	s.offset, _ = soakValue(fams, "chronosync_node_offset_seconds", n)
	s.sigma, _ = soakValue(fams, "chronosync_node_offset_sigma_seconds", n)
	s.checked, _ = soakValue(fams, "chronosync_node_selfcheck_predictions_total", n)
	s.within, _ = soakValue(fams, "chronosync_node_selfcheck_within_3sigma_total", n)
	s.latency, s.hasLatency = soakValue(fams, "chronosync_round_latency_last_seconds", "")
	s.masterRound, _ = soakValue(fams, "chronosync_round_id", "")
	return s
}

// soakValue is the value of family name's series whose node label is
// node ("": the series without labels), and whether there is one.
func soakValue(fams map[string]*dto.MetricFamily, name, node string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "node" {
				got = l.GetValue()
			}
		}
		if got != node {
			continue
		}
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// soakReaderLine is one line of timepage/testdata/csoak.c: cumulative
// counts of the C reader's conversions.
type soakReaderLine struct {
	TNS              int64   `json:"t_ns"`
	Reads            uint64  `json:"reads"`
	OK               uint64  `json:"ok"`
	Stale            uint64  `json:"stale"`
	Failed           uint64  `json:"failed"`
	NoModel          uint64  `json:"no_model"`
	Torn             uint64  `json:"torn"`
	Err              uint64  `json:"err"`
	Consistent       uint64  `json:"consistent"`
	SeqRetries       uint64  `json:"seq_retries"`
	ChecksumFailures uint64  `json:"checksum_failures"`
	RoundBackwards   uint64  `json:"round_backwards"`
	RoundsSeen       uint64  `json:"rounds_seen"`
	LastRound        uint64  `json:"last_round"`
	LastOKNS         int64   `json:"last_ok_ns"`
	MaxAbsDevNS      int64   `json:"max_abs_dev_ns"`
	MaxSigmaNS       float64 `json:"max_sigma_ns"`
	Final            int     `json:"final"`
}

// parseReaderLines parses csoak's output, one JSON object a line.
func parseReaderLines(out string) ([]soakReaderLine, error) {
	var lines []soakReaderLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		var l soakReaderLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("csoak output line %d (%q): want one JSON object of counts: %w", n, sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

var soakLastRoundRE = regexp.MustCompile(`(?m)^Last round      : (\d+) at `)

// TestNodeServiceSoak runs issue 31's soak: a keyed cluster of four
// `chronosync node` processes, each in its own network namespace
// (real/netlab), running until stopped (duration 0) for $CHRONOSYNC_SOAK
// (default 30 s; `make soak`: 10 minutes), each serving its host: metrics
// on its namespace's address, a time page, a status socket, its own state
// directory. Meanwhile:
//
//   - a scraper GETs every node's /metrics every 5 s from inside its
//     namespace, parses it (prometheus expfmt) and logs one line a scrape
//     (each node's model round, offset, σ, self-check, and the master's
//     round latency); every scrape must answer, every node must have a
//     model by the end, and the master's rounds must advance;
//   - a C program built against include/chronosync_time.h
//     (timepage/testdata/csoak.c) converts CLOCK_REALTIME readings through
//     node 1's page in a tight loop (at nice 19, as a tracer beside the
//     node would) from the first model to 2 s after the stop: no torn copy
//     may pass the seqlock (checksum failures 0), no round id may go
//     backwards, no conversion may exhaust its retries, some must be ok
//     while the cluster runs, every one after node 1 stopped must be
//     stale (the node expires its model), and there must be some;
//   - halfway, `chronosync status --socket` asks every node; the master's
//     last round must be 1 or more.
//
// Then SIGTERM by PID: each node exits 0 and removes its socket; the
// master's offsets.jsonl reads strictly against its rounds.jsonl, every
// rank writes a summary.json that says the cluster was authenticated, and
// every page answers stale. Before issue 31 none of this could run:
// duration 0 was refused and a node served nothing while it ran.
func TestNodeServiceSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a four-node cluster for $" + envSoak + " (default 30s)")
	}
	dur, err := soakDuration()
	if err != nil {
		t.Fatal(err)
	}
	needs.Available(t, netlab.Available())
	needs.Command(t, "iproute2", "ip")
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	dir := t.TempDir()
	lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: soakNodes, Kind: netlab.Bridge})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	})

	// The C reader, built first: where gcc is missing its part is skipped
	// (the subtest c_reader says so), the rest runs.
	var csoak string
	if gcc, err := exec.LookPath("gcc"); err == nil {
		csoak = filepath.Join(dir, "csoak")
		root := filepath.Join("..", "..")
		out, err := exec.Command(gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I"+filepath.Join(root, "include"),
			"-o", csoak, filepath.Join(root, "timepage", "testdata", "csoak.c"), "-lm").CombinedOutput()
		if err != nil {
			t.Fatalf("gcc csoak.c: %v\n%s", err, out)
		}
	}

	// A keyed cluster of four, one namespace a node.
	addrs := make([]string, soakNodes)
	for i := range addrs {
		addrs[i] = lab.Addr(i).String()
	}
	write(t, filepath.Join(dir, "soak4.yaml"), soakScenario)
	if err := os.WriteFile(filepath.Join(dir, "cluster.key"), []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cluster := filepath.Join(dir, "cluster.yaml")
	write(t, cluster, fmt.Sprintf("scenario: soak4.yaml\naddresses: [%s]\nkey: cluster.key\n", strings.Join(addrs, ", ")))
	pages := make([]string, soakNodes)
	socks := make([]string, soakNodes)
	metricsURL := make([]string, soakNodes)
	nodes := make([]*soakProc, soakNodes)
	meter := busy.Start()
	start := time.Now()
	for i := range nodes {
		pages[i] = filepath.Join(dir, fmt.Sprintf("page%d", i))
		socks[i] = filepath.Join(dir, fmt.Sprintf("node%d.sock", i))
		metricsAddr := net.JoinHostPort(addrs[i], strconv.Itoa(soakMetricsPort))
		metricsURL[i] = "http://" + metricsAddr + "/metrics"
		cmd := exec.Command("ip", "netns", "exec", lab.NodeNS(i), bin, "node", "--cluster", cluster, "--rank", strconv.Itoa(i),
			"--out", filepath.Join(dir, "out"), "--metrics", metricsAddr, "--timepage", pages[i],
			"--status-socket", socks[i], "--state-dir", filepath.Join(dir, fmt.Sprintf("state%d", i)))
		nodes[i] = startSoakProc(t, fmt.Sprintf("node %d", i), cmd)
	}
	logs := func() string {
		var s []string
		for _, n := range nodes {
			s = append(s, fmt.Sprintf("--- %s (PID %d):\n%s", n.name, n.cmd.Process.Pid, n.out))
		}
		return strings.Join(s, "\n")
	}

	// Node 1's first model: the reader starts on it.
	var page *timepage.Reader
	for deadline := start.Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if page == nil {
			if fp, err := timepage.OpenFile(pages[1]); err == nil {
				t.Cleanup(func() { fp.Close() })
				if page, err = timepage.NewReader(fp); err != nil {
					t.Fatalf("node 1's page: %v", err)
				}
			}
		}
		if page != nil {
			if _, err := page.Load(); err == nil {
				break
			}
		}
		for _, n := range nodes {
			select {
			case <-n.done:
				t.Fatalf("%s exited before node 1 had a model: %v\n%s", n.name, n.err, logs())
			default:
			}
		}
		if time.Now().After(deadline) {
			meter.SkipIfBusy(t, "node 1 had no model 30 s after the start")
			t.Fatalf("node 1's page had no model 30 s after the start:\n%s", logs())
		}
	}
	t.Logf("node 1's first model %v after the start; soaking for %v", time.Since(start).Round(100*time.Millisecond), dur)
	soakStart := time.Now()

	var reader *soakProc
	if csoak != "" {
		// MAX_SECONDS is a safety net only: SIGTERM ends it.
		limit := (dur + 2*time.Minute).Seconds()
		reader = startSoakProc(t, "csoak", exec.Command(csoak, pages[1], strconv.FormatFloat(limit, 'f', 0, 64)))
		// A tracer does not own a core: the nodes come first.
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, reader.cmd.Process.Pid, 19); err != nil {
			t.Logf("nice csoak: %v", err)
		}
	}

	// The scraper: every node, every 5 s, until stopped, and once more
	// just before the stop.
	var (
		mu      sync.Mutex
		scrapes []soakScrape
	)
	clients := make([]*http.Client, soakNodes)
	for i := range clients {
		clients[i] = nsClient(lab, i)
	}
	scrapeAll := func() {
		sc := soakScrape{at: time.Since(soakStart).Round(time.Second), nodes: make([]soakSample, soakNodes)}
		for i, c := range clients {
			sc.nodes[i] = scrapeNode(c, metricsURL[i], i)
		}
		cols := make([]string, soakNodes)
		for i, s := range sc.nodes {
			cols[i] = fmt.Sprintf("n%d %s", i, s)
		}
		t.Logf("scrape t=%4.0fs | %s", sc.at.Seconds(), strings.Join(cols, " | "))
		mu.Lock()
		scrapes = append(scrapes, sc)
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	scraperDone := make(chan struct{})
	t.Cleanup(func() { cancel(); <-scraperDone })
	go func() {
		defer close(scraperDone)
		tick := time.NewTicker(soakScrapeEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				scrapeAll()
			}
		}
	}()

	// until sleeps until at; a node that exits before then fails the test
	// at once (a 10-minute soak need not run on without it).
	until := func(at time.Time) {
		for time.Now().Before(at) {
			for _, n := range nodes {
				select {
				case <-n.done:
					t.Fatalf("%s exited %v into the soak: %v\n%s", n.name, time.Since(soakStart).Round(time.Second), n.err, logs())
				default:
				}
			}
			time.Sleep(min(200*time.Millisecond, time.Until(at)))
		}
	}

	// Halfway: chronosync status of every node.
	until(soakStart.Add(dur / 2))
	var statusRound int
	for i, sock := range socks {
		out, err := exec.Command(bin, "status", "--socket", sock).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitDegraded) {
			t.Errorf("chronosync status --socket %s (node %d): %v\n%s", sock, i, err, out)
		}
		t.Logf("chronosync status --socket %s:\n%s", sock, out)
		if i == 0 {
			if m := soakLastRoundRE.FindSubmatch(out); m != nil {
				statusRound, _ = strconv.Atoi(string(m[1]))
			}
		}
	}
	if statusRound < 1 {
		meter.SkipIfBusy(t, fmt.Sprintf("the master's status says last round %d %v into the soak", statusRound, dur/2))
		t.Errorf("the master's status: last round %d %v into the soak, want 1 or more", statusRound, dur/2)
	}
	until(soakStart.Add(dur))

	// The stop: the scraper ended (a last scrape), SIGTERM to every node
	// by PID.
	cancel()
	<-scraperDone
	scrapeAll()
	stopAt := time.Now()
	for _, n := range nodes {
		if err := syscall.Kill(n.cmd.Process.Pid, syscall.SIGTERM); err != nil {
			t.Errorf("SIGTERM %s (PID %d): %v", n.name, n.cmd.Process.Pid, err)
		}
	}
	for _, n := range nodes {
		if code := n.exitCode(30 * time.Second); code != 0 {
			t.Errorf("%s (PID %d) exited %d after SIGTERM, want 0 (-1: not within 30 s, or killed):\n%s", n.name, n.cmd.Process.Pid, code, n.out)
		}
	}
	t.Logf("all four nodes exited %v after SIGTERM; the machine: %s", time.Since(stopAt).Round(10*time.Millisecond), meter.Reading())

	// The scrapes.
	mu.Lock()
	defer mu.Unlock()
	if want := int(dur / soakScrapeEvery); len(scrapes) < want {
		t.Errorf("%d scrapes in %v, want %d or more (one every %v)", len(scrapes), dur, want, soakScrapeEvery)
	}
	for _, sc := range scrapes {
		for i, s := range sc.nodes {
			if s.err != nil {
				t.Errorf("scrape at %v: node %d: %v", sc.at, i, s.err)
			}
		}
	}
	if len(scrapes) >= 2 {
		first, last := scrapes[0], scrapes[len(scrapes)-1]
		if last.nodes[0].masterRound <= first.nodes[0].masterRound {
			meter.SkipIfBusy(t, "the master's rounds did not advance between the scrapes")
			t.Errorf("the master's chronosync_round_id: %v at %v, %v at %v: want it to advance", first.nodes[0].masterRound, first.at, last.nodes[0].masterRound, last.at)
		}
		for i, s := range last.nodes {
			if s.err == nil && !s.hasModel {
				t.Errorf("node %d has no model in the last scrape (at %v)", i, last.at)
			}
		}
		if !last.nodes[0].hasLatency {
			t.Errorf("the master's last scrape has no chronosync_round_latency_last_seconds")
		}
	}

	// The files: sockets gone, the master's run files whole, every rank's
	// summary written, every page stale.
	for i, s := range socks {
		if _, err := os.Lstat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node %d's status socket after SIGTERM: %v, want it removed", i, err)
		}
	}
	rank0 := filepath.Join(dir, "out", "rank0")
	_, offs, err := offsets.ReadStrict(filepath.Join(rank0, harness.FileOffsets))
	if err != nil || len(offs) == 0 {
		t.Errorf("the master's offsets.jsonl: %d records, %v", len(offs), err)
	}
	_, _, rounds, err := offsets.ReadRounds(filepath.Join(rank0, harness.FileRounds))
	if err != nil || len(rounds) == 0 {
		t.Errorf("the master's rounds.jsonl: %d rounds, %v", len(rounds), err)
	}
	for i := range soakNodes {
		path := filepath.Join(dir, "out", fmt.Sprintf("rank%d", i), harness.FileSummary)
		var sum harness.Summary
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &sum)
		}
		switch {
		case err != nil:
			t.Errorf("rank %d's summary: %v", i, err)
		case sum.Real == nil || !sum.Real.Authenticated:
			t.Errorf("rank %d's summary does not say the cluster was authenticated:\n%s", i, b)
		case i == 0 && (sum.Sync == nil || sum.Sync.Rounds < statusRound):
			t.Errorf("the master's summary: %+v, want %d rounds or more (its status said so halfway)", sum.Sync, statusRound)
		case i == 0:
			var over []string
			for _, c := range sum.Conditions {
				if c.Over {
					over = append(over, fmt.Sprintf("%s %g %s > %g", c.Name, c.Value, c.Unit, c.Bound))
				}
			}
			t.Logf("the master's files: %d offset records, %d rounds in rounds.jsonl; summary.json: %d rounds, status %s %v", len(offs), len(rounds), sum.Sync.Rounds, sum.Status, over)
		}
	}
	for i, p := range pages {
		fp, err := timepage.OpenFile(p)
		if err != nil {
			t.Errorf("node %d's page after SIGTERM: %v, want it left for mapped readers", i, err)
			continue
		}
		r, err := timepage.NewReader(fp)
		if err == nil {
			_, _, err = r.ToGlobal(time.Now().UnixNano())
		}
		if !errors.Is(err, timepage.ErrStale) {
			t.Errorf("node %d's page after SIGTERM: %v, want %v (a node expires its model when it stops)", i, err, timepage.ErrStale)
		}
		fp.Close()
	}

	// The C reader: on past the stop, then stopped by SIGTERM.
	t.Run("c_reader", func(t *testing.T) {
		if reader == nil {
			needs.Command(t, "gcc", "gcc")
		}
		time.Sleep(soakReaderTail)
		if err := syscall.Kill(reader.cmd.Process.Pid, syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM csoak (PID %d): %v", reader.cmd.Process.Pid, err)
		}
		if code := reader.exitCode(10 * time.Second); code != 0 {
			t.Fatalf("csoak exited %d, want 0:\n%s", code, reader.out)
		}
		lines, err := parseReaderLines(reader.out.String())
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 || lines[len(lines)-1].Final != 1 {
			t.Fatalf("csoak printed no final line:\n%s", reader.out)
		}
		fin := lines[len(lines)-1]
		// The counts at the stop: the last line printed before SIGTERM.
		var atStop soakReaderLine
		for _, l := range lines {
			if l.TNS < stopAt.UnixNano() {
				atStop = l
			}
		}
		node1Exit := nodes[1].at
		ran := time.Duration(fin.TNS - soakStart.UnixNano())
		t.Logf("csoak on node 1's page for %v: %d reads (%.1f M/s), %d ok, %d stale (%d after the stop), %d failed, %d no model, "+
			"%d retries exhausted, %d errors; seqlock: %d consistent copies, %d retries, %d torn copies caught by the checksum; "+
			"%d rounds seen (last %d), %d backwards; ok answers: |global - CLOCK_REALTIME| ≤ %d ns, σ ≤ %.1f ns; last ok %v before node 1 exited",
			ran.Round(time.Second), fin.Reads, float64(fin.Reads)/ran.Seconds()/1e6, fin.OK, fin.Stale, fin.Stale-atStop.Stale, fin.Failed, fin.NoModel,
			fin.Torn, fin.Err, fin.Consistent, fin.SeqRetries, fin.ChecksumFailures,
			fin.RoundsSeen, fin.LastRound, fin.RoundBackwards, fin.MaxAbsDevNS, fin.MaxSigmaNS,
			node1Exit.Sub(time.Unix(0, fin.LastOKNS)).Round(time.Microsecond))
		if fin.ChecksumFailures != 0 || fin.RoundBackwards != 0 {
			t.Errorf("torn reads got past the seqlock: %d checksum failures, %d round ids backwards; want 0", fin.ChecksumFailures, fin.RoundBackwards)
		}
		if fin.Torn != 0 || fin.Err != 0 {
			t.Errorf("%d conversions exhausted their %d retries, %d failed with CHRONOSYNC_ERR; want 0", fin.Torn, 1000, fin.Err)
		}
		if atStop.OK == 0 {
			t.Errorf("no conversion was ok while the cluster ran (counts at the stop: %+v)", atStop)
		}
		if fin.RoundsSeen < 2 {
			t.Errorf("the reader saw %d rounds' models, want 2 or more: the page must follow the rounds", fin.RoundsSeen)
		}
		if fin.LastOKNS >= node1Exit.UnixNano() {
			t.Errorf("an ok conversion of a reading %v after node 1 exited: a stopped node's page must answer stale", time.Unix(0, fin.LastOKNS).Sub(node1Exit))
		}
		if fin.Stale <= atStop.Stale {
			t.Errorf("no stale answer after the stop (stale %d at the stop, %d at the end)", atStop.Stale, fin.Stale)
		}
		if d := math.Abs(float64(fin.MaxAbsDevNS)); d > 1e6 {
			t.Errorf("an ok conversion %v off CLOCK_REALTIME: every namespace reads one clock, so global time is CLOCK_REALTIME; want within 1 ms", time.Duration(d))
		}
	})
}
