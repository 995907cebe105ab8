package rounds

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// resultNet returns a shared hand-driven net (worldtest.Net) of four
// nodes and its node id, a node's world in these tests: a clock the test
// sets (at now), and timers (the master's zero-delay hand-off to its own
// node among them) that wait for the test to run them.
func resultNet(id world.NodeID, now int64) (*worldtest.Net, *worldtest.Node) {
	net, _ := masterNet(4)
	net.Clock = now
	return net, net.Node(id)
}

// modelCatcher is an observer that takes models: every model of every
// node, and the round the master solved.
type modelCatcher struct {
	NopObserver
	r      *RoundReport
	models map[world.NodeID][]Model
}

func (c *modelCatcher) Round(r *RoundReport) { c.r = r }
func (c *modelCatcher) Model(node world.NodeID, m Model) {
	if c.models == nil {
		c.models = map[world.NodeID][]Model{}
	}
	c.models[node] = append(c.models[node], m)
}

var _ ModelObserver = (*modelCatcher)(nil)

// resultConfig is the configuration of these tests: hostileGraph, master
// and reference 0, outlier rejection off.
func resultConfig() Config {
	nodes := []world.NodeID{0, 1, 2, 3}
	return Config{
		Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.SVM},
		Cadence: time.Millisecond, Window: time.Second, Rounds: 1,
		Nodes: nodes, Participants: nodes, GatherDeadline: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
		GraphCalc: graphcalc.Options{MaxRejectRounds: -1},
	}
}

// resultRound is round 1 of resultConfig gathered by a master on node 0
// whose other nodes' connections record what it sends them.
type resultRound struct {
	net   *worldtest.Net
	obs   *modelCatcher // the master node's observer
	m     *master
	conns [4]*echoStream
}

// newResultRound returns the master with every node connected; the nodes
// in asking announced FeatureRoundResult in their hello, the others
// nothing (an older version).
func newResultRound(t *testing.T, asking ...world.NodeID) *resultRound {
	t.Helper()
	cfg := resultConfig()
	net, env := resultNet(0, 0)
	obs := &modelCatcher{}
	n := &Node{cfg: cfg, obs: obs, env: env}
	m, err := newMaster(n)
	if err != nil {
		t.Fatal(err)
	}
	n.becomeMaster(m)
	m.core.started = true // no ROUND_START when the last node joins: the test sets the round
	rr := &resultRound{net: net, obs: obs, m: m}
	for _, id := range cfg.Nodes[1:] {
		s := &echoStream{from: world.Addr{Node: id, Port: 40000}}
		rr.conns[id] = s
		h := &syncpb.Hello{NodeId: int32(id), Incarnation: 1}
		for _, a := range asking {
			if a == id {
				h.Features = FeatureRoundResult
			}
		}
		c := masterConn{m}
		c.OnOpen(s)
		c.OnMessage(s, mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: h}}))
	}
	m.openRound(1, 1)
	return rr
}

