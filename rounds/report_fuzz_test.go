package rounds

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
	"google.golang.org/protobuf/proto"
)

// The fuzz targets here (issue 18) deliver one arbitrary report to the
// master of round 1 on hostileGraph (see report_hostile_test.go), beside
// the honest reports of the other three nodes, and check the round that
// comes of it (checkFuzzedRound):
//
//   - the master neither panics nor changes the report it was given;
//   - it refuses the report whole exactly when it claims another node or
//     carries more edges than a node has, ignores it when it is for
//     another round, and otherwise drops exactly the edges that are not
//     the node's own, name no other node of the graph, repeat an earlier
//     kept edge's dst, or hold values out of the door's bounds (issue
//     30: the run files' bounds on a window and an edge's record, and
//     graphcalc.Edge.Check's on the fit, of the fit before a step and of
//     the step's times): the node is missing, and the round's notes
//     count refusals and drops, accordingly (the rules restated here,
//     from the report);
//   - the round is the one solved from the honest reports and the report
//     as screened by those rules: the same models and offsets, the same
//     error;
//   - every model and offset is finite (a round is solved, perhaps
//     partially, with finite values, or unsolved with an error), and the
//     run files' writers take every record of the round (issue 30), and
//   - when nothing of the report reaches GraphCalc (refused, stale, or
//     every usable edge dropped), the honest reports solve the round to
//     every node's true offset, hostileTruth.

// fuzzEdgeLen is the size of one edge in FuzzReport's edges bytes:
//
//	0      flags: 1 insufficient, 2 step detected, 4 has a step (with
//	       a fit before it)
//	1–4    src (int32)          5–8  dst (int32)
//	9–48   alpha, beta, sigma, alpha sigma, asym sigma (float64 bits)
//	49–88  the fit before the step: its five values, as above
//	89–104 the step's at and after (int64)
//
// all big endian.
const fuzzEdgeLen = 105

// encodeFuzzEdges is the inverse of decodeFuzzEdges.
func encodeFuzzEdges(edges ...*syncpb.EdgeAlphaBeta) []byte {
	var out []byte
	for _, e := range edges {
		var flags byte
		if e.Insufficient {
			flags |= 1
		}
		if e.StepDetected {
			flags |= 2
		}
		st := &syncpb.EdgeStep{Before: &syncpb.EdgeFit{}}
		if len(e.Steps) > 0 {
			flags |= 4
			st = e.Steps[0]
		}
		out = append(out, flags)
		out = binary.BigEndian.AppendUint32(out, uint32(e.SrcNodeId))
		out = binary.BigEndian.AppendUint32(out, uint32(e.DstNodeId))
		p := st.Before
		for _, v := range []float64{e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma, e.AsymSigmaNs, p.Alpha, p.Beta, p.SigmaNs, p.AlphaSigma, p.AsymSigmaNs} {
			out = binary.BigEndian.AppendUint64(out, math.Float64bits(v))
		}
		out = binary.BigEndian.AppendUint64(out, uint64(st.AtNs))
		out = binary.BigEndian.AppendUint64(out, uint64(st.AfterNs))
	}
	return out
}

// decodeFuzzEdges reads the edges of FuzzReport's edges bytes (see
// fuzzEdgeLen); a trailing partial edge is ignored.
func decodeFuzzEdges(b []byte) []*syncpb.EdgeAlphaBeta {
	var out []*syncpb.EdgeAlphaBeta
	f := func(i int) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b[9+8*i:])) }
	for ; len(b) >= fuzzEdgeLen; b = b[fuzzEdgeLen:] {
		e := &syncpb.EdgeAlphaBeta{
			SrcNodeId: int32(binary.BigEndian.Uint32(b[1:])), DstNodeId: int32(binary.BigEndian.Uint32(b[5:])),
			Alpha: f(0), Beta: f(1), SigmaNs: f(2), AlphaSigma: f(3), AsymSigmaNs: f(4),
			PairsCount: 100, SentPairs: 100,
			Insufficient: b[0]&1 != 0, StepDetected: b[0]&2 != 0,
		}
		if b[0]&4 != 0 {
			e.Steps = []*syncpb.EdgeStep{{
				AtNs: int64(binary.BigEndian.Uint64(b[89:])), AfterNs: int64(binary.BigEndian.Uint64(b[97:])),
				Before: &syncpb.EdgeFit{Alpha: f(5), Beta: f(6), SigmaNs: f(7), AlphaSigma: f(8), AsymSigmaNs: f(9), PairsCount: 50},
			}}
		}
		out = append(out, e)
	}
	return out
}

