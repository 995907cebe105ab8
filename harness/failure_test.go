package harness

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/world"
)

// faulty is a ping protocol that panics in one of its methods, or whose
// finish returns an error.
type faulty struct {
	*pingrun.Adapter
	panicIn   string // "attach", "program", "finish", "summarize", "program+finish" or ""
	finishErr error
	dir       string // the (staging) directory it attached in
	// With "program", node panicNode panics panicAt into the run.
	panicNode world.NodeID
	panicAt   time.Duration
}

func newFaulty(panicIn string) *faulty {
	return &faulty{Adapter: testPing(), panicIn: panicIn,
		panicNode: 1, panicAt: 700 * time.Millisecond}
}

func (p *faulty) Attach(w truth, dir string) error {
	if p.panicIn == "attach" {
		panic("attach bug")
	}
	p.dir = dir
	return p.Adapter.Attach(w, dir)
}

func (p *faulty) Program(id world.NodeID) world.Program {
	inner := p.Adapter.Program(id)
	return world.ProgramFunc(func(env world.Env) error {
		if strings.HasPrefix(p.panicIn, "program") && id == p.panicNode {
			env.AfterFunc(p.panicAt, func() { panic("program bug") })
		}
		return inner.Start(env)
	})
}

func (p *faulty) Finish() error {
	if p.panicIn == "finish" || p.panicIn == "program+finish" {
		panic("finish bug in " + p.dir)
	}
	if p.panicIn == "finish goroutine" {
		// What combine returns for a panic in one of its goroutines.
		return fmt.Errorf("combine: %w", &combine.PanicError{What: "rewriting node0.xplane.pb", Value: "worker bug", Stack: debug.Stack()})
	}
	return p.finishErr
}

func (p *faulty) Summarize(s engine.Sections) {
	if p.panicIn == "summarize" {
		panic("summarize bug")
	}
	p.Adapter.Summarize(s)
}

// testPing is the ping adapter of the tests' protocols: a ping every
// 20ms, of 64 bytes.
func testPing() *pingrun.Adapter {
	a, err := pingrun.NewAdapter(ping.Config{Interval: 20 * time.Millisecond, Payload: 64})
	if err != nil {
		panic(err)
	}
	return a
}