func mustFrame(t *testing.T, env *syncpb.Envelope) []byte {
	t.Helper()
	b, err := wire.Marshal(env, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// solve gathers reports, solves the round and hands the master's own node
// what the master sent it.
func (rr *resultRound) solve(t *testing.T, reports []sent) *RoundReport {
	t.Helper()
	for _, s := range reports {
		if s.from == 0 {
			rr.m.n.agent.sawReport(s.d)
		}
		rr.m.report(s.from, s.d, 0)
	}
	rr.m.finish()
	rr.net.Advance(0) // the master's hand-off to its own node
	if rr.obs.r == nil {
		t.Fatal("no round finished")
	}
	return rr.obs.r
}

// agent is node id's agent, connected to the master over conn, having
// seen round 1 start and reported d in it.
func resultAgent(t *testing.T, id world.NodeID, d *syncpb.NodeWindowData) (*Node, *modelCatcher, *echoStream, *bytes.Buffer) {
	t.Helper()
	obs := &modelCatcher{}
	_, env := resultNet(id, 5e9)
	conn := &echoStream{from: world.Addr{Node: 0, Port: Port}}
	n := &Node{cfg: resultConfig(), obs: obs, env: env, conn: conn}
	n.agent.sawStart(1, 1e9)
	if d != nil {
		n.agent.sawReport(d)
	}
	return n, obs, conn, &env.Log
}

// TestRoundResults: after a solved round every node that asked for it
// gets one RoundResult, and the model its agent hands its observer is the
// master's record of it, field for field (the line the master writes to
// offsets.jsonl); the master's own node gets its own without the wire. A
// node that did not ask (an older version) gets nothing, so it never sees
// a body it would take for a malformed frame.
func TestRoundResults(t *testing.T) {
	rr := newResultRound(t, 1, 2) // node 3 is an older version
	reports := honestReports()
	r := rr.solve(t, reports)
	if r.Summary == nil || len(r.Offsets) != 4 {
		t.Fatalf("round not solved: %v, %d records", r.Err, len(r.Offsets))
	}
	records := map[int]offsets.Offset{}
	for _, o := range r.Offsets {
		records[o.NodeID] = o
	}
	if len(rr.conns[3].sent) != 0 {
		t.Errorf("node 3, which did not ask, got %d frames", len(rr.conns[3].sent))
	}
	// The master's own node.
	if got := rr.obs.models[0]; len(got) != 1 || !reflect.DeepEqual(got[0].Offset, records[0]) {
		t.Errorf("master's node: models %+v, want one of %+v", got, records[0])
	}
	total := 0
	for _, id := range []world.NodeID{1, 2} {
		conn := rr.conns[id]
		if len(conn.sent) != 1 {
			t.Fatalf("node %d got %d frames, want 1", id, len(conn.sent))
		}
		total += len(conn.sent[0])
		n, obs, _, log := resultAgent(t, id, reports[id].d)
		n.conn = conn
		agentConn{n}.OnMessage(conn, conn.sent[0])
		got := obs.models[id]
		if len(got) != 1 {
			t.Fatalf("node %d: %d models, want 1; log:\n%s", id, len(got), log)
		}
		m := got[0]
		if !reflect.DeepEqual(m.Offset, records[int(id)]) {
			t.Errorf("node %d: model\n %+v\nwant the master's record\n %+v", id, m.Offset, records[int(id)])
		}
		if m.Reference != 0 || m.Sequence != 1 || m.Degraded != 0 || m.ReceivedAt != 5e9 {
			t.Errorf("node %d: reference %d, sequence %d, degraded %v, received at %d; want 0, 1, ok, 5e9", id, m.Reference, m.Sequence, m.Degraded, m.ReceivedAt)
		}
		if s := n.Stats(); s.Results != 1 || s.DroppedResults != nil {
			t.Errorf("node %d: stats %+v; want 1 result, none dropped", id, s)
		}
	}
	if r.Figures.ResultBytes != total || total == 0 {
		t.Errorf("Figures.ResultBytes %d; the frames sent were %d bytes", r.Figures.ResultBytes, total)
	}
}

// TestRoundResultsDegraded: a node missing from the round makes the others'
// results say so; the missing node, still solved from its peers' edges,
// gets its model too.
func TestRoundResultsDegraded(t *testing.T) {
	rr := newResultRound(t, 1, 2, 3)
	reports := honestReports()
	r := rr.solve(t, reports[:3]) // node 3 does not report
	if len(r.Missing) != 1 {
		t.Fatalf("missing %v, want [3]", r.Missing)
	}
	for _, id := range []world.NodeID{1, 2, 3} {
		if len(rr.conns[id].sent) != 1 {
			t.Fatalf("node %d got %d frames, want 1", id, len(rr.conns[id].sent))
		}
		env, err := wire.Unmarshal(rr.conns[id].sent[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := Degraded(env.GetRoundResult().GetDegraded()); d&DegradedMissing == 0 {
			t.Errorf("node %d: degraded %v, want missing", id, d)
		}
	}
}

// TestUnsolvedRoundSendsNothing: a round without a solution sends no
// result to anyone, the master's own node included.
func TestUnsolvedRoundSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reports func() []sent
	}{
		{"no reports", func() []sent { return nil }},
		{"every report refused", func() []sent {
			r := honestReports()
			for i := range r {
				r[i].d.WindowEndNs = r[i].d.WindowStartNs // no window
			}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := newResultRound(t, 1, 2, 3)
			r := rr.solve(t, tc.reports())
			if len(r.Offsets) != 0 {
				t.Fatalf("round has %d records; the test wants an unsolved one", len(r.Offsets))
			}
			for id, c := range rr.conns {
				if c != nil && len(c.sent) != 0 {
					t.Errorf("node %d got %d frames", id, len(c.sent))
				}
			}
			if len(rr.obs.models) != 0 || r.Figures.ResultBytes != 0 {
				t.Errorf("master's node got models %v; result bytes %d", rr.obs.models, r.Figures.ResultBytes)
			}
		})
	}
}

// honestResult is the result of round 1 for node 1 as the master would
// send it for its honest report.
func honestResult() *syncpb.RoundResult {
	return &syncpb.RoundResult{
		RoundId: 1, SequenceNumber: 1, ReferenceNode: 0, NodeId: 1, WindowId: 1, WindowStartNs: 0, WindowEndNs: 1e9,
		OffsetNs: 500, UncertaintyNs: 2, DriftUncertaintyPpm: 1e-3,
		Steps: []*syncpb.ResultStep{{AtNs: 5e8, AtUncertaintyNs: 1e3, SizeNs: 1e6, SizeUncertaintyNs: 3}},
	}
}

// TestResultDoor: a node takes only its own result of a round the master
// started, newer than the last it took, of the window it reported, within
// the run files' bounds, and on its connection to the master. Anything
// else is dropped, logged and counted by reason, and the observer never
// sees it.
func TestResultDoor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*syncpb.RoundResult)
		before func(n *Node) // what happened on the node first
		other  bool          // arrives on a stream that is not the master connection
		reason string        // "" when taken
		log    string
	}{
		{name: "honest"},
		{name: "honest with self-check", mutate: func(r *syncpb.RoundResult) {
			r.SelfCheck = &syncpb.ResultSelfCheck{Predictions: 4, WithinThreeSigma: 4, MaxSigma: 1.2}
		}},
		{name: "another node's", mutate: func(r *syncpb.RoundResult) { r.NodeId = 2 }, reason: "node_id",
			log: `reason=node_id err="node_id 2; this is node 1"`},
		{name: "another reference", mutate: func(r *syncpb.RoundResult) { r.ReferenceNode = 3 }, reason: "reference_node"},
		{name: "a round not started", mutate: func(r *syncpb.RoundResult) { r.RoundId = 2 }, reason: "round_id",
			log: `err="round_id 2; the master started rounds up to 1 on this connection"`},
		{name: "round 0", mutate: func(r *syncpb.RoundResult) { r.RoundId = 0 }, reason: "round_id"},
		{name: "stale: taken already", before: func(n *Node) { n.agent.lastResult = 1 }, reason: "stale"},
		{name: "stale: older", before: func(n *Node) { n.agent.sawStart(2, 2e9); n.agent.lastResult = 2 }, reason: "stale"},
		{name: "another window", mutate: func(r *syncpb.RoundResult) { r.WindowId = 7 }, reason: "window",
			log: `err="window 7 [0, 1000000000]; the node reported window 1 [0, 1000000000] for round 1"`},
		{name: "window moved", mutate: func(r *syncpb.RoundResult) { r.WindowStartNs, r.WindowEndNs = 1e6, 2e9 }, reason: "window"},
		{name: "offset NaN", mutate: func(r *syncpb.RoundResult) { r.OffsetNs = math.NaN() }, reason: "offset_ns"},
		{name: "offset beyond a year", mutate: func(r *syncpb.RoundResult) { r.OffsetNs = 1e17 }, reason: "offset_ns"},
		{name: "drift beyond 1000 ppm", mutate: func(r *syncpb.RoundResult) { r.DriftPpm = -2000 }, reason: "drift_ppm"},
		{name: "sigma negative", mutate: func(r *syncpb.RoundResult) { r.UncertaintyNs = -1 }, reason: "uncertainty_ns"},
		{name: "step outside the window", mutate: func(r *syncpb.RoundResult) { r.Steps[0].AtNs = 3e9 }, reason: "steps[0].at_ns"},
		{name: "self-check counts inverted", mutate: func(r *syncpb.RoundResult) {
			r.SelfCheck = &syncpb.ResultSelfCheck{Predictions: 2, WithinThreeSigma: 3}
		}, reason: "self_check.within_3sigma"},
		{name: "skew negative", mutate: func(r *syncpb.RoundResult) { r.SequenceSkewNs = -1 }, reason: "sequence_skew_ns"},
		{name: "forged on another stream", other: true, reason: "connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := honestReports()[1].d
			n, obs, conn, log := resultAgent(t, 1, d)
			if tc.before != nil {
				tc.before(n)
			}
			msg := honestResult()
			if tc.mutate != nil {
				tc.mutate(msg)
			}
			frame := mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: msg}})
			from := world.Stream(conn)
			if tc.other {
				from = &echoStream{from: world.Addr{Node: 2, Port: Port}}
			}
			agentConn{n}.OnMessage(from, frame)
			s := n.Stats()
			if tc.reason == "" {
				if len(obs.models[1]) != 1 || s.Results != 1 || s.DroppedResults != nil {
					t.Fatalf("honest result not taken: models %v, stats %+v; log:\n%s", obs.models, s, log)
				}
				if want := OffsetOfResult(msg); !reflect.DeepEqual(obs.models[1][0].Offset, want) {
					t.Errorf("model %+v, want %+v", obs.models[1][0].Offset, want)
				}
				return
			}
			if len(obs.models) != 0 || s.Results != 0 {
				t.Errorf("dropped result reached the observer: %v", obs.models)
			}
			if s.DroppedResults[tc.reason] != 1 || len(s.DroppedResults) != 1 {
				t.Errorf("dropped %v, want 1 under %q", s.DroppedResults, tc.reason)
			}
			if !strings.Contains(log.String(), `msg="round result dropped"`) || !strings.Contains(log.String(), tc.log) {
				t.Errorf("log lacks the drop (%s):\n%s", tc.log, log)
			}
			if conn.closed || n.conn == nil {
				t.Error("a dropped result closed the master connection")
			}
		})
	}
}

