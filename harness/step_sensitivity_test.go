//go:build !race

package harness

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/scenario"
)

// TestStepSensitivity is the sweep behind docs/sync-protocol.md's table of
// the smallest clock step found and the largest missed, by the links'
// jitter: a node of a 5-node mesh (or the reference) steps by each size
// from 100 ns to 20 µs, forward and back, inside a 1 s window, on links of
// 0, 5, 15 and 30 µs pareto jitter; a step counts as found when the node's
// record carries it within 3σ of its size. Every run must still be
// calibrated or fail its self-check. It takes minutes: `make
// step-sensitivity` runs it (CHRONOSYNC_SWEEP=1).
func TestStepSensitivity(t *testing.T) {
	if os.Getenv("CHRONOSYNC_SWEEP") == "" {
		t.Skip("a sweep of minutes: make step-sensitivity")
	}
	sizes := []time.Duration{100, 200, 500, 1000, 2000, 5000, 10000, 20000}
	t.Logf("| jitter | node | found | smallest found | largest missed | runs calibrated or flagged |")
	t.Logf("|---|---|---|---|---|---|")
	for _, jitter := range []int{0, 5, 15, 30} {
		for _, node := range []int{3, 0} {
			var found, missed []time.Duration
			honest := 0
			for i, size := range sizes {
				for _, sign := range []time.Duration{1, -1} {
					by := sign * size
					yml := fmt.Sprintf(`name: step-sensitivity
seed: %d
duration: 5500ms
nodes: 5
clocks:
  default: {offset: "uniform(-5ms, 5ms)", drift_ppm: "uniform(-100, 100)", wander_ppm: 0.01, read_noise: 20ns}
topology: {kind: full_mesh}
links:
  default: {delay: 30us, jitter: %dus, distribution: pareto, loss: {random: 0.2%%}}
protocol: {kind: sync, estimator: svm, cadence: 1ms, window: 1s, rounds: 5}
faults:
  - {at: %dms, kind: clock_step, node: %d, by: %v}
`, 1+i, jitter, 3100+97*i, node, by)
					sc, err := scenario.Parse("sweep.yaml", []byte(yml))
					if err != nil {
						t.Fatal(err)
					}
					dir := filepath.Join(t.TempDir(), "run")
					res, err := Run(sc, Options{Out: dir})
					if err != nil {
						t.Fatal(err)
					}
					_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
					if err != nil {
						t.Fatal(err)
					}
					ok := false
					for _, o := range offs {
						for _, st := range o.Steps {
							if o.NodeID == node && math.Abs(st.SizeNS-float64(by)) <= 3*st.SizeUncertaintyNS+0.05*math.Abs(float64(by)) && st.SizeUncertaintyNS < math.Abs(st.SizeNS) {
								ok = true
							}
						}
					}
					if ok {
						found = append(found, by)
					} else {
						missed = append(missed, by)
					}
					sy := res.Summary.Sync
					if sy.Calibration.Calibrated() || (sy.SelfCheck != nil && sy.SelfCheck.Fails()) {
						honest++
					} else {
						t.Errorf("jitter %d µs, node %d, step %v: a silent miss (%.1f %% within 3σ)", jitter, node, by, 100*sy.Calibration.Within3)
					}
				}
			}
			who := fmt.Sprintf("node %d", node)
			if node == 0 {
				who = "the reference"
			}
			t.Logf("| %d µs | %s | %d of %d | %s | %s | %d of %d |", jitter, who, len(found), len(found)+len(missed),
				smallest(found), strings.TrimSpace(largest(missed)), honest, 2*len(sizes))
		}
	}
}
