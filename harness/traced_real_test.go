//go:build linux

package harness

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/netlab"
)

// realTrain is train4 cut to 8 s: the sync protocol from the start, ten
// training steps from 5 s, on the real backend's links.
const realTrain = `name: real-train
seed: 1
duration: 8s
nodes: 4
clocks:
  default:
    offset: uniform(-5ms, 5ms)
    drift_ppm: uniform(-100, 100)
    tracer: {offset: "uniform(-20ms, 20ms)", drift_ppm: "uniform(-50, 50)"}
topology: {kind: full_mesh}
workload: {kind: training, steps: 10, collectives_per_step: 4, start_delay: 5s, snapshot_period: 1s}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s, rounds: 6}
`

// TestRealTraced runs a traced training job on the real backend: its
// collectives are real TCP messages between the nodes' loops, so none can
// end anywhere before it started everywhere. The raw traces, each on its
// node's injected tracer clock (CLOCK_MONOTONIC_RAW through the model),
// must show violations, the combined trace none; every node finishes its
// steps; and the aligned events' uncertainties contain their errors
// (against the true time of each event's own tracer reading), or the run
// says that they do not.
func TestRealTraced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an 8 s real run")
	}
	needs.Available(t, netlab.Available())
	res, err := Run(parse(t, realTrain), Options{Out: filepath.Join(t.TempDir(), "run"), Backend: "real"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Print(&out)
	t.Logf("%s", out.String())
	tr := res.Summary.Trace
	if tr == nil {
		t.Fatal("no trace section in the summary")
	}
	if tr.Events != 4*(10*(4+8+12)) || len(tr.Unfinished) > 0 {
		t.Errorf("%d events, unfinished nodes %v; want every node's 10 steps of 4 collectives, 8 compute kernels and 12 launches", tr.Events, tr.Unfinished)
	}
	if tr.Raw.Violations == 0 {
		t.Errorf("raw traces: %+v; want violations (tracer clocks up to 20 ms apart)", tr.Raw)
	}
	if tr.Combined.Violations != 0 || tr.AlignedEvents != tr.Events {
		t.Errorf("combined: %+v, %d of %d events aligned; want no violation and every event aligned", tr.Combined, tr.AlignedEvents, tr.Events)
	}
	if share := tr.Within(); share < groundtruth.Target && !degradedFor(res.Summary, "aligned events beyond 3 reported σ") {
		t.Errorf("%.1f %% of the aligned events within 3σ, and the run did not say so (status %q)", 100*share, res.Summary.Status)
	}
}

// degradedFor reports whether s is degraded with condition name over its
// bound.
func degradedFor(s Summary, name string) bool {
	for _, c := range s.Conditions {
		if c.Name == name && c.Over {
			return s.Status == StatusDegraded
		}
	}
	return false
}