// FuzzReport delivers a report built from the fuzz inputs, on the
// connection of node 1 + conn%3, to the master (see the properties above).
func FuzzReport(f *testing.F) {
	honest := func(src int32) []*syncpb.EdgeAlphaBeta {
		var out []*syncpb.EdgeAlphaBeta
		for _, dst := range hostileGraph[src] {
			out = append(out, honestEdge(src, dst))
		}
		return out
	}
	with := func(src int32, edit func(e []*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta) []byte {
		return encodeFuzzEdges(edit(honest(src))...)
	}
	set := func(i int, edit func(e *syncpb.EdgeAlphaBeta)) func([]*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta {
		return func(es []*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta { edit(es[i]); return es }
	}
	add := func(e *syncpb.EdgeAlphaBeta) func([]*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta {
		return func(es []*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta { return append(es, e) }
	}
	same := func(es []*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta { return es }
	preStep := func(e *syncpb.EdgeAlphaBeta) {
		e.StepDetected = true
		e.Steps = []*syncpb.EdgeStep{{AtNs: 6e8, AfterNs: 4e8, Before: &syncpb.EdgeFit{Beta: e.Beta - 5000, SigmaNs: 2, AlphaSigma: 1e-9}}}
		e.Beta += 5000 // node 1 stepped 5 µs
	}
	extreme := func(e *syncpb.EdgeAlphaBeta) {
		e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma, e.AsymSigmaNs = offsets.MaxEdgeAlpha, -offsets.MaxEdgeBetaNS, graphcalc.MinSigma, graphcalc.MinAlphaSigma, 0
	}
	type seed struct {
		conn       uint8
		claim      int32
		round      uint64
		start, end int64
		edges      []byte
	}
	for _, s := range []seed{
		{0, 1, 1, 0, 1e9, with(1, same)},
		{1, 2, 1, 0, 1e9, with(2, same)},
		{2, 3, 1, 0, 1e9, with(3, same)},
		{0, 1, 1, 0, 1e9, with(1, add(&syncpb.EdgeAlphaBeta{SrcNodeId: 2, DstNodeId: 0, Beta: -9e6, SigmaNs: 2, AlphaSigma: 1e-9}))},
		{0, 1, 1, 0, 1e9, with(1, add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 99, SigmaNs: 2, AlphaSigma: 1e-9}))},
		{0, 1, 1, 0, 1e9, with(1, add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 1, SigmaNs: 2, AlphaSigma: 1e-9}))},
		{0, 1, 1, 0, 1e9, with(1, add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 2, Beta: 9e6, SigmaNs: 2, AlphaSigma: 1e-9}))},
		{0, 1, 1, 0, 1e9, with(1, add(&syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: -1, Insufficient: true, Alpha: math.NaN()}))},
		{0, 1, 1, 0, 1e9, with(1, set(0, func(e *syncpb.EdgeAlphaBeta) { e.Alpha = math.NaN() }))},
		{0, 1, 1, 0, 1e9, with(1, set(1, func(e *syncpb.EdgeAlphaBeta) { e.Beta = math.Inf(-1) }))},
		{0, 1, 1, 0, 1e9, with(1, set(1, func(e *syncpb.EdgeAlphaBeta) { e.AsymSigmaNs = 1e300 }))},
		{0, 1, 1, 0, 1e9, with(1, set(1, func(e *syncpb.EdgeAlphaBeta) { e.SigmaNs = 1e-300 }))},
		{0, 1, 1, 0, 1e9, with(1, set(1, func(e *syncpb.EdgeAlphaBeta) { e.AlphaSigma = 1e-300 }))},
		{0, 1, 1, 0, 1e9, with(1, set(0, func(e *syncpb.EdgeAlphaBeta) { e.Insufficient, e.Beta = true, math.NaN() }))},
		{0, 1, 1, 0, 1e9, with(1, set(0, func(e *syncpb.EdgeAlphaBeta) {
			preStep(e)
			e.Steps[0].Before.Beta = math.NaN()
		}))},
		{0, 1, 1, 0, 1e9, with(1, set(0, preStep))},
		{0, 1, 1, 0, 1e9, with(1, set(0, extreme))},
		{0, 1, 1, math.MinInt64, math.MaxInt64, with(1, set(0, extreme))},
		{0, 1, 1, math.MaxInt64 - offsets.MaxWindowNS, math.MaxInt64, with(1, set(0, extreme))},
		{0, 1, 1, 0, 1e9, with(1, set(0, func(e *syncpb.EdgeAlphaBeta) { e.Alpha = graphcalc.MaxAlpha }))},
		{0, 1, 1, math.MaxInt64, math.MinInt64, with(1, same)},
		{0, 1, 1, 0, 1e9, with(1, func(es []*syncpb.EdgeAlphaBeta) []*syncpb.EdgeAlphaBeta {
			return append(es, honestEdge(1, 2), honestEdge(1, 2))
		})},
		{0, 2, 1, 0, 1e9, with(1, same)},
		{0, -1, 1, 0, 1e9, nil},
		{0, 1, 2, 0, 1e9, with(1, same)},
		{0, 1, 1, 0, 1e9, nil},
	} {
		f.Add(s.conn, s.claim, s.round, s.start, s.end, s.edges)
	}
	f.Fuzz(func(t *testing.T, conn uint8, claim int32, round uint64, start, end int64, edges []byte) {
		node := 1 + int(conn%3)
		d := &syncpb.NodeWindowData{NodeId: claim, RoundId: round, WindowId: 1, WindowStartNs: start, WindowEndNs: end, Edges: decodeFuzzEdges(edges)}
		given := wireOf(t, d) // not proto.Clone: it drops a -0 field
		run := newFuzzRound(t)
		run.deliver(t, node, d)
		got := run.finish(t)
		// Compared as bytes: proto.Equal holds NaN unequal to itself.
		if !bytes.Equal(wireOf(t, d), given) {
			t.Fatalf("the master changed the report it was given: now %v", d)
		}
		checkFuzzedRound(t, node, d, got)
	})
}

