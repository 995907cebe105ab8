//go:build !race

package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/scenario"
)

// Draws of the calibration property tests: each draw is a whole run, so
// they take the first few of rapid's draws and pass the rest (rapid has no
// per-test count of checks; see drawLimit).
const (
	calibrationDraws = 30
	stepDraws        = 20
	// pointSigmaBound is how many reported σ one node-round error may lie
	// off in a draw before it fails on its own (the 99% within 3σ is
	// judged over all the draws).
	pointSigmaBound = 5
)

// minRMSRatio is the least RMS of the errors in units of their σ that
// consistent rounds may have. It was 1/3 until σ allowed for a clock step
// too small to find (issue 29: the undetected-step allowance of the node
// and of the reference, a systematic part of σ that most windows never
// need); on the small graphs of TestPropertySteps (2–5 nodes, few edges
// to find a step on together) that allowance alone is about as large as
// the fit's σ, and the ratio measured 0.24 (0.69 before),
// TestPropertyCalibration 0.36 (0.72 before). It was 0.2 until the end
// zones' widening (estimate.endSigma, 2026-11-26: σ covers a shift near a
// window's end that the scan cannot take, another allowance most windows
// never need), after which TestPropertySteps measured 0.20–0.27 over ten
// runs of its 20 draws (median 0.235; 2026-11-28), and failed one make
// test at 0.20; TestPropertyCalibration 0.32–0.34.
const minRMSRatio = 0.15

// drawLimit passes the draws after the first few, until one fails: from
// then on rapid's shrinking must see every draw run.
type drawLimit struct {
	draws   int
	failing bool
}

// skip reports whether this draw is to pass unrun; it counts the draw
// otherwise, and notes when it fails.
func (d *drawLimit) skip(t *rapid.T, limit int) bool {
	if !d.failing && d.draws >= limit {
		return true
	}
	d.draws++
	t.Cleanup(func() {
		if t.Failed() {
			d.failing = true
		}
	})
	return false
}

// genCalibScenario draws a sync run across what the calibration must hold
// for: 4–9 nodes on a full mesh, a ring or a random 3- or 4-regular graph;
// clocks ±50ms, ±200ppm, wander up to 0.02ppm/√s, read noise up to 100ns;
// links of 10–100µs delay and up to 50µs jitter of any of netem's
// distributions, random or Gilbert–Elliott loss up to about 3%; 5 svm
// rounds of 1s.
func genCalibScenario(t *rapid.T) string {
	n := rapid.IntRange(4, 9).Draw(t, "nodes")
	var b strings.Builder
	fmt.Fprintf(&b, "name: calibration-property\nseed: %d\nduration: 6200ms\nnodes: %d\n", rapid.Uint64Range(1, 1<<40).Draw(t, "seed"), n)
	fmt.Fprintf(&b, "clocks:\n  default:\n    offset: uniform(-50ms, 50ms)\n    drift_ppm: uniform(-200, 200)\n    wander_ppm: %.3f\n    read_noise: %dns\n",
		float64(rapid.IntRange(0, 20).Draw(t, "wander_milli_ppm"))/1000, rapid.IntRange(0, 100).Draw(t, "read_noise_ns"))
	switch topo := rapid.SampledFrom([]string{"full_mesh", "ring", "random_regular"}).Draw(t, "topology"); topo {
	case "random_regular":
		d := 3 // n·d must be even and d < n
		if n%2 == 1 || n > 4 && rapid.Bool().Draw(t, "degree4") {
			d = 4
		}
		fmt.Fprintf(&b, "topology:\n  kind: random_regular\n  degree: %d\n", d)
	default:
		fmt.Fprintf(&b, "topology:\n  kind: %s\n", topo)
	}
	fmt.Fprintf(&b, "links:\n  default:\n    delay: %dus\n    jitter: %dus\n    distribution: %s\n",
		rapid.IntRange(10, 100).Draw(t, "delay_us"), rapid.IntRange(0, 50).Draw(t, "jitter_us"),
		rapid.SampledFrom([]string{"uniform", "normal", "pareto", "paretonormal"}).Draw(t, "distribution"))
	if rapid.Bool().Draw(t, "gilbert_elliott") {
		fmt.Fprintf(&b, "    loss: {gemodel: {p: %.1f%%, r: %d%%, one_minus_h: 100%%, one_minus_k: 0%%}}\n",
			float64(rapid.IntRange(1, 20).Draw(t, "ge_p_permille"))/10, rapid.IntRange(20, 80).Draw(t, "ge_r_percent"))
	} else {
		fmt.Fprintf(&b, "    loss: {random: %.1f%%}\n", float64(rapid.IntRange(0, 30).Draw(t, "loss_permille"))/10)
	}
	b.WriteString("protocol:\n  kind: sync\n  estimator: svm\n  cadence: 1ms\n  window: 1s\n  rounds: 5\n")
	return b.String()
}

