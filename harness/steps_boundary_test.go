//go:build !race

package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestStepBetweenWindows: a clock step at 12 s, where train8Step's 2 s
// windows meet, so that some edges see it at their window's very start or
// end and others not at all. The step is recorded on the node that
// stepped and no other, its size within 3 of its σ; the combined trace has
// no violation and its events lie within traceSigmaBound of their σ.
// Before the Solver compared each window with the last, a step of the
// reference there went unrecorded and moved global time by its size.
func TestStepBetweenWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("three 20 s runs of 8 nodes")
	}
	for _, tc := range []struct {
		node int
		by   time.Duration
	}{{5, 2 * time.Millisecond}, {0, 2 * time.Millisecond}, {0, -3 * time.Millisecond}} {
		t.Run(fmt.Sprintf("node%d%+v", tc.node, tc.by), func(t *testing.T) {
			sc := train8Step(t, tc.node, tc.by, 12*time.Second)
			dir := filepath.Join(t.TempDir(), "run")
			res, err := Run(sc, Options{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Summary.Trace
			t.Logf("combined: Violations: %d; |aligned − true start| p99 %.0f max %.0f ns; max %.2f σ", tr.Combined.Violations, tr.ErrorNS.P99, tr.ErrorNS.Max, tr.ErrorSigmas.Max)
			if tr.Combined.Violations != 0 || tr.AlignedEvents != tr.Events || tr.ErrorSigmas.Max > traceSigmaBound {
				t.Errorf("combined: %d violations, %d of %d aligned, max %.2f σ; want 0, all, ≤ %d", tr.Combined.Violations, tr.AlignedEvents, tr.Events, tr.ErrorSigmas.Max, traceSigmaBound)
			}
			_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, o := range offs {
				for _, st := range o.Steps {
					t.Logf("round %d node %d: step %.0f ± %.1f ns at %d ± %.0f", o.RoundID, o.NodeID, st.SizeNS, st.SizeUncertaintyNS, st.AtNS, st.AtUncertaintyNS)
					if o.NodeID != tc.node {
						t.Errorf("round %d: a step on node %d, which did not step", o.RoundID, o.NodeID)
						continue
					}
					found++
					if math.Abs(st.SizeNS-float64(tc.by)) > 3*st.SizeUncertaintyNS+1 {
						t.Errorf("step size %.0f ± %.1f ns; truth %d", st.SizeNS, st.SizeUncertaintyNS, tc.by.Nanoseconds())
					}
				}
			}
			if found != 1 {
				t.Errorf("%d steps recorded on node %d; want 1", found, tc.node)
			}
		})
	}
}
