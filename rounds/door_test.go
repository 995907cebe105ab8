package rounds

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// TestDoorBounds: the door's bounds on a fit lie within GraphCalc's, so
// that what the door takes GraphCalc takes too, and the run files' window
// leaves room for the protocol's longest window on a node's clock.
func TestDoorBounds(t *testing.T) {
	if offsets.MaxEdgeAlpha > graphcalc.MaxAlpha || offsets.MaxEdgeBetaNS > graphcalc.MaxBeta {
		t.Errorf("offsets.MaxEdgeAlpha %g, MaxEdgeBetaNS %g: beyond GraphCalc's %g, %g", offsets.MaxEdgeAlpha, offsets.MaxEdgeBetaNS, graphcalc.MaxAlpha, graphcalc.MaxBeta)
	}
	if long := float64(MaxWindow) * (1 + offsets.MaxDriftPPM*1e-6); float64(offsets.MaxWindowNS) < long {
		t.Errorf("offsets.MaxWindowNS %d: shorter than rounds.MaxWindow on a node's clock, %g", offsets.MaxWindowNS, long)
	}
	for _, b := range fitBounds() {
		g := graphcalc.Edge{Alpha: 0, Sigma: 1, AlphaSigma: 1e-9}
		for _, v := range []float64{b.lo, b.hi} {
			switch b.field {
			case "alpha":
				g.Alpha = v
			case "beta":
				g.Beta = v
			case "sigma_ns":
				g.Sigma = v
			case "alpha_sigma":
				g.AlphaSigma = v
			case "asym_sigma_ns":
				g.SysSigma = v
			}
			if err := g.Check(); err != nil {
				t.Errorf("%s at the door's bound %g: GraphCalc refuses it: %v", b.field, v, err)
			}
		}
	}
}

