package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/harness/pingrun"

	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

const small = `
name: small
seed: 3
duration: 2s
nodes: 3
clocks:
  default:
    offset: uniform(-1ms, 1ms)
    drift_ppm: uniform(-20, 20)
    read_noise: 10ns
links:
  default:
    delay: 100us
    jitter: 20us
    loss: {random: 2%}
faults:
  - {at: 500ms, kind: crash, node: 2, restart_after: 300ms}
protocol:
  kind: ping
  interval: 20ms
`

func parse(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("small.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runOnce(t *testing.T, sc *scenario.Scenario, opts Options) *Result {
	t.Helper()
	if opts.Out == "" {
		opts.Out = filepath.Join(t.TempDir(), "run")
	}
	res, err := Run(sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeterminism runs the same scenario and seed under GOMAXPROCS=1 and
// GOMAXPROCS=2 and requires the same event-log hash and the same bytes in
// every deterministic artifact; another seed must give another hash.
func TestDeterminism(t *testing.T) {
	sc := parse(t, small)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var results []*Result
	for _, procs := range []int{1, 2, 1} {
		runtime.GOMAXPROCS(procs)
		results = append(results, runOnce(t, sc, Options{EventLog: true}))
	}
	a := results[0]
	if a.Summary.Events < 1000 {
		t.Fatalf("only %d events: the scenario did no real work", a.Summary.Events)
	}
	for i, b := range results[1:] {
		if a.Manifest.EventHash != b.Manifest.EventHash || a.Summary.Events != b.Summary.Events {
			t.Fatalf("run %d: hash %s (%d events), run 0: %s (%d events)", i+1, b.Manifest.EventHash, b.Summary.Events, a.Manifest.EventHash, a.Summary.Events)
		}
		for _, f := range []string{FileManifest, FileSummary, FileScenario, FileLog, FileEvents, FileCheckpoints} {
			if !bytes.Equal(read(t, filepath.Join(a.Dir, f)), read(t, filepath.Join(b.Dir, f))) {
				t.Errorf("run %d: %s differs", i+1, f)
			}
		}
	}
	seed := uint64(4)
	other := runOnce(t, sc, Options{Seed: &seed})
	if other.Manifest.EventHash == a.Manifest.EventHash {
		t.Fatalf("seed 4 gave the same hash %s as seed 3", a.Manifest.EventHash)
	}
	if other.Manifest.Seed != 4 || !strings.Contains(string(read(t, filepath.Join(other.Dir, FileScenario))), "seed: 4") {
		t.Fatalf("the run directory does not record the overriding seed")
	}
}

func TestReplay(t *testing.T) {
	sc := parse(t, small)
	res := runOnce(t, sc, Options{EventLog: true})
	rep, err := Replay(res.Dir, ReplayOptions{})
	if err != nil {
		t.Fatalf("replay of an untouched run: %v", err)
	}
	if rep.Hash != res.Manifest.EventHash || rep.Events != res.Summary.Events {
		t.Fatalf("replay reports %s/%d, run had %s/%d", rep.Hash, rep.Events, res.Manifest.EventHash, res.Summary.Events)
	}

	// Change what the recorded scenario says: the replay diverges, and the
	// error names the first differing event with both lines.
	changed := strings.Replace(small, "jitter: 20us", "jitter: 21us", 1)
	if err := os.WriteFile(filepath.Join(res.Dir, FileScenario), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Replay(res.Dir, ReplayOptions{})
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("replay of a changed scenario: err = %v, want ErrDiverged", err)
	}
	for _, want := range []string{"at event #", "recorded: ", "replayed: ", "scenario.yaml differs from the scenario recorded in manifest.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("divergence error lacks %q:\n%v", want, err)
		}
	}
}

// TestReplayCheckpointsOnly: a run without events.log.gz (the default)
// replays from its checkpoints; changed, the replay names the block of
// events where they part, and --trace-events writes the replay's log,
// whose lines of that block hold the first differing event.
func TestReplayCheckpointsOnly(t *testing.T) {
	sc := parse(t, small)
	res := runOnce(t, sc, Options{})
	if _, err := os.Stat(filepath.Join(res.Dir, FileEvents)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a run without EventLog kept %s: %v", FileEvents, err)
	}
	if _, err := Replay(res.Dir, ReplayOptions{}); err != nil {
		t.Fatalf("replay from the checkpoints: %v", err)
	}
	changed := strings.Replace(small, "jitter: 20us", "jitter: 21us", 1)
	if err := os.WriteFile(filepath.Join(res.Dir, FileScenario), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "replayed.txt")
	_, err := Replay(res.Dir, ReplayOptions{TraceEvents: trace})
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("replay of a changed scenario: err = %v, want ErrDiverged", err)
	}
	var from, to int
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "one of #"):], "one of #%d..#%d", &from, &to); serr != nil || to-from != 1023 {
		t.Fatalf("divergence error does not name a block of 1024 events (%v):\n%v", serr, err)
	}
	if !strings.Contains(err.Error(), "lines "+strconv.Itoa(from)+" to "+strconv.Itoa(to)+" of "+trace) {
		t.Errorf("divergence error does not point into the replay's log:\n%v", err)
	}
	if lines := strings.Count(string(read(t, trace)), "\n"); lines < to {
		t.Errorf("the replay's log has %d lines, fewer than the block's end %d", lines, to)
	}
}