// stagingLeft lists the staging directories of out left in its parent.
func stagingLeft(t *testing.T, out string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+filepath.Base(out)+".tmp-") {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestPanicInEveryPhase: a panic in any phase of a run, not only in the
// simulation, writes failure.txt with the phase and the command that
// reproduces it, keeps the run's logs in the run directory and leaves no
// staging directory behind.
func TestPanicInEveryPhase(t *testing.T) {
	cases := []struct {
		panicIn, phase, value string
	}{
		{"attach", phaseSetup, "attach bug"},
		{"program", phaseSimulation, "program bug"},
		// The panic names the staging directory; failure.txt and the
		// error name the run directory instead.
		{"finish", phaseRecord, "finish bug in RUN"},
		{"summarize", phaseSummary, "summarize bug"},
		// A panic in a goroutine of combine comes back as an error.
		{"finish goroutine", phaseRecord, "rewriting node0.xplane.pb: worker bug"},
		// A panic while recording the outputs of a simulation that
		// panicked is added to the failure, not put in its place.
		{"program+finish", phaseSimulation, "program bug"},
	}
	sc := parse(t, small)
	for _, tc := range cases {
		t.Run(tc.panicIn, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			tc.value = strings.ReplaceAll(tc.value, "RUN", out)
			_, err := Run(sc, Options{Out: out, ScenarioFile: "small.yaml", protocol: newFaulty(tc.panicIn)})
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("err = %v, want a *Failure", err)
			}
			if f.Phase != tc.phase || !strings.HasPrefix(f.Panic, tc.value) || f.Dir != out {
				t.Errorf("failure %s with %q in %s, want %s with %q in %s", f.Phase, f.Panic, f.Dir, tc.phase, tc.value, out)
			}
			if tc.panicIn == "program+finish" {
				want := "also: record outputs after the failure: panic: finish bug in " + out + "\n"
				if !strings.Contains(err.Error()+"\n", want) || !strings.Contains(string(read(t, filepath.Join(out, FileFailure))), want) {
					t.Errorf("the second panic is not reported as %q: %v", want, err)
				}
			}
			text := string(read(t, filepath.Join(out, FileFailure)))
			for _, want := range []string{
				"failed " + tc.phase + " at virtual time ",
				"panic: " + tc.value,
				"reproduce with: chronosync run small.yaml --seed 3 --trace-events events.txt\n",
				"failure_test.go", // the stack
			} {
				if !strings.Contains(text, want) {
					t.Errorf("failure.txt lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, ".tmp-") {
				t.Errorf("failure.txt names the staging directory:\n%s", text)
			}
			if _, err := os.Stat(filepath.Join(out, FileLog)); err != nil {
				t.Errorf("the run log was not kept: %v", err)
			}
			if left := stagingLeft(t, out); len(left) > 0 {
				t.Errorf("staging directories left behind: %q", left)
			}
		})
	}
}

// TestNoStagingLeftBehind: a run that ends in an error (not a panic) or
// succeeds leaves no staging directory; one that fails with an error
// leaves no run directory either.
func TestNoStagingLeftBehind(t *testing.T) {
	sc := parse(t, small)
	cases := []struct {
		name    string
		opts    func(dir string) Options
		wantErr string
	}{
		{"success", func(string) Options { return Options{} }, ""},
		{"finish error", func(string) Options {
			p := newFaulty("")
			p.finishErr = errors.New("disk full")
			return Options{protocol: p}
		}, "record outputs: disk full"},
		{"setup error", func(dir string) Options {
			return Options{TraceEvents: filepath.Join(dir, "missing", "events.txt")}
		}, "create --trace-events file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tc.opts(dir)
			opts.Out = filepath.Join(dir, "run")
			_, err := Run(sc, opts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			var f *Failure
			if errors.As(err, &f) {
				t.Fatalf("err = %v: a *Failure, want a plain error", err)
			}
			if _, serr := os.Stat(opts.Out); tc.wantErr != "" && !errors.Is(serr, fs.ErrNotExist) {
				t.Errorf("a failed run left its directory: %v", serr)
			}
			if left := stagingLeft(t, opts.Out); len(left) > 0 {
				t.Errorf("staging directories left behind: %q", left)
			}
		})
	}
}

// traced3 is a small traced run: three nodes, five steps of four
// collectives.
const traced3 = `name: traced3
seed: 5
duration: 4s
nodes: 3
clocks:
  default:
    offset: "uniform(-3ms, 3ms)"
    drift_ppm: "uniform(-80, 80)"
    read_noise: 20ns
    tracer: {offset: "uniform(-10ms, 10ms)", drift_ppm: "uniform(-30, 30)"}
links:
  default: {delay: 20us, jitter: 5us}
workload:
  kind: training
  steps: 5
  collectives_per_step: 4
  start_delay: 2500ms
  snapshot_period: 1s
protocol: {kind: sync, cadence: 1ms, window: 1s, rounds: 3}
`

// TestRunNamesFinalPaths: no file of a finished traced run names the
// staging directory it was written in (gzipped files read unzipped), and
// the validate reports name the traces relative to the run directory.
func TestRunNamesFinalPaths(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	runOnce(t, parse(t, traced3), Options{Out: out})
	staging := []byte("." + filepath.Base(out) + ".tmp-")
	files := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b := read(t, path)
		if strings.HasSuffix(path, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return err
			}
			if b, err = io.ReadAll(zr); err != nil {
				return err
			}
		}
		if bytes.Contains(b, staging) {
			t.Errorf("%s names the staging directory", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("%d files in the run directory, want a traced run's", files)
	}
	for _, name := range []string{syncrun.FileRawValidate, "combined.validate.json"} {
		var rep validate.Report
		if err := json.Unmarshal(read(t, filepath.Join(out, name)), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Nodes) != 3 || rep.NodesSeen != 3 || rep.NodesDeclared != 3 || rep.Warnings != 0 {
			t.Errorf("%s: %d nodes, %d seen of %d declared, %d warnings; want 3 of 3, none", name, len(rep.Nodes), rep.NodesSeen, rep.NodesDeclared, rep.Warnings)
		}
		for i, n := range rep.Nodes {
			if want := fmt.Sprintf("node%d.xplane.pb", i); n.Source != want {
				t.Errorf("%s: node %d's source %q, want %q", name, n.ID, n.Source, want)
			}
		}
	}
}
