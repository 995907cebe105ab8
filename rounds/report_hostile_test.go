package rounds

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// masterNet returns a shared hand-driven net (worldtest.Net) of nodes
// nodes and its node 0, the master node's world in these tests: its clock
// reads 0 and stands still until the test moves it, timers wait until the
// test fires them, and its log (debug lines included) is kept.
func masterNet(nodes int) (*worldtest.Net, *worldtest.Node) {
	net := worldtest.NewNet(nodes)
	net.Clock = 0
	net.LogLevel = slog.LevelDebug
	return net, net.Node(0)
}

// openStream stands for a node's connection: the master only asks whether
// there is one.
type openStream struct{ world.Stream }

// roundCatcher keeps the round the master solved.
type roundCatcher struct {
	NopObserver
	r *RoundReport
}

func (c *roundCatcher) Round(r *RoundReport) { c.r = r }

// sent is one report as it reached the master: on node from's connection.
type sent struct {
	from int
	d    *syncpb.NodeWindowData
}

// hostileTruth is each node's offset against node 0 in these tests, ns.
var hostileTruth = [4]float64{0, 500, 1000, -700}

// hostileGraph is each node's out-neighbours in these tests: a mesh of 0-2
// and a link 0-3, so that node 1 has fewer edges than a report may carry.
var hostileGraph = [4][]int32{{1, 2, 3}, {0, 2}, {0, 1}, {0}}

// honestEdge is src's fit of src→dst when every clock runs at the same
// rate and the offsets are hostileTruth.
func honestEdge(src, dst int32) *syncpb.EdgeAlphaBeta {
	return &syncpb.EdgeAlphaBeta{
		SrcNodeId: src, DstNodeId: dst, Beta: hostileTruth[dst] - hostileTruth[src],
		SigmaNs: 2, AlphaSigma: 1e-9, PairsCount: 100,
	}
}

// honestReports are the nodes' reports of round 1 on hostileGraph.
func honestReports() []sent {
	var out []sent
	for src, dsts := range hostileGraph {
		d := &syncpb.NodeWindowData{NodeId: int32(src), RoundId: 1, WindowId: 1, WindowStartNs: 0, WindowEndNs: 1e9}
		for _, dst := range dsts {
			d.Edges = append(d.Edges, honestEdge(int32(src), dst))
		}
		out = append(out, sent{src, d})
	}
	return out
}

// runHostileRound gathers round 1 on hostileGraph (master and
// reference 0, outlier rejection off, so that nothing but the master's
// checks stands between a report and the solution) from reports, and
// returns the round and the master's log.
func runHostileRound(t *testing.T, reports []sent) (*RoundReport, string) {
	t.Helper()
	nodes := []world.NodeID{0, 1, 2, 3}
	_, env := masterNet(len(nodes))
	cfg := Config{
		Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.SVM},
		Cadence: time.Millisecond, Window: time.Second, Rounds: 1,
		Nodes: nodes, Participants: nodes, GatherDeadline: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
		GraphCalc: graphcalc.Options{MaxRejectRounds: -1},
	}
	obs := &roundCatcher{}
	n := &Node{cfg: cfg, obs: obs, env: env}
	m, err := newMaster(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range nodes[1:] {
		m.attachStream(int(p), openStream{})
	}
	m.openRound(1, 0)
	for _, s := range reports {
		m.report(s.from, s.d, 0)
	}
	m.finish() // the deadline, where a refused report left the gather open
	if obs.r == nil {
		t.Fatal("no round solved")
	}
	return obs.r, env.Log.String()
}