// pointsOf returns a finished run's node-round errors against its truth
// from round from on, and which of its rounds GraphCalc found consistent.
func pointsOf(dir string, from uint64) ([]groundtruth.PointError, map[uint64]bool, error) {
	info, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
	if err != nil {
		return nil, nil, err
	}
	_, truth, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil {
		return nil, nil, err
	}
	_, _, rounds, err := offsets.ReadRounds(filepath.Join(dir, FileRounds))
	if err != nil {
		return nil, nil, err
	}
	consistent := map[uint64]bool{}
	for _, r := range rounds {
		consistent[r.RoundID] = !r.Inconsistent
	}
	all, _ := groundtruth.PointErrors(offs, truth, info.Meta.Reference)
	var pts []groundtruth.PointError
	for _, p := range all {
		if p.Round >= from {
			pts = append(pts, p)
		}
	}
	return pts, consistent, nil
}

// calibration gathers node-round errors over the draws of a property test
// and judges them together: at least groundtruth.Target of them within
// 3σ, and, where GraphCalc found the round consistent, σ no more than
// about five times the typical error (their RMS ratio at least
// minRMSRatio).
type calibration struct {
	points, within int
	consistentZ2   float64
	consistent     int
}

// add takes one draw's points, failing the draw (so that rapid shrinks
// it) when one lies beyond pointSigmaBound.
func (c *calibration) add(t *rapid.T, pts []groundtruth.PointError, consistent map[uint64]bool, yml string) {
	for _, p := range pts {
		z := p.Sigmas()
		if z > pointSigmaBound {
			t.Fatalf("round %d node %d: error %.1f ns is %.1f reported σ (%.1f ns); want ≤ %d\nreproduce: save this as property.yaml, `chronosync run property.yaml` and `chronosync calibrate`\n%s",
				p.Round, p.Node, p.ErrorNS, z, p.SigmaNS, pointSigmaBound, yml)
		}
		c.points++
		if z <= 3 {
			c.within++
		}
		if consistent[p.Round] {
			c.consistent++
			c.consistentZ2 += z * z
		}
	}
}

// check judges the gathered points.
func (c *calibration) check(t *testing.T) {
	t.Helper()
	if c.points == 0 {
		t.Fatal("no points")
	}
	within := float64(c.within) / float64(c.points)
	rms := math.Sqrt(c.consistentZ2 / float64(max(1, c.consistent)))
	t.Logf("%d node-round errors: %.2f%% within 3σ; RMS over the %d of consistent rounds %.2fσ", c.points, 100*within, c.consistent, rms)
	if within < groundtruth.Target {
		t.Errorf("%.2f%% of %d node-round errors within 3σ; want ≥ %.0f%%", 100*within, c.points, 100*groundtruth.Target)
	}
	if c.consistent > 0 && rms < minRMSRatio {
		t.Errorf("consistent rounds: RMS error %.2fσ; σ more than %.0f× the typical error", rms, 1/minRMSRatio)
	}
}

