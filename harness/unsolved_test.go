package harness

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// unsolvedYAML is a 6-node ring whose rounds lose nodes to faults.
const unsolvedYAML = `name: unsolved
seed: 1
duration: 13s
nodes: 6
clocks:
  default: {offset: "uniform(-5ms, 5ms)", drift_ppm: "uniform(-100, 100)", read_noise: 20ns}
topology: {kind: ring}
protocol: {kind: sync, cadence: 1ms, window: 2s, rounds: 5}
links:
  default: {delay: 50us, jitter: 5us}
`

// TestUnsolvedRoundsSaid: a round that leaves nodes without a model is
// printed with why; a scheduled fault that explains it keeps the run ok,
// and without one the run is degraded.
func TestUnsolvedRoundsSaid(t *testing.T) {
	tests := []struct {
		name, extra, status string
		print               []string
	}{
		{"the reference cut off by a partition", "faults:\n  - {at: 4s, kind: partition, groups: [[0], [1, 2, 3, 4, 5]], heal_after: 2s}\n", StatusOK,
			[]string{"unsolved: round 3: no model for nodes 0-5: did not report: nodes 1-5; no solution:", "explained by partition at 4s"}},
		{"a node cut off by no fault", "  overrides:\n    - {between: [2, 3], loss: {random: 100%}}\n    - {between: [3, 4], loss: {random: 100%}}\n", StatusDegraded,
			[]string{"unsolved: round 1: no model for node 3: cut off from the reference: node 3 (1 component); NOT explained by a scheduled fault",
				"warning: node-rounds without a model, no scheduled fault explaining them 5 > 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse("unsolved.yaml", []byte(unsolvedYAML+tc.extra))
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
			if res.Summary.Status != tc.status {
				t.Errorf("status %s; want %s\n%s", res.Summary.Status, tc.status, out)
			}
			if len(res.Summary.Sync.Unsolved) == 0 {
				t.Errorf("summary.json lists no unsolved round")
			}
			for _, want := range tc.print {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