// TestHostileReports: one node's report can neither fake another node's
// offset nor spoil the round. Every edge that is not the reporter's own,
// names a node outside the probe graph, holds a value GraphCalc refuses or
// repeats another is dropped, logged and counted; a report with more edges
// than a node has is refused whole. The round is solved from the rest,
// with every offset where the honest edges put it.
func TestHostileReports(t *testing.T) {
	node1 := func(f func(d *syncpb.NodeWindowData)) func([]sent) {
		return func(r []sent) { f(r[1].d) }
	}
	add := func(e *syncpb.EdgeAlphaBeta) func([]sent) {
		return node1(func(d *syncpb.NodeWindowData) { d.Edges = append(d.Edges, e) })
	}
	for _, tc := range []struct {
		name    string
		mutate  func([]sent)
		log     string // a line of the master's log
		reports int    // refused whole
		edges   int    // dropped
		missing []int
	}{
		{name: "honest"},
		{name: "6a-edge-of-another-src", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 2, DstNodeId: 0, Beta: -9e6, SigmaNs: 2, AlphaSigma: 1e-9}),
			log: `msg="report edge rejected" node=1 round=1 err="edge 2 (2->0): src 2 is not the reporting node 1"`, edges: 1},
		{name: "6b-src-out-of-range", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 99, DstNodeId: 0, SigmaNs: 2, AlphaSigma: 1e-9}),
			log: `msg="report edge rejected" node=1 round=1 err="edge 2 (99->0): src 99 is not the reporting node 1"`, edges: 1},
		{name: "6b-dst-out-of-range", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 99, SigmaNs: 2, AlphaSigma: 1e-9}),
			log: `msg="report edge rejected" node=1 round=1 err="edge 2 (1->99): dst 99 is not another node of the probe graph"`, edges: 1},
		{name: "6b-dst-negative", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: -1, SigmaNs: 2, AlphaSigma: 1e-9, Insufficient: true}),
			log: `err="edge 2 (1->-1): dst -1 is not another node of the probe graph"`, edges: 1},
		{name: "6b-self-edge", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 1, SigmaNs: 2, AlphaSigma: 1e-9}),
			log: `err="edge 2 (1->1): dst 1 is not another node of the probe graph"`, edges: 1},
		{name: "6b-alpha-nan", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[0].Alpha = math.NaN() }),
			log: `err="edge 0 (1->0): alpha: NaN is not finite; expected a finite number"`, edges: 1},
		{name: "6b-beta-inf", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[1].Beta = math.Inf(-1) }),
			log: `err="edge 1 (1->2): beta_ns: -Inf is not finite; expected a finite number"`, edges: 1},
		{name: "6b-asym-sigma-huge", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[1].AsymSigmaNs = 1e300 }),
			log: `err="edge 1 (1->2): asym_sigma_ns 1e+300; want finite and within [0, 3.6e+12] (graphcalc.MaxSigma)"`, edges: 1},
		{name: "6b-pre-step-beta-nan", mutate: node1(func(d *syncpb.NodeWindowData) {
			d.Edges[0].StepDetected = true
			d.Edges[0].Steps = []*syncpb.EdgeStep{{AtNs: 2, AfterNs: 1, Before: &syncpb.EdgeFit{Beta: math.NaN(), SigmaNs: 2, AlphaSigma: 1e-9}}}
		}), log: `err="edge 0 (1->0): step 0: fit before it: beta NaN; want finite and within [-6.31152e+16, 6.31152e+16] (offsets.MaxEdgeBetaNS)"`, edges: 1},
		{name: "6b-step-size-inf", mutate: node1(func(d *syncpb.NodeWindowData) {
			d.Edges[0].StepDetected = true
			d.Edges[0].Steps = []*syncpb.EdgeStep{{AtNs: 2, AfterNs: 1, SizeNs: math.Inf(1)}}
		}), log: `err="edge 0 (1->0): step 0: size_ns +Inf; want finite and within ±3.15576e+16 (offsets.MaxOffsetNS)"`, edges: 1},
		{name: "6b-too-many-steps", mutate: node1(func(d *syncpb.NodeWindowData) {
			d.Edges[0].StepDetected = true
			for i := range estimate.MaxSteps + 1 {
				d.Edges[0].Steps = append(d.Edges[0].Steps, &syncpb.EdgeStep{AtNs: int64(2*i + 1), AfterNs: int64(2 * i)})
			}
		}), log: `err="edge 0 (1->0): 9 steps; a window has at most 8"`, edges: 1},
		{name: "6b-miss-sigma-nan", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[1].MissSigmaNs = math.NaN() }),
			log: `err="edge 1 (1->2): miss_sigma_ns NaN; want finite and within [0, 3.6e+12] (graphcalc.MaxSigma)"`, edges: 1},
		{name: "6c-sigma-1e-300", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[1].SigmaNs = 1e-300 }),
			log: `err="edge 1 (1->2): sigma_ns 1e-300; want finite and within [0.001, 3.6e+12] (graphcalc.MinSigma, MaxSigma)"`, edges: 1},
		{name: "6c-alpha-sigma-1e-300", mutate: node1(func(d *syncpb.NodeWindowData) { d.Edges[1].AlphaSigma = 1e-300 }),
			log: `err="edge 1 (1->2): alpha_sigma 1e-300; want finite and within [1e-15, 1] (graphcalc.MinAlphaSigma, MaxAlphaSigma)"`, edges: 1},
		{name: "6d-duplicate", mutate: add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 2, Beta: 9e6, SigmaNs: 2, AlphaSigma: 1e-9}),
			log: `err="edge 2 (1->2): repeats edge 1"`, edges: 1},
		{name: "6d-20000-duplicates", mutate: node1(func(d *syncpb.NodeWindowData) {
			for range 20000 - len(d.Edges) {
				d.Edges = append(d.Edges, honestEdge(1, 2))
			}
		}), log: `msg="report rejected" node=1 round=1 err="20000 edges; a node of a 4-node probe graph has at most 3"`, reports: 1, missing: []int{1}},
		{name: "empty-report", mutate: func(r []sent) { r[1].d = nil },
			log: `msg="report for the wrong node" from=1 claims=0`, reports: 1, missing: []int{1}},
		{name: "claims-another-node", mutate: node1(func(d *syncpb.NodeWindowData) { d.NodeId = 2 }),
			log: `msg="report for the wrong node" from=1 claims=2`, reports: 1, missing: []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reports := honestReports()
			if tc.mutate != nil {
				tc.mutate(reports)
			}
			before := len(reports[1].d.GetEdges())
			r, log := runHostileRound(t, reports)
			if r.Err != nil || r.Summary == nil {
				t.Fatalf("round unsolved: %v", r.Err)
			}
			for node, want := range hostileTruth {
				md, ok := r.Summary.Model(node)
				if !ok || math.Abs(md.U-want) > 1e-6 || math.IsNaN(md.Rate) || math.Abs(md.Rate-1) > 1e-12 {
					t.Errorf("node %d: model %+v (found %v), want U %v and Rate 1", node, md, ok, want)
				}
			}
			if !slices.Equal(r.Missing, tc.missing) {
				t.Errorf("missing %v, want %v", r.Missing, tc.missing)
			}
			if n := len(reports[1].d.GetEdges()); n != before {
				t.Errorf("the master changed the report it was given: %d edges, had %d", n, before)
			}
			if tc.log != "" && !strings.Contains(log, tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, log)
			}
			var note string
			if tc.reports+tc.edges > 0 {
				summary := fmt.Sprintf(`msg="round input rejected" round=1 reports=%d edges=%d`, tc.reports, tc.edges)
				if !strings.Contains(log, summary) {
					t.Errorf("log lacks %q:\n%s", summary, log)
				}
				note = fmt.Sprintf("the master refused %d reports and dropped %d edges since the last round (see its log)", tc.reports, tc.edges)
			}
			if got := strings.Join(r.Notes, "; "); got != note {
				t.Errorf("notes %q, want %q", got, note)
			}
			if tc.reports+tc.edges == 0 && strings.Contains(log, "level=WARN") {
				t.Errorf("warnings for an honest round:\n%s", log)
			}
		})
	}
}

