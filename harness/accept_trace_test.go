//go:build !race

package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/harness/syncrun"
)

// traceSigmaBound is how many of its reported 1σ uncertainties an aligned
// event may lie from its true start. A run has thousands of events, and the
// largest of N Gaussian errors is about √(2 ln N) σ (4.3σ for 10,000), so
// the bound is 6: an error beyond it (a chance of 2e-9 per event) means the
// uncertainty is wrong, not unlucky.
const traceSigmaBound = 6

// acceptTrain4: on the raw per-node traces validate reports at least 100
// violations, on the combined trace none; both figures are in
// summary.json, every event is aligned, and every aligned event lies
// within traceSigmaBound of its reported uncertainties of its true start.
func acceptTrain4(t *testing.T, res *Result, dir string) {
	tr := res.Summary.Trace
	if tr == nil {
		t.Fatal("summary.json has no trace section")
	}
	t.Logf("raw: Violations: %d, Overlaps: %d, Warnings: %d; combined: Violations: %d, Overlaps: %d, Warnings: %d",
		tr.Raw.Violations, tr.Raw.Overlaps, tr.Raw.Warnings, tr.Combined.Violations, tr.Combined.Overlaps, tr.Combined.Warnings)
	t.Logf("%d events on %d nodes, %d snapshot pairs; |aligned − true start| p50 %.0f p99 %.0f max %.0f ns, max %.2f σ",
		tr.Events, tr.Nodes, tr.Snapshots, tr.ErrorNS.P50, tr.ErrorNS.P99, tr.ErrorNS.Max, tr.ErrorSigmas.Max)
	if tr.Raw.Violations < 100 {
		t.Errorf("raw traces: %d violations; want ≥ 100", tr.Raw.Violations)
	}
	// 4 nodes, 50 steps of 8 collectives: 6 node pairs × 400 invocations.
	if tr.Combined.Violations != 0 || tr.Combined.Overlaps != 2400 || tr.Combined.Warnings != 0 {
		t.Errorf("combined trace: %+v; want 0 violations, 2400 overlaps, 0 warnings", tr.Combined)
	}
	if tr.Events != 4*50*(8+16)*2 || tr.AlignedEvents != tr.Events || len(tr.Unfinished) != 0 {
		t.Errorf("%d events, %d aligned, unfinished %v; want %d, all, none", tr.Events, tr.AlignedEvents, tr.Unfinished, 4*50*(8+16)*2)
	}
	if tr.ErrorSigmas.Max > traceSigmaBound {
		t.Errorf("an aligned event lies %.2f reported σ from its true start; want ≤ %d", tr.ErrorSigmas.Max, traceSigmaBound)
	}
	for _, f := range []string{"node0.xplane.pb", "node3.snapshots.pb", syncrun.FileCombined, "combined.trace.json.gz",
		"combined.perfetto-trace", "combined.metadata.json", "combined.validate.json", syncrun.FileRawValidate} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
}
