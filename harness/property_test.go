//go:build !race

package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/scenario"
)

// propertyBound is the bound TestPropertyConvergence states: after the
// third round, every node's |offset error| stays within it.
const propertyBound = 1000 // ns

// genSyncScenario draws a small connected topology with random clocks
// (offsets ±1s, frequency errors ±200ppm) and symmetric links (delay ≤
// 100µs, jitter ≤ 50µs, loss ≤ 5%), running 4 short svm rounds.
func genSyncScenario(t *rapid.T) string {
	n := rapid.IntRange(3, 6).Draw(t, "nodes")
	topo := rapid.SampledFrom([]string{"full_mesh", "ring", "star"}).Draw(t, "topology")
	var b strings.Builder
	fmt.Fprintf(&b, "name: property\nseed: %d\nduration: 2600ms\nnodes: %d\n", rapid.Uint64Range(1, 1<<40).Draw(t, "seed"), n)
	b.WriteString("clocks:\n  default:\n    read_noise: 20ns\n  nodes:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - {node: %d, offset: %dus, drift_ppm: %d}\n", i,
			rapid.IntRange(-1_000_000, 1_000_000).Draw(t, "offset_us"), rapid.IntRange(-200, 200).Draw(t, "ppm"))
	}
	fmt.Fprintf(&b, "topology:\n  kind: %s\n", topo)
	delay := rapid.IntRange(1, 100).Draw(t, "delay_us")
	fmt.Fprintf(&b, "links:\n  default:\n    delay: %dus\n    jitter: %dus\n    loss: {random: %.1f%%}\n",
		delay, rapid.IntRange(0, 50).Draw(t, "jitter_us"), float64(rapid.IntRange(0, 50).Draw(t, "loss_permille"))/10)
	b.WriteString("protocol:\n  kind: sync\n  estimator: svm\n  cadence: 1ms\n  window: 500ms\n  rounds: 4\n  gather_deadline: 100ms\n")
	return b.String()
}

// TestPropertyConvergence: whatever the clocks, topology and symmetric
// links, every node's error from round 3 on stays within propertyBound. A
// failure prints the scenario (seed included), which replays with
// `chronosync run`; rapid keeps the failing draw under testdata/rapid.
func TestPropertyConvergence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		yml := genSyncScenario(t)
		sc, err := scenario.Parse("property.yaml", []byte(yml))
		if err != nil {
			t.Fatalf("generated scenario: %v\n%s", err, yml)
		}
		res, err := Run(sc, Options{Out: filepath.Join(tempDir(t), "run")})
		if err != nil {
			t.Fatalf("run: %v\n%s", err, yml)
		}
		on := res.Summary.Sync.Online
		if on.OffsetError.N == 0 || on.Unsolved > 0 || on.OffsetError.Max > propertyBound {
			t.Fatalf("error after round 3: max %.0f ns over %d samples, %d unsolved; want ≤ %d ns\nreproduce: save this as property.yaml and run `chronosync run property.yaml`\n%s",
				on.OffsetError.Max, on.OffsetError.N, on.Unsolved, propertyBound, yml)
		}
	})
}

// tempDir is a fresh directory per rapid draw, removed when the draw ends
// (a failing draw prints its scenario to reproduce it).
func tempDir(t *rapid.T) string {
	d, err := mkdirTemp()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// TestAsymmetryLimit shows the documented limit: a constant path asymmetry
// a (here 30µs one way, 10µs back) biases every estimator's offset by a/2,
// and nothing in the probes reveals it.
func TestAsymmetryLimit(t *testing.T) {
	const yml = `name: asymmetry
seed: 3
duration: 2600ms
nodes: 2
clocks:
  default: {offset: "uniform(-1ms, 1ms)", drift_ppm: "uniform(-100, 100)", read_noise: 20ns}
links:
  default: {delay: 10us}
  overrides:
    - {from: 0, to: 1, delay: 30us}
protocol: {kind: sync, cadence: 1ms, window: 500ms, rounds: 4}
`
	sc, err := scenario.Parse("asymmetry.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Run(sc, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	_, truth, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Estimate(dir, EstimateOptions{NoWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		errs, _ := groundtruth.Errors(r.Offsets(), truth, 0)
		if len(errs) == 0 {
			t.Fatalf("%s: nothing solved", r.Estimator)
		}
		for _, e := range errs {
			for _, v := range e.Offset {
				// Node 1 looks 10µs further ahead than it is, so its global
				// time comes out 10µs early.
				if v > -9_800 || v < -10_200 {
					t.Errorf("%s: round %d node %d error %.0f ns; want -a/2 = -10000 ns ± 200", r.Estimator, e.Round, e.Node, v)
				}
			}
		}
	}
}

func mkdirTemp() (string, error) { return os.MkdirTemp("", "chronosync-property-*") }