// FuzzReportMessage delivers arbitrary bytes as a message on node 1's
// connection, which said hello, to the master, before the other nodes'
// honest reports. A message that does not decode, or is not a hello,
// heartbeat or report, closes the connection (a hello closes it unless it
// names node 1 again); a heartbeat is echoed unchanged; a report is taken
// as FuzzReport's are, and the round must come out as checkFuzzedRound
// says.
func FuzzReportMessage(f *testing.F) {
	frame := func(env *syncpb.Envelope) []byte {
		b, err := wire.Marshal(env, 0)
		if err != nil {
			panic(err)
		}
		return b
	}
	window := func(d *syncpb.NodeWindowData) []byte {
		return frame(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: d}})
	}
	honest := honestReports()[1].d
	lying := proto.Clone(honest).(*syncpb.NodeWindowData)
	lying.Edges[0].Beta = 9e6
	bad := proto.Clone(honest).(*syncpb.NodeWindowData)
	bad.Edges[0].Alpha, bad.Edges[1].SigmaNs = math.NaN(), 1e-300
	bad.Edges = append(bad.Edges, &syncpb.EdgeAlphaBeta{SrcNodeId: 1, DstNodeId: 2, Beta: 9e6, SigmaNs: 2, AlphaSigma: 1e-9})
	other := proto.Clone(honest).(*syncpb.NodeWindowData)
	other.NodeId = 2
	for _, b := range [][]byte{
		window(honest),
		window(lying),
		window(bad),
		window(other),
		frame(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 2}}}),
		frame(&syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{Seq: 7, SentNs: 12345}}}),
		frame(&syncpb.Envelope{Body: &syncpb.Envelope_RoundEnd{RoundEnd: &syncpb.RoundEnd{RoundId: 1, SequenceNumber: 1}}}),
		frame(&syncpb.Envelope{Body: &syncpb.Envelope_Global{Global: &syncpb.GlobalWindowData{AllNodes: []*syncpb.NodeWindowData{honest}}}}),
		window(honest)[:20],
		{0, 0, 0, 0},
		nil,
	} {
		f.Add(b)
	}
	hello := frame(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 1}}})
	f.Fuzz(func(t *testing.T, msg []byte) {
		run := newFuzzRound(t)
		s := &echoStream{from: world.Addr{Node: 1, Port: 40000}}
		c := masterConn{run.m}
		run.m.attachStream(1, nil)
		c.OnOpen(s)
		c.OnMessage(s, hello)
		if run.m.connOf(1) != s || s.closed {
			t.Fatal("node 1's hello was not taken")
		}
		given := slices.Clone(msg)
		c.OnMessage(s, msg)
		if !bytes.Equal(msg, given) {
			t.Fatal("the master changed the message it was given")
		}
		env, err := wire.Unmarshal(given, 0)
		var d *syncpb.NodeWindowData
		wantClosed, wantEcho := true, false
		if err == nil {
			switch b := env.Body.(type) {
			case *syncpb.Envelope_Hello:
				wantClosed = b.Hello.GetNodeId() != 1
			case *syncpb.Envelope_Heartbeat:
				wantClosed, wantEcho = false, true
			case *syncpb.Envelope_Window:
				wantClosed, d = false, b.Window
			}
		}
		if s.closed != wantClosed || (run.m.connOf(1) == nil) != wantClosed {
			t.Fatalf("%s message (err %v): stream closed %v, still node 1's connection %v; want closed %v, kept %v",
				wire.Kind(env), err, s.closed, run.m.connOf(1) != nil, wantClosed, !wantClosed)
		}
		if echoed := len(s.sent) == 1 && bytes.Equal(s.sent[0], given); echoed != wantEcho || len(s.sent) > 1 {
			t.Fatalf("%s message: %d messages sent back, want the heartbeat echoed: %v", wire.Kind(env), len(s.sent), wantEcho)
		}
		for _, h := range honestReports() {
			if h.from != 1 {
				run.m.report(h.from, h.d, 0)
			}
		}
		checkFuzzedRound(t, 1, d, run.finish(t))
	})
}