// TestPropertyCalibration: across topologies, jitter distributions, loss
// models, wander and read noise (genCalibScenario), at least 99% of the
// node-round errors from round 3 on lie within 3σ of the uncertainty
// offsets.jsonl reports, none beyond pointSigmaBound, and in consistent
// rounds σ is honest rather than huge.
func TestPropertyCalibration(t *testing.T) {
	var c calibration
	var d drawLimit
	rapid.Check(t, func(t *rapid.T) {
		if d.skip(t, calibrationDraws) {
			return
		}
		yml := genCalibScenario(t)
		sc, err := scenario.Parse("property.yaml", []byte(yml))
		if err != nil {
			t.Fatalf("generated scenario: %v\n%s", err, yml)
		}
		dir := filepath.Join(tempDir(t), "run")
		if _, err := Run(sc, Options{Out: dir}); err != nil {
			t.Fatalf("run: %v\n%s", err, yml)
		}
		pts, consistent, err := pointsOf(dir, 3)
		if err != nil {
			t.Fatal(err)
		}
		c.add(t, pts, consistent, yml)
	})
	c.check(t)
}

// genStepScenario is genTraceScenario's traced run on 3–6 nodes with one
// clock step: 2–20ms forward or back, on any node (the reference, node 0,
// included), at any time of the windows the workload runs in but the
// 10 ms on either side of where they meet (2 s). A step there may fall
// after a window's last probe and before its end: no probe of that window
// saw it, and its record is off by the step at its very end (the next
// round finds the step at its start, docs/sync-protocol.md "Steps at a
// window's edge"); the replays under testdata/known pin that boundary.
func genStepScenario(t *rapid.T) string {
	yml := genTraceScenario(t)
	n := 0
	fmt.Sscanf(yml[strings.Index(yml, "\nnodes: ")+1:], "nodes: %d", &n)
	size := rapid.IntRange(2000, 20000).Draw(t, "step_us")
	if rapid.Bool().Draw(t, "backward") {
		size = -size
	}
	at := rapid.IntRange(1050, 2930).Draw(t, "step_at_ms")
	if at >= 1990 {
		at += 20 // not within 10 ms of where the windows meet
	}
	return yml + fmt.Sprintf("faults:\n  - {at: %dms, kind: clock_step, node: %d, by: %dus}\n",
		at, rapid.IntRange(0, n-1).Draw(t, "step_node"), size)
}

// TestPropertySteps: whatever the step (genStepScenario), the combined
// trace has no happens-before violation, 99% of its events lie within 3
// of their reported σ of their true start (none beyond traceSigmaBound),
// and the clock models stay calibrated as TestPropertyCalibration wants.
func TestPropertySteps(t *testing.T) {
	var c calibration
	var d drawLimit
	rapid.Check(t, func(t *rapid.T) {
		if d.skip(t, stepDraws) {
			return
		}
		yml := genStepScenario(t)
		sc, err := scenario.Parse("step-property.yaml", []byte(yml))
		if err != nil {
			t.Fatalf("generated scenario: %v\n%s", err, yml)
		}
		dir := filepath.Join(tempDir(t), "run")
		res, err := Run(sc, Options{Out: dir})
		if err != nil {
			t.Fatalf("run: %v\n%s", err, yml)
		}
		tr := res.Summary.Trace
		switch {
		case tr == nil || tr.AlignedEvents != tr.Events || tr.Events == 0:
			t.Fatalf("trace summary %+v\n%s", tr, yml)
		case tr.Combined.Violations != 0:
			t.Fatalf("combined trace: %d violations\nreproduce: save this as step-property.yaml and run `chronosync run step-property.yaml`\n%s", tr.Combined.Violations, yml)
		case tr.ErrorSigmas.Max > traceSigmaBound || tr.ErrorSigmas.P99 > 3:
			t.Fatalf("aligned events: p99 %.2f, max %.2f reported σ (%.0f ns) from their true start; want ≤ 3 and ≤ %d\nreproduce: save this as step-property.yaml and run `chronosync run step-property.yaml`\n%s",
				tr.ErrorSigmas.P99, tr.ErrorSigmas.Max, tr.ErrorNS.Max, traceSigmaBound, yml)
		}
		pts, consistent, err := pointsOf(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.add(t, pts, consistent, yml)
	})
	c.check(t)
}
