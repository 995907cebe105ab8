package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/scenario"
)

// twoStepsYAML is three nodes with 1 s windows whose node %[1]d steps its
// clock twice in round 4's window, 54 ms apart; links jitter by %[2]s.
const twoStepsYAML = `name: two-steps
seed: 2
duration: 5s
nodes: 3
clocks:
  default: {read_noise: 20ns, tracer: {read_noise: 10ns}}
links:
  default: {delay: 10us, jitter: %[2]s, distribution: pareto}
workload:
  kind: training
  steps: 3
  collectives_per_step: 1
  compute_duration: 20us
  collective_duration: 20us
  start_delay: 2500ms
  snapshot_period: 1s
  snapshot_burst: 4
protocol: {kind: sync, estimator: svm, cadence: 1ms, window: 1s, rounds: 4}
faults:
  - {at: 3.047s, kind: clock_step, node: %[1]d, by: -2.4713ms}
  - {at: 3.101s, kind: clock_step, node: %[1]d, by: 18.715088ms}
`

// TestTwoStepsOfOneClock: a clock that steps −2.47 ms and then +18.7 ms
// 54 ms later has both steps recorded on it, each within 3 of its σ, and
// the run is calibrated. When the edges' brackets were all mapped with the
// models after both steps, the reference's first step fell into two
// clusters of half its edges each, neither said who stepped, and the
// other nodes were left 2.47 ms off with a self-check that passed.
func TestTwoStepsOfOneClock(t *testing.T) {
	want := []float64{-2.4713e6, 18.715088e6}
	for _, tc := range []struct {
		node   int
		jitter string
	}{{0, "0us"}, {0, "5us"}, {1, "0us"}, {2, "5us"}} {
		t.Run(fmt.Sprintf("node%d-jitter%s", tc.node, tc.jitter), func(t *testing.T) {
			sc, err := scenario.Parse("two-steps.yaml", fmt.Appendf(nil, twoStepsYAML, tc.node, tc.jitter))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(sc, Options{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c := res.Summary.Sync.Calibration; !c.Calibrated() {
				t.Errorf("not calibrated: %.1f %% of %d within 3σ, worst %.1fσ", 100*c.Within3, c.Points, c.Sigmas.Max)
			}
			_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
			if err != nil {
				t.Fatal(err)
			}
			var got []offsets.Step
			for _, o := range offs {
				for _, st := range o.Steps {
					if o.NodeID != tc.node {
						t.Errorf("round %d: a step of %.0f ns on node %d, which did not step", o.RoundID, st.SizeNS, o.NodeID)
						continue
					}
					got = append(got, st)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d steps recorded on node %d (%+v); want %d", len(got), tc.node, got, len(want))
			}
			for i, st := range got {
				if math.Abs(st.SizeNS-want[i]) > 3*st.SizeUncertaintyNS+1 {
					t.Errorf("step %d: %.0f ± %.1f ns; truth %.0f", i, st.SizeNS, st.SizeUncertaintyNS, want[i])
				}
			}
		})
	}
}
