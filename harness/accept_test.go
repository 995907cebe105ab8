//go:build !race

// The acceptance runs: whole library scenarios, tens of seconds each
// without the race detector (make accept runs them; make test includes
// them), which also give docs/figures.md its figures. Under -race they are
// left out: the race detector makes them several times slower and they
// exercise no concurrency.

package harness

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/scenarios"
)

// TestAccept runs the acceptance runs, each once: every library scenario
// (the real backend's in the simulator), train4's workload with clock
// steps, and one asymmetric link in rings and meshes. Each subtest checks
// its run, and every sync run's calibration; the last, figures, renders
// docs/figures.md from what they measured and fails while the committed
// file differs (with -update, as `make figures` runs it, it rewrites the
// file). The figures the docs quote thus cost no run of their own.
func TestAccept(t *testing.T) {
	var figs docFigures
	for _, a := range []struct {
		name  string
		check func(t *testing.T, res *Result, dir string)
	}{
		{"quickstart", nil},
		{"mesh8-jitter", acceptMesh8Jitter},
		{"asym-queueing", acceptAsymQueueing},
		{"ring32-faults", acceptRing32Faults},
		{"mesh8-consensus", acceptConsensus},
		{"train4", acceptTrain4},
		{"real2-idle", nil},
		{"real2-onoff", nil},
		{"real4-jitter", nil},
	} {
		n := len(figs.runs)
		ok := t.Run(a.name, func(t *testing.T) {
			res, dir, cal := runLibrary(t, a.name)
			if a.check != nil {
				a.check(t, res, dir)
			}
			figs.addRun(t, res, dir, cal)
		})
		if !ok || len(figs.runs) == n {
			figs.incomplete = append(figs.incomplete, a.name)
		}
	}
	if ok := t.Run("steps", func(t *testing.T) { figs.steps = acceptSteps(t) }); !ok || len(figs.steps) != 3 {
		figs.incomplete = append(figs.incomplete, "steps")
	}
	if ok := t.Run("asymmetric-link", func(t *testing.T) { figs.asym = acceptAsymmetricLink(t) }); !ok || len(figs.asym) != 6 {
		figs.incomplete = append(figs.incomplete, "asymmetric-link")
	}
	t.Run("figures", figs.check)
}