// echoStream is node 1's connection in FuzzReportMessage: it records what
// the master sends on it and whether it was closed.
type echoStream struct {
	world.Stream
	from   world.Addr
	sent   [][]byte
	closed bool
}

func (s *echoStream) RemoteAddr() world.Addr { return s.from }
func (s *echoStream) Close() error           { s.closed = true; return nil }
func (s *echoStream) Send(b []byte) error    { s.sent = append(s.sent, slices.Clone(b)); return nil }

// fuzzRound is the master of runHostileRound, gathering round 1 on
// hostileGraph (reference 0, outlier rejection off), with every node
// connected and nothing logged.
type fuzzRound struct {
	m   *master
	obs *roundCatcher
}

func newFuzzRound(t *testing.T) *fuzzRound {
	t.Helper()
	nodes := []world.NodeID{0, 1, 2, 3}
	cfg := Config{
		Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.SVM},
		Cadence: time.Millisecond, Window: time.Second, Rounds: 1,
		Nodes: nodes, Participants: nodes, GatherDeadline: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
		GraphCalc: graphcalc.Options{MaxRejectRounds: -1},
	}
	obs := &roundCatcher{}
	_, env := masterNet(len(nodes))
	n := &Node{cfg: cfg, obs: obs, env: env}
	m, err := newMaster(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range nodes[1:] {
		m.attachStream(int(p), openStream{})
	}
	m.openRound(1, 0)
	return &fuzzRound{m: m, obs: obs}
}

// deliver hands the master the honest reports, node's replaced by d (none
// when d is nil), in node order.
func (r *fuzzRound) deliver(t *testing.T, node int, d *syncpb.NodeWindowData) {
	t.Helper()
	for _, h := range honestReports() {
		switch {
		case h.from != node:
			r.m.report(h.from, h.d, 0)
		case d != nil:
			r.m.report(node, d, 0)
		}
	}
}

// finish ends the gather (the deadline) and returns the round.
func (r *fuzzRound) finish(t *testing.T) *RoundReport {
	t.Helper()
	r.m.finish()
	if r.obs.r == nil {
		t.Fatal("no round solved")
	}
	return r.obs.r
}

