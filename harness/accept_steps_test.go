//go:build !race

package harness

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/scenarios"
)

// train8Step is train4's workload on 8 nodes with one clock step: by on
// node at at (11s is inside round 6's window while the training runs;
// 12s is where its 2s windows meet).
func train8Step(t *testing.T, node int, by, at time.Duration) *scenario.Scenario {
	t.Helper()
	b, err := fs.ReadFile(scenarios.FS(), "train4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yml := strings.Replace(string(b), "\nnodes: 4\n", "\nnodes: 8\n", 1)
	yml = strings.Replace(yml, "name: train4", fmt.Sprintf("name: train8-step-node%d", node), 1)
	yml += fmt.Sprintf("faults:\n  - {at: %v, kind: clock_step, node: %d, by: %v}\n", at, node, by)
	sc, err := scenario.Parse("train8-step.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// acceptSteps: train4's workload on 8 nodes with a +2ms or a −2ms step on
// node 5 at 11s, or a +2ms step on the reference, node 0. Before the
// piecewise model the +2ms run had 12,586 violations and events 2 ms off
// at 29,852 of their reported σ, and the −2ms run crashed. Now: no
// violation; 99% of the events within 3 reported σ of their true start,
// none beyond traceSigmaBound; offsets.jsonl holds the step on the node
// that stepped (no other), of the right size to within 3 of its σ and at
// the right time to within its bracket; and the clock models stay
// calibrated. It returns the figures of the runs that completed, in order.
func acceptSteps(t *testing.T) []stepFigures {
	var figs []stepFigures
	for _, tc := range []struct {
		node int
		by   time.Duration
	}{{5, 2 * time.Millisecond}, {5, -2 * time.Millisecond}, {0, 2 * time.Millisecond}} {
		t.Run(fmt.Sprintf("node%d%+v", tc.node, tc.by), func(t *testing.T) {
			sc := train8Step(t, tc.node, tc.by, 11*time.Second)
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(sc, Options{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Summary.Trace
			t.Logf("combined: Violations: %d; |aligned − true start| p50 %.0f p99 %.0f max %.0f ns; p99 %.2f max %.2f σ",
				tr.Combined.Violations, tr.ErrorNS.P50, tr.ErrorNS.P99, tr.ErrorNS.Max, tr.ErrorSigmas.P99, tr.ErrorSigmas.Max)
			if tr.Combined.Violations != 0 || tr.AlignedEvents != tr.Events || tr.ErrorSigmas.P99 > 3 || tr.ErrorSigmas.Max > traceSigmaBound {
				t.Errorf("combined: %d violations, %d of %d aligned, p99 %.2f σ, max %.2f σ; want 0, all, ≤ 3, ≤ %d",
					tr.Combined.Violations, tr.AlignedEvents, tr.Events, tr.ErrorSigmas.P99, tr.ErrorSigmas.Max, traceSigmaBound)
			}
			_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
			if err != nil {
				t.Fatal(err)
			}
			resolved, err := sc.Resolve(sc.Seed)
			if err != nil {
				t.Fatal(err)
			}
			// The node's clock when it stepped, as offset and rate say (its
			// wander moves this by well under a µs).
			c := resolved.Nodes[tc.node].Clock
			trueAt := float64(c.Offset) + 11e9*(1+c.PPM*1e-6)
			fig := stepFigures{Node: tc.node, By: tc.by, TrueAt: trueAt, Trace: *tr}
			for _, o := range offs {
				for _, st := range o.Steps {
					if o.NodeID != tc.node {
						t.Errorf("round %d: a step of %.0f ns on node %d, which did not step", o.RoundID, st.SizeNS, o.NodeID)
						continue
					}
					fig.Recorded = append(fig.Recorded, st)
					t.Logf("round %d: step %.0f ± %.1f ns (truth %d), at %d ± %.0f ns (truth %.0f)",
						o.RoundID, st.SizeNS, st.SizeUncertaintyNS, tc.by.Nanoseconds(), st.AtNS, st.AtUncertaintyNS, trueAt)
					if math.Abs(st.SizeNS-float64(tc.by)) > 3*st.SizeUncertaintyNS+1 {
						t.Errorf("step size %.0f ± %.1f ns; truth %d", st.SizeNS, st.SizeUncertaintyNS, tc.by.Nanoseconds())
					}
					if math.Abs(float64(st.AtNS)-trueAt) > st.AtUncertaintyNS+1000 {
						t.Errorf("step at %d ± %.0f ns; truth %.0f", st.AtNS, st.AtUncertaintyNS, trueAt)
					}
				}
			}
			if len(fig.Recorded) != 1 {
				t.Errorf("%d steps recorded on node %d; want 1", len(fig.Recorded), tc.node)
			}
			pts, _, err := pointsOf(dir, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pts {
				if p.Sigmas() <= 3 {
					fig.Within3++
				}
			}
			fig.Points = len(pts)
			if len(pts) == 0 || float64(fig.Within3) < 0.99*float64(len(pts)) {
				t.Errorf("%d of %d node-round errors within 3σ; want ≥ 99%%", fig.Within3, len(pts))
			}
			figs = append(figs, fig)
		})
	}
	return figs
}