// TestResultTakenOnce: of two copies of a result the second is stale, and
// Model.Dropped counts what the door dropped before.
func TestResultTakenOnce(t *testing.T) {
	n, obs, conn, _ := resultAgent(t, 1, honestReports()[1].d)
	forged := honestResult()
	forged.NodeId = 3
	good := honestResult()
	for _, msg := range []*syncpb.RoundResult{forged, good, good} {
		agentConn{n}.OnMessage(conn, mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: msg}}))
	}
	if got := obs.models[1]; len(got) != 1 || got[0].Dropped != 1 {
		t.Fatalf("models %+v; want one, after one dropped", got)
	}
	if s := n.Stats(); s.Results != 1 || s.DroppedResults["stale"] != 1 || s.DroppedResults["node_id"] != 1 {
		t.Errorf("stats %+v; want 1 taken, 1 stale, 1 node_id", s)
	}
}

// TestRoundLatency: a node's model carries the time from the round's
// ROUND_END to the next ROUND_START on its clock, and a new connection
// forgets the old one's rounds (a restarted master numbers them from 1).
func TestRoundLatency(t *testing.T) {
	n, obs, conn, _ := resultAgent(t, 1, honestReports()[1].d)
	n.agent.sawEnd(1, 2_000_000_000)
	n.agent.sawStart(2, 2_000_250_000)
	agentConn{n}.OnMessage(conn, mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: honestResult()}}))
	if got := obs.models[1]; len(got) != 1 || got[0].RoundLatency != 250*time.Microsecond {
		t.Fatalf("models %+v; want one with round latency 250µs", got)
	}
	n.agent = agentState{} // what OnOpen does
	agentConn{n}.OnMessage(conn, mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: honestResult()}}))
	if s := n.Stats(); s.DroppedResults["round_id"] != 1 {
		t.Errorf("a result on a new connection before its ROUND_START: stats %+v, want dropped under round_id", s)
	}
}