// screened is what the master must make of node's report d by the rules
// restated above: refused whole, ignored as stale, or taken with the
// edges kept (and a count of those dropped).
type screened struct {
	refused, stale bool
	kept           []*syncpb.EdgeAlphaBeta
	dropped        int
	// contributes: some kept edge reaches GraphCalc (is not
	// insufficient).
	contributes bool
}

func screen(node int, d *syncpb.NodeWindowData) screened {
	var s screened
	switch {
	case d == nil:
		s.stale = true // nothing delivered: as good as a report ignored
		return s
	case int(d.NodeId) != node || len(d.Edges) > len(hostileGraph)-1,
		// A window must end after it starts, within 2 h (its offsets.jsonl
		// record could not be written otherwise).
		d.WindowEndNs <= d.WindowStartNs || uint64(d.WindowEndNs)-uint64(d.WindowStartNs) > 2*3600e9,
		// The node's own uncertainty of a step too small to find: finite,
		// within GraphCalc's σ.
		!(d.MissSigmaNs >= 0 && d.MissSigmaNs <= graphcalc.MaxSigma):
		s.refused = true
		return s
	case d.RoundId != 1:
		s.stale = true
		return s
	}
	valid := func(alpha, beta, sigma, alphaSigma, sys float64) bool {
		in := func(v, lo, hi float64) bool { return !math.IsNaN(v) && lo <= v && v <= hi }
		// alpha and beta: two clocks each within a year and 1000 ppm of
		// global time (offsets.MaxOffsetNS, MaxDriftPPM).
		return in(alpha, -2e-3, 2e-3) && in(beta, -2*offsets.MaxOffsetNS, 2*offsets.MaxOffsetNS) &&
			in(sigma, graphcalc.MinSigma, graphcalc.MaxSigma) && in(alphaSigma, graphcalc.MinAlphaSigma, graphcalc.MaxAlphaSigma) &&
			in(sys, 0, graphcalc.MaxSigma)
	}
	seen := map[int32]bool{}
	for _, e := range d.Edges {
		ok := e != nil && int(e.SrcNodeId) == node && e.DstNodeId >= 0 && int(e.DstNodeId) < len(hostileGraph) &&
			int(e.DstNodeId) != node && !seen[e.DstNodeId]
		if ok && e.Insufficient {
			// Nothing uses its fit, but rounds.jsonl records it.
			ok = !math.IsNaN(e.Alpha+e.Beta+e.SigmaNs+e.AsymSigmaNs) && !math.IsInf(e.Alpha+e.Beta+e.SigmaNs+e.AsymSigmaNs, 0) &&
				e.SigmaNs >= 0 && e.AsymSigmaNs >= 0
		}
		if ok && !e.Insufficient {
			ok = valid(e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma, e.AsymSigmaNs)
		}
		// Every step (of an insufficient edge too, which honestly has
		// none) within a year of the window (after_ns 0: none), its fit
		// before it valid.
		near := func(v int64) bool {
			return float64(v) >= float64(d.WindowStartNs)-offsets.MaxOffsetNS && float64(v) <= float64(d.WindowEndNs)+offsets.MaxOffsetNS
		}
		for _, st := range e.Steps {
			ok = ok && near(st.AtNs) && (st.AfterNs == 0 || near(st.AfterNs))
			if p := st.GetBefore(); ok && p != nil {
				ok = valid(p.Alpha, p.Beta, p.SigmaNs, p.AlphaSigma, p.AsymSigmaNs)
			}
		}
		if !ok {
			s.dropped++
			continue
		}
		seen[e.DstNodeId] = true
		s.kept = append(s.kept, e)
		if !e.Insufficient {
			s.contributes = true
		}
	}
	return s
}