// TestFitReportRefuses: a report's ids and counts are int32 on the wire,
// and a block whose own do not fit (or that is not the node's, or whose
// window runs backwards) is refused with an error naming the block and the
// field, never truncated into another node's id; FitWindow, which cannot
// fail, leaves it out.
func TestFitReportRefuses(t *testing.T) {
	ok := probelog.Block{Src: 1, Dst: 2, RoundID: 1, WindowID: 1, WindowStart: 0, WindowEnd: 1e9}
	for _, tc := range []struct {
		name   string
		node   int
		mutate func(b *probelog.Block)
		want   string // FitReport's error; "" for none
	}{
		{name: "ok", node: 1},
		{name: "7b-src-beyond-int32", node: 1, mutate: func(b *probelog.Block) { b.Src = 1<<32 + 1 },
			want: "rounds: node 1: block 1: src 4294967297 out of range [0, 2147483647]"},
		{name: "7b-dst-beyond-int32", node: 1, mutate: func(b *probelog.Block) { b.Dst = 1<<32 + 2 },
			want: "rounds: node 1: block 1: dst 4294967298 out of range [0, 2147483647]"},
		{name: "7b-both-beyond-int32", node: 1<<32 + 1, mutate: func(b *probelog.Block) { b.Src, b.Dst = 1<<32+1, 1<<32+2 },
			want: "rounds: node 4294967297 out of range [0, 2147483647]"},
		{name: "negative-dst", node: 1, mutate: func(b *probelog.Block) { b.Dst = -1 },
			want: "rounds: node 1: block 1: dst -1 out of range [0, 2147483647]"},
		{name: "sent-pairs-beyond-int32", node: 1, mutate: func(b *probelog.Block) { b.SentPairs = math.MaxInt32 + 1 },
			want: "rounds: node 1: block 1: sent pairs 2147483648 out of range [0, 2147483647]"},
		{name: "lost-beyond-int32", node: 1, mutate: func(b *probelog.Block) { b.Lost = 1 << 40 },
			want: "rounds: node 1: block 1: lost 1099511627776 out of range [0, 2147483647]"},
		{name: "another-src", node: 1, mutate: func(b *probelog.Block) { b.Src = 2; b.Dst = 0 },
			want: "rounds: node 1: block 1: src 2 is not the reporting node 1"},
		{name: "7c-window-backwards", node: 1, mutate: func(b *probelog.Block) { b.WindowEnd = -5 },
			want: "rounds: node 1: block 1: window end -5 before window start 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := ok
			first.Dst = 0
			bad := ok
			if tc.mutate != nil {
				tc.mutate(&bad)
			}
			if tc.node != 1 {
				first.Src = tc.node
			}
			blocks := []probelog.Block{first, bad}
			o := estimate.Options{Kind: estimate.SVM}
			d, err := FitReport(tc.node, 1, blocks, o)
			switch {
			case tc.want == "" && (err != nil || len(d.GetEdges()) != 2):
				t.Errorf("FitReport: %v, %v; want both edges", d, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || d != nil):
				t.Errorf("FitReport: %v, %v; want no report and %q", d, err, tc.want)
			}
			// FitWindow reports what fits, and never a truncated id: both
			// edges, the good block's alone, or (for a node beyond int32)
			// an empty report of node -1, which the master refuses.
			w := FitWindow(tc.node, 1, blocks, o)
			var got [][2]int32
			for _, e := range w.Edges {
				got = append(got, [2]int32{e.SrcNodeId, e.DstNodeId})
			}
			want, id := [][2]int32{{1, 0}}, int32(1)
			switch {
			case tc.want == "":
				want = append(want, [2]int32{1, 2})
			case tc.node != 1:
				want, id = nil, -1
			}
			if w.NodeId != id || !slices.Equal(got, want) {
				t.Errorf("FitWindow: node %d, edges %v; want node %d, edges %v", w.NodeId, got, id, want)
			}
		})
	}
	if _, err := FitReport(1, 1, nil, estimate.Options{}); err != nil {
		t.Errorf("no blocks: %v", err)
	}
}