// runLibrary runs a library scenario without an event log; for a sync
// scenario it also checks and returns the run's calibration.
func runLibrary(t *testing.T, name string) (*Result, string, *CalibrationResult) {
	t.Helper()
	sc, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	res, err := Run(sc, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	var cal *CalibrationResult
	if sc.Protocol.Kind == scenario.ProtocolSync {
		cal = checkCalibrated(t, dir)
	}
	return res, dir, cal
}

// checkCalibrated wants at least groundtruth.Target of a sync run's
// node-round errors, from its converged_from round on, within 3 of their
// reported σ (what `chronosync calibrate` prints), and returns the
// calibration.
func checkCalibrated(t *testing.T, dir string) *CalibrationResult {
	t.Helper()
	c, err := Calibrate(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration: %d points, %.2f%% within 3σ, max %.2fσ, RMS %.2fσ", c.Points, 100*c.Within3, c.Sigmas.Max, c.RMSSigmas)
	if !c.Calibrated() {
		t.Errorf("%.2f%% of %d node-round errors within 3σ (worst %.2fσ); want ≥ %.0f%%", 100*c.Within3, c.Points, c.Sigmas.Max, 100*groundtruth.Target)
	}
	return c
}

func logAccuracy(t *testing.T, name string, a groundtruth.Accuracy) {
	t.Helper()
	t.Logf("%-10s |offset err| p50 %6.0f p95 %6.0f p99 %6.0f max %6.0f ns; drift p99 %.4f max %.4f ppm; converged at round %d",
		name, a.OffsetError.P50, a.OffsetError.P95, a.OffsetError.P99, a.OffsetError.Max, a.DriftError.P99, a.DriftError.Max, a.ConvergedRound)
}

// acceptMesh8Jitter: with svm, p99 |offset error| ≤ 1µs from the third
// round on and drift error ≤ 0.05 ppm; every estimator is reported.
func acceptMesh8Jitter(t *testing.T, res *Result, _ string) {
	sy := res.Summary.Sync
	if sy == nil || sy.Rounds != 10 || sy.ConvergedFrom != 3 {
		t.Fatalf("sync summary %+v; want 10 rounds counted from round 3", sy)
	}
	logAccuracy(t, "exported", sy.Online)
	for _, k := range []string{"regression", "minfilter", "svm"} {
		a, ok := sy.Estimators[k]
		if !ok {
			t.Fatalf("estimator %s missing from summary", k)
		}
		logAccuracy(t, k, a)
	}
	on := sy.Online
	if on.OffsetError.N == 0 || on.OffsetError.P99 > 1000 || on.DriftError.Max > 0.05 || on.Unsolved != 0 {
		t.Errorf("svm: p99 %v ns, drift max %v ppm, %d unsolved; want ≤ 1000 ns, ≤ 0.05 ppm, 0", on.OffsetError.P99, on.DriftError.Max, on.Unsolved)
	}
	if !reflect.DeepEqual(on, sy.Estimators["svm"]) {
		t.Errorf("the exported offsets and the offline svm re-estimate differ")
	}
}

// acceptAsymQueueing: every estimator on the same probe stream; svm and
// minfilter stay within 2µs p99 while regression is biased by the
// queueing.
func acceptAsymQueueing(t *testing.T, res *Result, _ string) {
	sy := res.Summary.Sync
	if sy == nil || len(sy.Estimators) != 3 {
		t.Fatalf("sync summary %+v; want three estimators", sy)
	}
	for _, k := range []string{"regression", "minfilter", "svm"} {
		logAccuracy(t, k, sy.Estimators[k])
	}
	reg, mf, svm := sy.Estimators["regression"], sy.Estimators["minfilter"], sy.Estimators["svm"]
	for _, k := range []string{"minfilter", "svm"} {
		if a := sy.Estimators[k]; a.OffsetError.N == 0 || a.OffsetError.P99 > 2000 {
			t.Errorf("%s p99 %v ns over %d points; want ≤ 2µs", k, a.OffsetError.P99, a.OffsetError.N)
		}
	}
	if reg.OffsetError.P50 < 3*max(mf.OffsetError.P50, svm.OffsetError.P50) || reg.OffsetError.P99 < 5000 {
		t.Errorf("regression p50 %v p99 %v ns; want clearly biased (≥ 3× the others' p50, p99 ≥ 5µs)", reg.OffsetError.P50, reg.OffsetError.P99)
	}
}

// acceptRing32Faults checks the faults of ring32-faults: node 5 crashes at
// 10s (round 3) and restarts at 15s; nodes 16-31 are cut off from 20s to
// 30s; node 12's clock steps by -5ms at 40s.
func acceptRing32Faults(t *testing.T, _ *Result, dir string) {
	_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	_, edges, rnds, err := offsets.ReadRounds(filepath.Join(dir, FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	_, truth, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := groundtruth.Errors(offs, truth, 0)
	worst := map[[2]int]float64{} // (round, node) -> worst |error|
	for _, e := range errs {
		for _, v := range e.Offset {
			k := [2]int{int(e.Round), e.Node}
			worst[k] = max(worst[k], abs(v))
		}
	}
	byRound := map[int]offsets.Round{}
	for _, r := range rnds {
		byRound[int(r.RoundID)] = r
	}
	// The crash: reported missing, the round completes by its deadline.
	crash := byRound[3]
	if !slices.Contains(crash.Missing, 5) || crash.GatherWaitNS > 500e6+1e6 {
		t.Errorf("round 3: missing %v, gather wait %v ns; want node 5 missing within the 500ms deadline", crash.Missing, crash.GatherWaitNS)
	}
	// Rejoin: node 5 reports again and is converged within two rounds of
	// its restart (round 4 runs from about 12s to 16.5s).
	rejoined := 0
	for r := 5; r <= 6; r++ {
		if !slices.Contains(byRound[r].Reported, 5) {
			continue
		}
		if w, ok := worst[[2]int{r, 5}]; ok && w < 1000 {
			rejoined = r
			break
		}
	}
	if rejoined == 0 {
		t.Errorf("node 5 did not rejoin and re-converge in rounds 5-6: round 5 %+v", byRound[5])
	}
	// The partition: the cut-off side is named, and no round exports an
	// offset for a node the master could not reach through the graph.
	partitioned := 0
	for _, r := range rnds {
		if r.Error == "" {
			continue
		}
		partitioned++
		if !contains(r.Error, "disconnected") || !contains(r.Error, "{17}") {
			t.Errorf("round %d error %q; want the named components", r.RoundID, r.Error)
		}
		for _, o := range offs {
			if o.RoundID == r.RoundID && o.NodeID >= 17 && o.NodeID <= 30 {
				t.Errorf("round %d exports an offset for cut-off node %d", r.RoundID, o.NodeID)
			}
		}
	}
	if partitioned < 2 {
		t.Errorf("%d rounds name disconnected components; want the partition's rounds", partitioned)
	}
	// The clock step: detected on node 12's edges, converged the round after.
	stepRound := 0
	for _, e := range edges {
		if e.StepDetected && (e.Src == 12 || e.Dst == 12) {
			stepRound = int(e.RoundID)
		}
	}
	if stepRound == 0 {
		t.Fatal("no edge of node 12 reports the clock step")
	}
	if w, ok := worst[[2]int{stepRound + 1, 12}]; !ok || w > 1000 {
		t.Errorf("node 12 in round %d (after the step): worst error %v ns (solved %v); want ≤ 1µs", stepRound+1, w, ok)
	}
	t.Logf("crash: node 5 missing in round 3, re-converged in round %d; %d partitioned rounds; step detected in round %d", rejoined, partitioned, stepRound)
}

// acceptConsensus: consensus mode converges on mesh8-jitter's links and
// clocks; its convergence is reported beside Variant B's.
func acceptConsensus(t *testing.T, res *Result, _ string) {
	sy := res.Summary.Sync
	if sy == nil || sy.Mode != "consensus" {
		t.Fatalf("sync summary %+v", sy)
	}
	on := sy.Online
	last := on.PerRound[len(on.PerRound)-1]
	t.Logf("consensus: converged at round %d; last round max |error| %.0f ns", on.ConvergedRound, last.OffsetMaxNS)
	if on.ConvergedRound == 0 || last.OffsetMaxNS > 1000 {
		t.Errorf("consensus did not converge: converged round %d, last round max %v ns", on.ConvergedRound, last.OffsetMaxNS)
	}
}

func abs(v float64) float64 { return max(v, -v) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