// plainObserver observes without taking models: a node built into a
// program that has no use for them.
type plainObserver struct{ NopObserver }

// TestResultCompat: a node whose observer takes no models announces no
// feature and ignores a result; a node of this version skips a message of
// a kind it does not know (a newer master's) without closing its
// connection, where it closes it on a malformed frame.
func TestResultCompat(t *testing.T) {
	plain := &Node{obs: plainObserver{}}
	if f := plain.features(); f != 0 {
		t.Errorf("features without a ModelObserver = %d, want 0", f)
	}
	taking := &Node{obs: &modelCatcher{}}
	if f := taking.features(); f != FeatureRoundResult {
		t.Errorf("features with a ModelObserver = %d, want %d", f, FeatureRoundResult)
	}

	n, _, conn, _ := resultAgent(t, 1, honestReports()[1].d)
	n.obs = plainObserver{}
	agentConn{n}.OnMessage(conn, mustFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: honestResult()}}))
	if s := n.Stats(); s.Results != 0 || s.DroppedResults != nil {
		t.Errorf("a node without a ModelObserver: stats %+v, want the result ignored", s)
	}

	// Field 99 of the Envelope: a body this version does not know.
	unknown := []byte{0, 0, 0, 4, 0x9a, 0x06, 0x01, 0x00}
	if _, err := wire.Unmarshal(unknown, 0); err == nil {
		t.Fatal("the unknown body decoded")
	}
	agentConn{n}.OnMessage(conn, unknown)
	if conn.closed || n.conn == nil || n.Stats().UnknownMessages != 1 {
		t.Errorf("unknown body: closed %v, connection %v, stats %+v; want it skipped and counted", conn.closed, n.conn, n.Stats())
	}
	garbage := []byte{0, 0, 0, 3, 0xff, 0xff, 0xff}
	agentConn{n}.OnMessage(conn, garbage)
	if !conn.closed {
		t.Error("a malformed frame did not close the connection")
	}
}

// BenchmarkTakeResult is a node's cost of one RoundResult: decoding its
// frame, the door's checks and the hand-off to the observer.
func BenchmarkTakeResult(b *testing.B) {
	d := honestReports()[1].d
	frame, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: honestResult()}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	_, env := resultNet(1, 0)
	conn := &echoStream{from: world.Addr{Node: 0, Port: Port}}
	n := &Node{cfg: resultConfig(), obs: nopModelObserver{}, env: env, conn: conn}
	n.agent.sawStart(1, 0)
	n.agent.sawReport(d)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		n.agent.lastResult = 0
		agentConn{n}.OnMessage(conn, frame)
	}
	if n.stats.Results == 0 {
		b.Fatal("no result taken")
	}
}

// nopModelObserver takes models and does nothing with them.
type nopModelObserver struct{ NopObserver }

// Model implements ModelObserver.
func (nopModelObserver) Model(world.NodeID, Model) {}