// checkFuzzedRound checks got, the round solved from the honest reports
// with node's replaced by d (nil: none delivered), against the properties
// at the top of this file.
func checkFuzzedRound(t *testing.T, node int, d *syncpb.NodeWindowData, got *RoundReport) {
	t.Helper()
	s := screen(node, d)

	var wantMissing []int
	if s.refused || s.stale {
		wantMissing = []int{node}
	}
	if !slices.Equal(got.Missing, wantMissing) {
		t.Errorf("missing %v, want %v (refused %v, stale %v)", got.Missing, wantMissing, s.refused, s.stale)
	}
	var note string
	if refused := btoi(s.refused); refused+s.dropped > 0 {
		note = fmt.Sprintf("the master refused %d reports and dropped %d edges since the last round (see its log)", refused, s.dropped)
	}
	var gotNote string
	if n := len(got.Notes); n > 0 && strings.HasPrefix(got.Notes[n-1], "the master refused") {
		gotNote = got.Notes[n-1]
	}
	if gotNote != note {
		t.Errorf("rejection note %q, want %q", gotNote, note)
	}

	checkFinite(t, got)
	checkWritable(t, got)

	// The round the honest reports and the screened report make.
	var clean *syncpb.NodeWindowData
	if !s.refused && !s.stale {
		clean = proto.Clone(d).(*syncpb.NodeWindowData)
		clean.Edges = nil
		for _, e := range s.kept {
			clean.Edges = append(clean.Edges, proto.Clone(e).(*syncpb.EdgeAlphaBeta))
		}
	}
	base := newFuzzRound(t)
	base.deliver(t, node, clean)
	want := base.finish(t)
	if fmt.Sprint(got.Err) != fmt.Sprint(want.Err) {
		t.Errorf("round error %v; from the screened report %v", got.Err, want.Err)
	}
	if got.Summary == nil || want.Summary == nil {
		if got.Summary != want.Summary {
			t.Errorf("round solved %v; from the screened report %v", got.Summary != nil, want.Summary != nil)
		}
	} else if g, w := fmt.Sprint(got.Summary.Nodes), fmt.Sprint(want.Summary.Nodes); g != w {
		t.Errorf("models:\n got %s\nfrom the screened report:\n     %s", g, w)
	}
	if g, w := fmt.Sprint(got.Offsets), fmt.Sprint(want.Offsets); g != w {
		t.Errorf("offsets:\n got %s\nfrom the screened report:\n     %s", g, w)
	}

	if s.contributes {
		return
	}
	if got.Err != nil || got.Summary == nil {
		t.Fatalf("nothing of node %d's report reached the solver, and the honest reports left the round unsolved: %v", node, got.Err)
	}
	for n, truth := range hostileTruth {
		md, ok := got.Summary.Model(n)
		if !ok || math.Abs(md.U-truth) > 1e-6 || math.Abs(md.Rate-1) > 1e-12 {
			t.Errorf("node %d: model %+v (found %v), want U %v and Rate 1", n, md, ok, truth)
		}
	}
}

// checkFinite fails unless the round is solved with finite models and
// offsets, or unsolved with an error.
func checkFinite(t *testing.T, r *RoundReport) {
	t.Helper()
	finite := func(what string, vs ...float64) {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: %v", what, vs)
				return
			}
		}
	}
	if r.Summary == nil {
		if r.Err == nil {
			t.Error("round unsolved without an error")
		}
		if len(r.Offsets) > 0 {
			t.Errorf("an unsolved round with %d offsets", len(r.Offsets))
		}
		return
	}
	var disc *graphcalc.DisconnectedError
	if r.Err != nil && !errors.As(r.Err, &disc) {
		t.Errorf("a round solved with error %v", r.Err)
	}
	for _, m := range r.Summary.Nodes {
		finite(fmt.Sprintf("node %d's model %+v", m.Node, m), m.U, m.Rate, m.Sigma, m.FitSigma, m.SysSigma, m.RateSigma)
		if m.Node < 0 || m.Node >= len(hostileGraph) {
			t.Errorf("a model of node %d", m.Node)
		}
	}
	for _, o := range r.Offsets {
		finite(fmt.Sprintf("node %d's offset %+v", o.NodeID, o), o.OffsetNS, o.DriftPPM, o.UncertaintyNS, o.DriftUncertaintyPPM)
		for _, st := range o.Steps {
			finite(fmt.Sprintf("node %d's step %+v", o.NodeID, st), st.AtUncertaintyNS, st.SizeNS, st.SizeUncertaintyNS)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wireOf is m marshalled deterministically, to compare messages NaN and
// -0 fields included.
func wireOf(t *testing.T, m proto.Message) []byte {
	t.Helper()
	w, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
