//go:build !race

package harness

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/scenario"
)

// genTraceScenario draws a traced run: 2–5 nodes on a full mesh with host
// clocks ±5ms and ±100ppm off, tracer clocks ±20ms and ±50ppm off their
// host clocks, links of 10–100µs delay, ≤ 30µs jitter and ≤ 1% loss, and
// a training workload of 2–8 steps of 1–8 collectives whose kernels last
// 20–300µs, starting once two 1s sync rounds are done, and snapshots every
// 1s in bursts of 3–6 pairs.
func genTraceScenario(t *rapid.T) string {
	n := rapid.IntRange(2, 5).Draw(t, "nodes")
	var b strings.Builder
	fmt.Fprintf(&b, "name: trace-property\nseed: %d\nduration: 4s\nnodes: %d\n", rapid.Uint64Range(1, 1<<40).Draw(t, "seed"), n)
	b.WriteString("clocks:\n  default:\n    read_noise: 20ns\n  nodes:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - {node: %d, offset: %dus, drift_ppm: %d, tracer: {offset: %dus, drift_ppm: %d, read_noise: 10ns}}\n", i,
			rapid.IntRange(-5000, 5000).Draw(t, "offset_us"), rapid.IntRange(-100, 100).Draw(t, "ppm"),
			rapid.IntRange(-20000, 20000).Draw(t, "tracer_offset_us"), rapid.IntRange(-50, 50).Draw(t, "tracer_ppm"))
	}
	fmt.Fprintf(&b, "links:\n  default:\n    delay: %dus\n    jitter: %dus\n    loss: {random: %.1f%%}\n",
		rapid.IntRange(10, 100).Draw(t, "delay_us"), rapid.IntRange(0, 30).Draw(t, "jitter_us"),
		float64(rapid.IntRange(0, 10).Draw(t, "loss_permille"))/10)
	fmt.Fprintf(&b, "workload:\n  kind: training\n  steps: %d\n  collectives_per_step: %d\n  compute_duration: %dus\n  collective_duration: %dus\n  start_delay: 2500ms\n  snapshot_period: 1s\n  snapshot_burst: %d\n",
		rapid.IntRange(2, 8).Draw(t, "steps"), rapid.IntRange(1, 8).Draw(t, "collectives"),
		rapid.IntRange(20, 300).Draw(t, "compute_us"), rapid.IntRange(20, 300).Draw(t, "collective_us"),
		rapid.IntRange(3, 6).Draw(t, "snapshot_burst"))
	b.WriteString("protocol:\n  kind: sync\n  estimator: svm\n  cadence: 1ms\n  window: 1s\n  rounds: 3\n")
	return b.String()
}

// TestPropertyTrace: whatever the clocks, links and workload within
// genTraceScenario's bounds, the combined trace has no collective
// happens-before violation, every node's workload finished, and every
// aligned event lies within traceSigmaBound of its reported uncertainties
// of its true start. A failure prints the scenario, which replays with
// `chronosync run`.
func TestPropertyTrace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		yml := genTraceScenario(t)
		sc, err := scenario.Parse("trace-property.yaml", []byte(yml))
		if err != nil {
			t.Fatalf("generated scenario: %v\n%s", err, yml)
		}
		res, err := Run(sc, Options{Out: filepath.Join(tempDir(t), "run")})
		if err != nil {
			t.Fatalf("run: %v\n%s", err, yml)
		}
		tr := res.Summary.Trace
		switch {
		case tr == nil:
			t.Fatalf("no trace summary\n%s", yml)
		case len(tr.Unfinished) > 0 || tr.Events == 0 || tr.AlignedEvents != tr.Events:
			t.Fatalf("workload unfinished on %v, %d events, %d aligned\n%s", tr.Unfinished, tr.Events, tr.AlignedEvents, yml)
		case tr.Combined.Violations != 0:
			t.Fatalf("combined trace: %d violations\nreproduce: save this as trace-property.yaml and run `chronosync run trace-property.yaml`\n%s", tr.Combined.Violations, yml)
		case tr.ErrorSigmas.Max > traceSigmaBound:
			t.Fatalf("an aligned event lies %.2f reported σ (%.0f ns) from its true start; want ≤ %d σ\nreproduce: save this as trace-property.yaml and run `chronosync run trace-property.yaml`\n%s",
				tr.ErrorSigmas.Max, tr.ErrorNS.Max, traceSigmaBound, yml)
		}
	})
}

// TestKnownTraceDraws replays the draws of TestPropertyTrace that once
// failed (testdata/known/*.yaml) and holds them to its checks.
func TestKnownTraceDraws(t *testing.T) {
	files, err := filepath.Glob("../testdata/known/trace-property-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no known draws: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(sc, Options{Out: filepath.Join(t.TempDir(), "run")})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Summary.Trace
			t.Logf("|aligned − true start| max %.0f ns, %.2f reported σ", tr.ErrorNS.Max, tr.ErrorSigmas.Max)
			if tr.Combined.Violations != 0 || tr.AlignedEvents != tr.Events || tr.ErrorSigmas.Max > traceSigmaBound || tr.Within() < groundtruth.Target {
				t.Errorf("%d violations, %d of %d events aligned, an event %.2f reported σ off, %.1f %% within 3σ; want 0, all, ≤ %d σ, ≥ %.0f %%",
					tr.Combined.Violations, tr.AlignedEvents, tr.Events, tr.ErrorSigmas.Max, 100*tr.Within(), traceSigmaBound, 100*groundtruth.Target)
			}
		})
	}
}