func TestFailedRunLeavesNoDirectory(t *testing.T) {
	sc := parse(t, small)
	out := filepath.Join(t.TempDir(), "run")
	// A trace-events path that cannot be created fails the run midway.
	_, err := Run(sc, Options{Out: out, TraceEvents: filepath.Join(t.TempDir(), "missing", "dir", "events.txt")})
	if err == nil {
		t.Fatal("run with an uncreatable --trace-events file succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Fatalf("a failed run left %v behind", entries)
	}
	// A previous complete run directory survives a failed rerun.
	good := runOnce(t, sc, Options{Out: out})
	if _, err := Run(sc, Options{Out: out, TraceEvents: "/nonexistent/dir/x"}); err == nil {
		t.Fatal("failing rerun succeeded")
	}
	if _, err := ReadManifest(good.Dir); err != nil {
		t.Fatalf("the earlier run directory was damaged: %v", err)
	}
}

func TestBackends(t *testing.T) {
	sc := parse(t, small)
	// The kernel's netem path does not exist: the real backend refuses it
	// up front, naming it, before it builds anything.
	sc.Impairment = scenario.ImpairNetem
	tests := []struct {
		backend string
		wantErr string
	}{
		{"real", "impairment netem: the kernel netem path is not implemented"},
		{"quantum", `unknown backend "quantum"`},
	}
	for _, tc := range tests {
		_, err := Run(sc, Options{Out: filepath.Join(t.TempDir(), "r"), Backend: tc.backend})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("backend %s: err = %v, want %q", tc.backend, err, tc.wantErr)
		}
	}
}

func TestPingSummaryAgainstTruth(t *testing.T) {
	res := runOnce(t, parse(t, small), Options{})
	p := res.Summary.Ping
	if p == nil || p.Sent == 0 {
		t.Fatal("no ping summary")
	}
	// 2% random loss each way, plus node 2 down for 300ms of 2s.
	if p.LossFraction < 0.02 || p.LossFraction > 0.15 {
		t.Errorf("loss fraction %.3f, want between 2%% and 15%%", p.LossFraction)
	}
	// RTT: 2×100µs ± 2×20µs of jitter.
	if p.RTT.Min < 160e3 || p.RTT.Max > 240e3 {
		t.Errorf("rtt in [%v, %v]ns, want within [160µs, 240µs]", p.RTT.Min, p.RTT.Max)
	}
	// The midpoint estimate is off by half the jitter asymmetry: < 20µs,
	// far below the ±1ms clock offsets it removes. The exchange is
	// interleaved: a reply completes the previous exchange, which needs
	// that previous reply too, so a lost datagram costs up to two.
	if e := p.OffsetError; e.Max > 20e3 || e.N > p.Received || e.N < p.Received*8/10 {
		t.Errorf("offset error max %vns over %d exchanges (want < 20µs over 80-100%% of %d replies)", e.Max, e.N, p.Received)
	}
	n := res.Summary.Network
	if n.Lost == 0 || n.Dropped["loss"] != n.Lost {
		t.Errorf("link models lost %d, drops by reason say %d lost: want equal and > 0", n.Lost, n.Dropped["loss"])
	}
	if n.Dropped["nodedown"] == 0 {
		t.Errorf("no nodedown drops although node 2 was down for 300ms: %v", n.Dropped)
	}
}

func TestRunNeverReplacesOtherDirectories(t *testing.T) {
	sc := parse(t, small)
	dir := t.TempDir()
	precious := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(sc, Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "not a chronosync run directory") {
		t.Fatalf("run into a non-run directory: err = %v", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("the directory's file is gone: %v", err)
	}
	// An empty directory, or an earlier run, may be replaced.
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	runOnce(t, sc, Options{Out: empty})
	runOnce(t, sc, Options{Out: empty})
}

// panicking is a protocol whose node 1 panics at its first timer after
// 700ms.
type panicking struct{ *pingrun.Adapter }

func (p *panicking) Program(id world.NodeID) world.Program {
	inner := p.Adapter.Program(id)
	return world.ProgramFunc(func(env world.Env) error {
		if id == 1 {
			env.AfterFunc(700*time.Millisecond, func() { panic("protocol bug") })
		}
		return inner.Start(env)
	})
}

func TestFailureKeepsLogsAndSaysHowToReproduce(t *testing.T) {
	sc := parse(t, small)
	out := filepath.Join(t.TempDir(), "run")
	p := &panicking{testPing()}
	_, err := Run(sc, Options{Out: out, ScenarioFile: "small.yaml", protocol: p, EventLog: true})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	if f.Virtual < 699*time.Millisecond || f.Virtual > 701*time.Millisecond || f.Panic != "protocol bug" {
		t.Fatalf("failure at %v with %q, want at about 700ms (node 1 drifts) with the panic's value", f.Virtual, f.Panic)
	}
	for _, want := range []string{"reproduce with: chronosync run small.yaml --seed 3", out} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	text := string(read(t, filepath.Join(out, FileFailure)))
	if !strings.Contains(text, "panic: protocol bug") || !strings.Contains(text, "harness_test.go") {
		t.Errorf("failure.txt lacks the panic or its stack:\n%s", text)
	}
	if len(read(t, filepath.Join(out, FileEvents))) == 0 || len(read(t, filepath.Join(out, FileLog))) == 0 {
		t.Error("the failed run's logs were not kept")
	}
	// The failed run's directory may be replaced by the next run.
	runOnce(t, sc, Options{Out: out})
}