// TestReportFieldBounds (issue 30): every field of a report is checked at
// the master's door against the bounds the run files' writers enforce; a
// value at its bound is taken, one beyond it refuses the report (report
// fields) or drops the edge (edge fields), counted under its reason, and
// whatever the door took, every record of the round is one the writers
// take.
func TestReportFieldBounds(t *testing.T) {
	edge := func(f func(e *syncpb.EdgeAlphaBeta)) func(*syncpb.NodeWindowData) {
		return func(d *syncpb.NodeWindowData) { f(d.Edges[1]) } // 1→2
	}
	step := func(f func(s *syncpb.EdgeStep)) func(*syncpb.NodeWindowData) {
		return edge(func(e *syncpb.EdgeAlphaBeta) {
			e.StepDetected = true
			s := &syncpb.EdgeStep{AfterNs: 4e8, AtNs: 6e8, Before: &syncpb.EdgeFit{Beta: e.Beta, SigmaNs: 2, AlphaSigma: 1e-9, PairsCount: 50}}
			f(s)
			e.Steps = []*syncpb.EdgeStep{s}
		})
	}
	before := func(f func(p *syncpb.EdgeFit)) func(*syncpb.NodeWindowData) {
		return step(func(s *syncpb.EdgeStep) { f(s.Before) })
	}
	over := math.Nextafter
	for _, tc := range []struct {
		name   string
		mutate func(d *syncpb.NodeWindowData)
		reason string // "" when taken
	}{
		{"pairs_count at 0", edge(func(e *syncpb.EdgeAlphaBeta) { e.PairsCount = 0 }), ""},
		{"pairs_count -1", edge(func(e *syncpb.EdgeAlphaBeta) { e.PairsCount = -1 }), "edge pairs_count"},
		{"lost_count at 0", edge(func(e *syncpb.EdgeAlphaBeta) { e.LostCount = 0 }), ""},
		{"lost_count -1", edge(func(e *syncpb.EdgeAlphaBeta) { e.LostCount = -1 }), "edge lost_count"},
		{"pure_pairs -1", edge(func(e *syncpb.EdgeAlphaBeta) { e.PurePairs = -1 }), "edge pure_pairs"},
		{"sent_pairs -1", edge(func(e *syncpb.EdgeAlphaBeta) { e.SentPairs = -1 }), "edge sent_pairs"},
		{"insufficient pairs_count -5", edge(func(e *syncpb.EdgeAlphaBeta) { e.Insufficient, e.PairsCount = true, -5 }), "edge pairs_count"},
		{"insufficient alpha +Inf", edge(func(e *syncpb.EdgeAlphaBeta) { e.Insufficient, e.Alpha = true, math.Inf(1) }), "edge alpha"},
		{"insufficient sigma_ns -1", edge(func(e *syncpb.EdgeAlphaBeta) { e.Insufficient, e.SigmaNs = true, -1 }), "edge sigma_ns"},
		{"alpha at bound", edge(func(e *syncpb.EdgeAlphaBeta) { e.Alpha = -offsets.MaxEdgeAlpha }), ""},
		{"alpha over", edge(func(e *syncpb.EdgeAlphaBeta) { e.Alpha = over(offsets.MaxEdgeAlpha, 1) }), "edge alpha"},
		{"alpha 0.01 (GraphCalc's bound 0.1)", edge(func(e *syncpb.EdgeAlphaBeta) { e.Alpha = 0.01 }), "edge alpha"},
		{"beta at bound", edge(func(e *syncpb.EdgeAlphaBeta) { e.Beta = offsets.MaxEdgeBetaNS }), ""},
		{"beta over", edge(func(e *syncpb.EdgeAlphaBeta) { e.Beta = -over(offsets.MaxEdgeBetaNS, math.Inf(1)) }), "edge beta_ns"},
		{"sigma_ns at MinSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.SigmaNs = graphcalc.MinSigma }), ""},
		{"sigma_ns under MinSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.SigmaNs = over(graphcalc.MinSigma, 0) }), "edge sigma_ns"},
		{"sigma_ns at MaxSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.SigmaNs = graphcalc.MaxSigma }), ""},
		{"sigma_ns over MaxSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.SigmaNs = over(graphcalc.MaxSigma, math.Inf(1)) }), "edge sigma_ns"},
		{"alpha_sigma at MaxAlphaSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.AlphaSigma = graphcalc.MaxAlphaSigma }), ""},
		{"alpha_sigma under MinAlphaSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.AlphaSigma = over(graphcalc.MinAlphaSigma, 0) }), "edge alpha_sigma"},
		{"asym_sigma_ns at MaxSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.AsymSigmaNs = graphcalc.MaxSigma }), ""},
		{"asym_sigma_ns negative", edge(func(e *syncpb.EdgeAlphaBeta) { e.AsymSigmaNs = -1e-300 }), "edge asym_sigma_ns"},
		{"miss_sigma_ns at MaxSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.MissSigmaNs = graphcalc.MaxSigma }), ""},
		{"miss_sigma_ns over", edge(func(e *syncpb.EdgeAlphaBeta) { e.MissSigmaNs = over(graphcalc.MaxSigma, math.Inf(1)) }), "edge miss_sigma_ns"},
		{"margin_ns at -MaxSigma", edge(func(e *syncpb.EdgeAlphaBeta) { e.MarginNs = -graphcalc.MaxSigma }), ""},
		{"margin_ns NaN", edge(func(e *syncpb.EdgeAlphaBeta) { e.MarginNs = math.NaN() }), "edge margin_ns"},
		{"estimator known", edge(func(e *syncpb.EdgeAlphaBeta) { e.Estimator = string(estimate.SVM) }), ""},
		{"estimator unknown", edge(func(e *syncpb.EdgeAlphaBeta) { e.Estimator = "bogus" }), "edge estimator"},
		{"step honest", step(func(*syncpb.EdgeStep) {}), ""},
		{"step size_ns over a year", step(func(s *syncpb.EdgeStep) { s.SizeNs = over(offsets.MaxOffsetNS, math.Inf(1)) }), "edge steps.size_ns"},
		{"step at_ns a year before the window", step(func(s *syncpb.EdgeStep) { s.AtNs = -offsets.MaxOffsetNS }), ""},
		{"step at_ns beyond", step(func(s *syncpb.EdgeStep) { s.AtNs = math.MinInt64 }), "edge steps.at_ns"},
		{"step after_ns beyond", step(func(s *syncpb.EdgeStep) { s.AfterNs = math.MaxInt64 }), "edge steps.after_ns"},
		{"fit before pairs_count -1", before(func(p *syncpb.EdgeFit) { p.PairsCount = -1 }), "edge steps.before.pairs_count"},
		{"fit before alpha over", before(func(p *syncpb.EdgeFit) { p.Alpha = over(offsets.MaxEdgeAlpha, 1) }), "edge steps.before.alpha"},
		{"fit before miss_sigma_ns -1", before(func(p *syncpb.EdgeFit) { p.MissSigmaNs = -1 }), "edge steps.before.miss_sigma_ns"},
		{"window at MaxWindowNS", func(d *syncpb.NodeWindowData) { d.WindowEndNs = d.WindowStartNs + offsets.MaxWindowNS }, ""},
		{"window over MaxWindowNS", func(d *syncpb.NodeWindowData) { d.WindowEndNs = d.WindowStartNs + offsets.MaxWindowNS + 1 }, "report window_end_ns"},
		{"window over the int64 range", func(d *syncpb.NodeWindowData) { d.WindowStartNs, d.WindowEndNs = math.MinInt64, math.MaxInt64 }, "report window_end_ns"},
		{"window backwards", func(d *syncpb.NodeWindowData) { d.WindowStartNs, d.WindowEndNs = math.MaxInt64, math.MinInt64 }, "report window_end_ns"},
		{"window empty", func(d *syncpb.NodeWindowData) { d.WindowEndNs = d.WindowStartNs }, "report window_end_ns"},
		{"report miss_sigma_ns at MaxSigma", func(d *syncpb.NodeWindowData) { d.MissSigmaNs = graphcalc.MaxSigma }, ""},
		{"report miss_sigma_ns -1", func(d *syncpb.NodeWindowData) { d.MissSigmaNs = -1 }, "report miss_sigma_ns"},
		{"report of another node", func(d *syncpb.NodeWindowData) { d.NodeId = 2 }, "report node_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reports := honestReports()
			tc.mutate(reports[1].d)
			r, log := runHostileRound(t, reports)
			door := map[string]int{}
			for why, n := range r.Refused {
				if !strings.HasPrefix(why, "record ") {
					door[why] = n
				}
			}
			switch {
			case tc.reason == "" && len(door) > 0:
				t.Errorf("refused %v; want the value taken\n%s", door, log)
			case tc.reason != "" && (len(door) != 1 || door[tc.reason] != 1):
				t.Errorf("refused %v; want {%s: 1}\n%s", door, tc.reason, log)
			}
			if r.Summary == nil {
				t.Errorf("round unsolved: %v", r.Err)
			}
			checkWritable(t, r)
		})
	}
}

// checkWritable fails unless the run files' writers take every record of
// r, and the strict readers read them back.
func checkWritable(t *testing.T, r *RoundReport) {
	t.Helper()
	var offs, rnds bytes.Buffer
	ow, err := offsets.NewWriter(&offs, offsets.Meta{File: offsets.FileOffsets, Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := offsets.NewWriter(&rnds, offsets.Meta{File: offsets.FileRounds, Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	var recs []any
	for _, o := range r.Offsets {
		recs = append(recs, o)
	}
	if err := ow.Append(recs...); err != nil {
		t.Fatalf("offsets.jsonl: %v", err)
	}
	recs = recs[:0]
	for _, e := range r.Edges {
		recs = append(recs, e)
	}
	if err := rw.Append(recs...); err != nil {
		t.Fatalf("rounds.jsonl: %v", err)
	}
	if _, got, err := offsets.DecodeOffsets(&offs, "offsets.jsonl"); err != nil || len(got) != len(r.Offsets) {
		t.Fatalf("offsets.jsonl read back: %d records of %d, %v", len(got), len(r.Offsets), err)
	}
	if _, got, _, err := offsets.DecodeRounds(&rnds, "rounds.jsonl"); err != nil || len(got) != len(r.Edges) {
		t.Fatalf("rounds.jsonl read back: %d edges of %d, %v", len(got), len(r.Edges), err)
	}
}

// TestConfigWindowBound: a configured window (or adaptive bound) longer
// than MaxWindow is refused before a run starts: the door and the run
// files would refuse every window of it.
func TestConfigWindowBound(t *testing.T) {
	for _, tc := range []struct {
		window, max time.Duration
		ok          bool
	}{{MaxWindow, 0, true}, {MaxWindow + 1, 0, false}, {time.Second, MaxWindow + time.Second, false}} {
		c := Config{Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.SVM}, Cadence: time.Millisecond, Window: tc.window,
			GatherDeadline: time.Second, Heartbeat: time.Second, Participants: []world.NodeID{0}}
		if tc.max > 0 {
			c.WindowMin, c.WindowMax = time.Second, tc.max
		}
		err := c.Validate()
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "longer than the protocol's longest, 1h0m0s (rounds.MaxWindow)")) {
			t.Errorf("window %v, max %v: %v; want ok %v", tc.window, tc.max, err, tc.ok)
		}
	}
}
