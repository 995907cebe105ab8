package harness

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// selfCheckYAML is five nodes on a mesh, 1 s windows; node 2 steps its
// clock by 200 µs inside round 4's window.
const selfCheckYAML = `name: selfcheck
seed: 4
duration: 6500ms
nodes: 5
clocks:
  default: {offset: "uniform(-5ms, 5ms)", drift_ppm: "uniform(-100, 100)", read_noise: 20ns}
topology: {kind: full_mesh}
links:
  default: {delay: 30us, jitter: 5us, distribution: pareto}
faults:
  - {at: 3400ms, kind: clock_step, node: 2, by: 200us}
`

// TestSelfCheckSaysMiss: when the detectors find the step, both the
// truth and the self-check say the run is calibrated, and the summary
// names the step; with step_threshold (a floor under the steps taken)
// set above it, the step goes unrecorded, the truth says the σ understate
// the errors, and the self-check, which needs no truth, says so too,
// naming node 2, and the run is degraded.
func TestSelfCheckSaysMiss(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		calibrated     bool
		print          []string
	}{
		{"found", "protocol: {kind: sync, cadence: 1ms, window: 1s, rounds: 6}\n", true,
			[]string{"clock step: node 2 by +200.", "self-check (no ground truth):", "status: ok"}},
		{"not taken", "protocol: {kind: sync, cadence: 1ms, window: 1s, rounds: 6, step_threshold: 10ms}\n", false,
			[]string{"NOT CALIBRATED", "self-check (no ground truth):", "FAILS, the σ this run reports understate its errors on node 2", "status: degraded",
				"warning: self-check predictions beyond 3σ"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("selfcheck.yaml", []byte(selfCheckYAML+tc.protocol))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(sc, Options{Out: filepath.Join(t.TempDir(), "run")})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			res.Print(&b)
			out := b.String()
			sy := res.Summary.Sync
			if sy.Calibration.Calibrated() != tc.calibrated || sy.SelfCheck == nil || sy.SelfCheck.Fails() == tc.calibrated {
				t.Errorf("truth calibrated %v, self-check fails %v; want %v and %v\n%s", sy.Calibration.Calibrated(), sy.SelfCheck != nil && sy.SelfCheck.Fails(), tc.calibrated, !tc.calibrated, out)
			}
			for _, want := range tc.print {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
