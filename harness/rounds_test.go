package harness

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/harness/simbackend"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// The tests of the sync protocol run through the harness: small worlds
// (3 to 4 nodes, windows of 200-500ms, a few rounds), so that each runs in
// a second or two under the race detector.

// rtMesh4 is a 4-node full mesh with modest clock errors and link jitter,
// running the sync protocol; %s is the protocol's mode-specific keys.
const rtMesh4 = `
name: %s
seed: 7
duration: %s
nodes: 4
clocks:
  default:
    offset: uniform(-2ms, 2ms)
    drift_ppm: uniform(-50, 50)
    read_noise: 20ns
links:
  default:
    delay: 50us
    jitter: 5us
    loss: {random: 0.5%%}
protocol:
  kind: sync
  cadence: 1ms
  window: 300ms
  gather_deadline: 100ms
  heartbeat: 100ms
%s
`

func rtMesh4Scenario(name, duration, protocol string) string {
	return fmt.Sprintf(rtMesh4, name, duration, protocol)
}

// TestSyncDeterministic: the same scenario and seed give the same bytes in
// every file the sync protocol writes, and another seed another probe
// stream.
func TestSyncDeterministic(t *testing.T) {
	sc := rtParse(t, "det", rtMesh4Scenario("det", "2s", "  estimator: svm\n  rounds: 4\n"))
	_, a := rtRun(t, sc, nil)
	_, b := rtRun(t, sc, nil)
	files := []string{FileOffsets, FileRounds, FileProbes, FileTruth, FileSummary}
	for _, f := range files {
		ha, hb := rtSHA256(t, filepath.Join(a, f)), rtSHA256(t, filepath.Join(b, f))
		if ha != hb {
			t.Errorf("%s differs between two runs of seed 7: %s vs %s", f, ha, hb)
		}
	}
	// The files are not trivially equal: the run solved its rounds.
	if offs := rtOffsets(t, a); len(offs) != 4*4 {
		t.Fatalf("offsets.jsonl has %d records; want 4 nodes × 4 rounds", len(offs))
	}
	seed := uint64(8)
	_, c := rtRun(t, sc, &seed)
	if rtSHA256(t, filepath.Join(a, FileProbes)) == rtSHA256(t, filepath.Join(c, FileProbes)) {
		t.Errorf("seeds 7 and 8 recorded the same probes.bin")
	}
}

// TestSyncOnlineMatchesOffline: the master's online solve and the offline
// re-estimate of the recorded probe stream share the fit and GraphCalc, so
// in a fault-free run they agree exactly, float for float.
func TestSyncOnlineMatchesOffline(t *testing.T) {
	for _, k := range []estimate.Kind{estimate.SVM, estimate.Regression} {
		t.Run(string(k), func(t *testing.T) {
			sc := rtParse(t, "online-"+string(k), rtMesh4Scenario("online-"+string(k), "2s", fmt.Sprintf("  estimator: %s\n  rounds: 4\n", k)))
			res, dir := rtRun(t, sc, nil)
			online := rtOffsets(t, dir)
			if len(online) != 4*4 {
				t.Fatalf("offsets.jsonl has %d records; want 4 nodes × 4 rounds", len(online))
			}
			if res.Summary.Sync.Estimator != string(k) {
				t.Fatalf("the run used estimator %q, want %q", res.Summary.Sync.Estimator, k)
			}
			est, err := Estimate(dir, EstimateOptions{Estimators: []estimate.Kind{k}, NoWrite: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(est) != 1 || est[0].Estimator != string(k) || est[0].Rounds != 4 || est[0].Solved != 4 || len(est[0].Files) != 0 {
				t.Fatalf("Estimate returned %+v; want one %s result of 4 solved rounds and no files", est, k)
			}
			offline := est[0].Offsets()
			if len(offline) != len(online) {
				t.Fatalf("offline re-estimate has %d records, online %d", len(offline), len(online))
			}
			for i := range online {
				on, off := online[i], offline[i]
				off.Type = "offset"
				if on.RoundID != off.RoundID || on.NodeID != off.NodeID || on.WindowID != off.WindowID ||
					on.WindowStartNS != off.WindowStartNS || on.WindowEndNS != off.WindowEndNS ||
					math.Float64bits(on.OffsetNS) != math.Float64bits(off.OffsetNS) ||
					math.Float64bits(on.DriftPPM) != math.Float64bits(off.DriftPPM) ||
					math.Float64bits(on.UncertaintyNS) != math.Float64bits(off.UncertaintyNS) {
					t.Errorf("record %d: online %+v, offline %+v", i, on, off)
				}
			}
			// The edges too: rounds.jsonl's per-edge fits and residuals are
			// what an offline solve of the same probes gives.
			edges, _ := rtRounds(t, dir)
			blocks, _, err := syncrun.ReadProbes(filepath.Join(dir, FileProbes))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := sc.Resolve(sc.Seed)
			cfg := syncrun.Config(sc, r)
			nodes := make([]int, len(cfg.Nodes))
			for i, n := range cfg.Nodes {
				nodes[i] = int(n)
			}
			var offEdges []offsets.Edge
			for _, or := range rounds.Offline(blocks, nodes, int(cfg.Reference), cfg.Estimate, cfg.GraphCalc) {
				if or.Err != nil {
					t.Errorf("offline round %d: %v", or.Round, or.Err)
				}
				for _, e := range or.Edges {
					e.Type = "edge"
					offEdges = append(offEdges, e)
				}
			}
			if len(edges) != 4*12 || !reflect.DeepEqual(edges, offEdges) {
				t.Errorf("rounds.jsonl has %d edge records, the offline solve %d; they differ:\nonline  %+v\noffline %+v", len(edges), len(offEdges), edges, offEdges)
			}
			// And the summary's online accuracy is the offline one.
			if !reflect.DeepEqual(res.Summary.Sync.Online, res.Summary.Sync.Estimators[string(k)]) {
				t.Errorf("summary: online accuracy %+v differs from the offline %s re-estimate's %+v", res.Summary.Sync.Online, k, res.Summary.Sync.Estimators[string(k)])
			}
		})
	}
}

// TestSyncModes runs each mode on the 4-node mesh and checks that it
// completes its rounds and reaches its accuracy.
func TestSyncModes(t *testing.T) {
	tests := []struct {
		mode     string
		protocol string
		duration string
		rounds   int
		// selfRotating: the nodes rotate their windows by their own clocks
		// (windows, consensus), so a node's windows follow each other
		// without a gap and last exactly `window` on its clock.
		selfRotating bool
	}{
		// Variant B: p99 |offset error| under 1µs from round 3.
		{mode: "rounds", protocol: "  mode: rounds\n  rounds: 5\n  converged_from: 3\n", duration: "2500ms", rounds: 5},
		// Variant A: the same bound.
		{mode: "windows", protocol: "  mode: windows\n  rounds: 5\n  converged_from: 3\n", duration: "2500ms", rounds: 5, selfRotating: true},
		// Firefly: gain 0.8 on a 4-node mesh contracts the disagreement by
		// about |1 − 0.8·4/3| ≈ 0.07 per window, so 8 windows take ±2ms
		// offsets well under 1µs.
		{mode: "consensus", protocol: "  mode: consensus\n  consensus_gain: 0.8\n  rounds: 8\n", duration: "3s", rounds: 8, selfRotating: true},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			name := "mode-" + tc.mode
			res, dir := rtRun(t, rtParse(t, name, rtMesh4Scenario(name, tc.duration, tc.protocol)), nil)
			sy := res.Summary.Sync
			if sy.Mode != tc.mode || sy.Rounds != tc.rounds {
				t.Fatalf("summary: mode %q, %d rounds; want %q, %d", sy.Mode, sy.Rounds, tc.mode, tc.rounds)
			}
			on := sy.Online
			last := on.PerRound[len(on.PerRound)-1]
			t.Logf("%s: |offset err| p99 %.0f max %.0f ns from round %d; converged at round %d; last round (%d) max %.0f ns",
				tc.mode, on.OffsetError.P99, on.OffsetError.Max, sy.ConvergedFrom, on.ConvergedRound, last.Round, last.OffsetMaxNS)
			if len(on.PerRound) != tc.rounds || on.Unsolved != 0 {
				t.Errorf("accuracy covers %d rounds with %d unsolved windows; want %d rounds, none unsolved", len(on.PerRound), on.Unsolved, tc.rounds)
			}
			if tc.mode == "consensus" {
				if on.ConvergedRound == 0 || on.ConvergedRound > uint64(tc.rounds-2) || last.OffsetMaxNS > 1000 {
					t.Errorf("consensus did not converge: converged round %d (want 1..%d), last round max %v ns", on.ConvergedRound, tc.rounds-2, last.OffsetMaxNS)
				}
			} else if on.OffsetError.N == 0 || on.OffsetError.P99 > 1000 {
				t.Errorf("p99 |offset error| %v ns over %d points from round %d; want < 1µs", on.OffsetError.P99, on.OffsetError.N, sy.ConvergedFrom)
			}

			offs := rtOffsets(t, dir)
			_, rnds := rtRounds(t, dir)
			if tc.mode == "consensus" {
				if len(rnds) != 0 {
					t.Errorf("consensus wrote %d round lines; it has no master", len(rnds))
				}
			} else if ids := rtRoundIDs(rnds); !slices.Equal(ids, rtSeq(tc.rounds)) {
				t.Errorf("rounds.jsonl round lines %v; want one per round, 1..%d", ids, tc.rounds)
			}
			// Every node has one record per round, its windows numbered 1, 2, ...
			byNode := rtByNode(offs)
			if len(byNode) != 4 {
				t.Fatalf("offsets for %d nodes; want 4", len(byNode))
			}
			window := int64(300e6)
			for node, recs := range byNode {
				if len(recs) != tc.rounds {
					t.Errorf("node %d: %d records; want %d", node, len(recs), tc.rounds)
					continue
				}
				for i, o := range recs {
					if o.RoundID != uint64(i+1) || o.WindowID != uint64(i+1) {
						t.Errorf("node %d record %d: round %d window %d; want both %d", node, i, o.RoundID, o.WindowID, i+1)
					}
					length := o.WindowEndNS - o.WindowStartNS
					if tc.selfRotating && rtAbs(float64(length-window)) > 1000 {
						t.Errorf("node %d round %d: window of %dns on its clock; a self-rotated window lasts %dns", node, o.RoundID, length, window)
					}
					if i == 0 {
						continue
					}
					gap := o.WindowStartNS - recs[i-1].WindowEndNS
					switch {
					case tc.selfRotating && rtAbs(float64(gap)) > 1000:
						t.Errorf("node %d: window %d starts %dns after window %d ends; a self-rotating node opens the next window at once", node, o.WindowID, gap, recs[i-1].WindowID)
					case !tc.selfRotating && gap < 50e3:
						// ROUND_END, the reports and ROUND_START cross 50µs links.
						t.Errorf("node %d: window %d starts %dns after window %d ends; in rounds mode a node waits for ROUND_START", node, o.WindowID, gap, recs[i-1].WindowID)
					}
				}
			}
		})
	}
}

// rtRogue is node 3 of TestMasterSurvivesBadMessages: at each case's time
// it dials the master and, once connected, sends the case's messages.
type rtRogue struct {
	cases []*rtRogueCase
	now   func() time.Duration
}

type rtRogueCase struct {
	name string
	msgs [][]byte
	// wantLog are what the master's log line for it must say.
	wantLog []string

	at       time.Duration // when the rogue dials
	stream   world.Stream
	opened   bool
	sent     int
	sendErr  error
	closed   bool
	closedAt time.Duration
	closeErr error
}

func (r *rtRogue) Start(env world.Env) error {
	for _, c := range r.cases {
		env.AfterFunc(c.at, func() {
			s, err := env.Dial(world.Addr{Node: 0, Port: rounds.Port}, rtRogueConn{r, c})
			if err != nil {
				c.sendErr = err
				return
			}
			c.stream = s
		})
	}
	return nil
}

type rtRogueConn struct {
	r *rtRogue
	c *rtRogueCase
}

func (h rtRogueConn) OnOpen(s world.Stream) {
	h.c.opened = true
	for _, m := range h.c.msgs {
		if err := s.Send(m); err != nil {
			h.c.sendErr = err
			return
		}
		h.c.sent++
	}
}

func (h rtRogueConn) OnMessage(world.Stream, []byte) {}

func (h rtRogueConn) OnClose(_ world.Stream, err error) {
	h.c.closed, h.c.closedAt, h.c.closeErr = true, h.r.now(), err
}

// rtFrame frames env, failing the test if it cannot.
func rtFrame(t *testing.T, env *syncpb.Envelope) []byte {
	t.Helper()
	b, err := wire.Marshal(env, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMasterSurvivesBadMessages: a node that sends the master garbage gets
// its stream closed, with a log line that says why, and the rounds of the
// well-behaved nodes go on undisturbed.
func TestMasterSurvivesBadMessages(t *testing.T) {
	// Nodes 0-2 run the protocol on a mesh of their own; node 3, added
	// below, is not in the probe graph and reaches the master over the
	// default link.
	sc := rtParse(t, "rogue", `
name: rogue
seed: 5
duration: 2s
nodes: 3
clocks:
  default:
    offset: uniform(-1ms, 1ms)
    drift_ppm: uniform(-20, 20)
links:
  default:
    delay: 50us
    jitter: 5us
protocol:
  kind: sync
  cadence: 1ms
  window: 200ms
  gather_deadline: 100ms
  heartbeat: 100ms
`)
	res, err := sc.Resolve(sc.Seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := simbackend.Config(sc.Seed, res)
	cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{})
	rcfg := syncrun.Config(sc, res)
	rcfg.Participants = []world.NodeID{0, 1, 2}
	if !slices.Equal(rcfg.Nodes, rcfg.Participants) {
		t.Fatalf("probe graph nodes %v; want 0-2 only", rcfg.Nodes)
	}

	prefix := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	window := &syncpb.NodeWindowData{NodeId: 1, RoundId: 1, WindowId: 1, Edges: []*syncpb.EdgeAlphaBeta{{SrcNodeId: 1, DstNodeId: 0, Beta: 123}}}
	cases := []*rtRogueCase{
		{name: "not a frame: shorter than a prefix", msgs: [][]byte{[]byte("hi")},
			wantLog: []string{"closing connection: bad message", "shorter than its 4-byte length prefix"}},
		{name: "not a frame: payload is not an Envelope", msgs: [][]byte{append(prefix(4), 0xff, 0xff, 0xff, 0xff)},
			wantLog: []string{"closing connection: bad message", "is not an Envelope"}},
		{name: "prefix declares more than the cap", msgs: [][]byte{append(prefix(wire.DefaultMaxFrame+1), make([]byte, 64)...)},
			wantLog: []string{"closing connection: bad message", fmt.Sprintf("frame declares %d bytes, cap %d", wire.DefaultMaxFrame+1, wire.DefaultMaxFrame)}},
		{name: "empty Envelope", msgs: [][]byte{prefix(0)},
			wantLog: []string{"closing connection: bad message", "envelope has no body"}},
		{name: "window data before hello", msgs: [][]byte{rtFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: window}})},
			wantLog: []string{"closing connection: message before hello", "kind=window"}},
		{name: "hello claiming another node", msgs: [][]byte{rtFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 9}}})},
			wantLog: []string{"closing connection: bad hello", "node=1"}},
		{name: "hello, then a master's message", msgs: [][]byte{
			rtFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 3, Incarnation: 1}}}),
			rtFrame(t, &syncpb.Envelope{Body: &syncpb.Envelope_RoundEnd{RoundEnd: &syncpb.RoundEnd{RoundId: 2}}}),
		}, wantLog: []string{"closing connection: unexpected message", "node=3", "kind=round_end"}},
	}
	const first, every = 250 * time.Millisecond, 80 * time.Millisecond
	for i, c := range cases {
		c.at = first + time.Duration(i)*every
	}
	lastCase := cases[len(cases)-1].at

	var w *sim.Sim
	now := func() time.Duration { return w.Now() }
	obs := &rtObserver{now: now}
	rogue := &rtRogue{cases: cases, now: now}
	var log bytes.Buffer
	w, err = sim.New(cfg, func(id world.NodeID) world.Program {
		if id == 3 {
			return rogue
		}
		return rounds.New(rcfg, 1, obs)
	}, sim.Options{Log: &log, LogLevel: slog.LevelInfo})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("the world panicked at %v: %v\nlog:\n%s", w.Now(), r, log.String())
			}
		}()
		w.Run(1500 * time.Millisecond)
	}()

	lines := strings.Split(log.String(), "\n")
	for _, c := range cases {
		switch {
		case c.stream == nil || !c.opened || c.sendErr != nil || c.sent != len(c.msgs):
			t.Errorf("%s: the rogue did not get its messages out (opened %v, sent %d of %d, err %v)", c.name, c.opened, c.sent, len(c.msgs), c.sendErr)
		case !c.closed:
			t.Errorf("%s: the master did not close the stream", c.name)
		case c.closeErr != nil:
			t.Errorf("%s: stream ended with %v; want the master's close (nil error)", c.name, c.closeErr)
		case c.closedAt > c.at+time.Millisecond:
			t.Errorf("%s: stream closed at %v, dialled at %v; want within a few link delays", c.name, c.closedAt, c.at)
		}
		want := append([]string{"node=0"}, c.wantLog...)
		if c.stream != nil && !strings.Contains(c.wantLog[0], "unexpected") {
			want = append(want, "from="+c.stream.LocalAddr().String()+" ")
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return rtContainsAll(l, want...) }) {
			t.Errorf("%s: no log line with %q", c.name, want)
		}
	}

	// Rounds went on 1, 2, 3, ... with every node of 0-2 reporting, also
	// after the last bad message.
	var after int
	for i, r := range obs.rounds {
		if r.Round != uint64(i+1) {
			t.Errorf("round report %d is round %d; want %d", i, r.Round, i+1)
		}
		if len(r.Missing) != 0 || len(r.Nodes) != 3 || r.Err != nil || r.Summary == nil || len(r.Offsets) != 3 {
			t.Errorf("round %d: %d reports, missing %v, %d offsets, err %v; want all of nodes 0-2 solved", r.Round, len(r.Nodes), r.Missing, len(r.Offsets), r.Err)
		}
		for _, d := range r.Nodes {
			if d.NodeId == 1 && d.Edges[0].Beta == 123 {
				t.Errorf("round %d: the rogue's forged report for node 1 was taken", r.Round)
			}
		}
		if obs.at[i] > lastCase {
			after++
		}
	}
	// 1.5s of 200ms windows and short gathers is 6 rounds or more.
	if len(obs.rounds) < 6 || after < 2 {
		t.Errorf("%d rounds completed, %d after the last bad message at %v; want >= 6 and >= 2", len(obs.rounds), after, lastCase)
	}
	t.Logf("%d rounds, %d after the last bad message", len(obs.rounds), after)
	if t.Failed() {
		t.Logf("log:\n%s", log.String())
	}
}

// TestGatherDeadline: a node that stays connected but whose reports do not
// arrive in time is listed missing, and the master solves the round with
// the others once the gather deadline has passed, not later.
func TestGatherDeadline(t *testing.T) {
	const deadline = 60 * time.Millisecond
	const margin = time.Millisecond
	tests := []struct {
		name  string
		fault string
	}{
		// Node 3 is cut off in round 3: its stream holds what it sends
		// until the master drops the silent connection (3 heartbeats).
		{"partition", "{at: 450ms, kind: partition, groups: [[3]]}"},
		// Node 3 handles every event 150ms late from round 3 on: its
		// reports come after the 60ms deadline, its heartbeats still in
		// time to keep it connected.
		{"slow_node", "{at: 450ms, kind: slow_node, node: 3, extra_delay: 150ms}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "gather-" + strings.ReplaceAll(tc.name, "_", "-")
			sc := rtParse(t, name, fmt.Sprintf(`
name: %s
seed: 11
duration: 2s
nodes: 4
clocks:
  default:
    offset: uniform(-1ms, 1ms)
    drift_ppm: uniform(-20, 20)
links:
  default:
    delay: 50us
    jitter: 5us
faults:
  - %s
protocol:
  kind: sync
  cadence: 1ms
  window: 200ms
  rounds: 6
  gather_deadline: %v
  heartbeat: 100ms
`, name, tc.fault, deadline))
			res, dir := rtRun(t, sc, nil)
			if n := res.Summary.Sync.Rounds; n != 6 {
				t.Fatalf("%d rounds completed; want all 6", n)
			}
			_, rnds := rtRounds(t, dir)
			if ids := rtRoundIDs(rnds); !slices.Equal(ids, rtSeq(6)) {
				t.Fatalf("round lines %v; want 1..6", ids)
			}
			waited := 0
			for _, r := range rnds {
				t.Logf("round %d: reported %v missing %v gather wait %v end to start %v", r.RoundID, r.Reported, r.Missing,
					time.Duration(r.GatherWaitNS), time.Duration(r.EndToStartNS))
				if r.RoundID < 3 {
					// Before the fault: everyone reports, the gather ends
					// with the last report, long before the deadline.
					if len(r.Missing) != 0 || time.Duration(r.EndToStartNS) > deadline/2 {
						t.Errorf("round %d before the fault: missing %v, end to start %v", r.RoundID, r.Missing, time.Duration(r.EndToStartNS))
					}
					continue
				}
				if !slices.Equal(r.Missing, []int{3}) || !slices.Equal(r.Reported, []int{0, 1, 2}) {
					t.Errorf("round %d: reported %v, missing %v; want 0-2 reported, 3 missing", r.RoundID, r.Reported, r.Missing)
				}
				if r.GatherWaitNS < 0 || time.Duration(r.GatherWaitNS) > deadline+margin || time.Duration(r.EndToStartNS) > deadline+margin {
					t.Errorf("round %d: gather wait %v, end to start %v; want both within the %v deadline", r.RoundID,
						time.Duration(r.GatherWaitNS), time.Duration(r.EndToStartNS), deadline)
				}
				if time.Duration(r.EndToStartNS) >= deadline {
					waited++
				}
			}
			// While node 3 still counts as connected the master has to wait
			// for the deadline: round 3 at least.
			if waited == 0 {
				t.Errorf("no round waited for the deadline; node 3 was connected in round 3")
			}
			if m := res.Summary.Sync.Control.Missing; !slices.Equal(m["3"], []int{3}) {
				t.Errorf("summary control.missing %v; want node 3 in round 3", m)
			}
		})
	}
}

// TestAdaptiveWindow: the master lengthens the window while the nodes'
// drifts hold still between rounds and shortens it when they wander.
func TestAdaptiveWindow(t *testing.T) {
	const (
		wmin = 250 * time.Millisecond
		wmax = time.Second
	)
	tests := []struct {
		name   string
		clocks string
		window time.Duration
		// want is window_ns round by round: the first two rounds run with
		// the initial window (the master compares a round with the one
		// before), then each step doubles or halves within the bounds.
		want []time.Duration
	}{
		// Constant frequencies, clean links: the drift estimates agree to
		// far better than 0.02 ppm, so the window doubles up to max.
		{"stable", "    wander_ppm: 0", wmin, []time.Duration{wmin, wmin, 2 * wmin, wmax, wmax}},
		// A random walk of 1 ppm every 100ms: drifts move by ppm between
		// rounds, so the window halves down to min.
		{"wander", "    wander_ppm: 1\n    wander_step: 100ms", wmax, []time.Duration{wmax, wmax, wmax / 2, wmin, wmin}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "adaptive-" + tc.name
			sc := rtParse(t, name, fmt.Sprintf(`
name: %s
seed: 3
duration: 5s
nodes: 3
clocks:
  default:
    offset: uniform(-1ms, 1ms)
    drift_ppm: uniform(-20, 20)
%s
links:
  default:
    delay: 50us
protocol:
  kind: sync
  cadence: 2ms
  window: %v
  adaptive_window: {min: %v, max: %v}
  rounds: %d
  gather_deadline: 100ms
  heartbeat: 100ms
`, name, tc.clocks, tc.window, wmin, wmax, len(tc.want)))
			_, dir := rtRun(t, sc, nil)
			_, rnds := rtRounds(t, dir)
			var got []time.Duration
			for _, r := range rnds {
				got = append(got, time.Duration(r.WindowNS))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("window by round %v; want %v", got, tc.want)
			}
			// The master's own windows (node 0, the master) really had
			// those lengths.
			for _, o := range rtOffsets(t, dir) {
				if o.NodeID != 0 || int(o.RoundID) > len(got) {
					continue
				}
				w := got[o.RoundID-1]
				if l := time.Duration(o.WindowEndNS - o.WindowStartNS); rtAbs(float64(l-w)) > float64(time.Millisecond) {
					t.Errorf("round %d: node 0's window lasted %v on its clock; rounds.jsonl says %v", o.RoundID, l, w)
				}
			}
		})
	}
}

// TestInsufficientEdgeNeverZero: an edge with too few probe pairs is
// marked insufficient and left out of the solve; it never becomes a zero
// fit that pins its nodes together. Its nodes are solved through their
// other edges, or, where it was their only link, left out.
func TestInsufficientEdgeNeverZero(t *testing.T) {
	tests := []struct {
		name     string
		topology string
		lossy    [2]int // both directions lose 97% of their packets
		edges    int    // directed edges of the topology
		absent   []int  // nodes that cannot be solved
	}{
		// Nodes 1 and 2 still reach each other through 0 and 3.
		{"mesh", "full_mesh", [2]int{1, 2}, 12, nil},
		// Node 2's only link is the lossy one: it is left unsolved.
		{"star", "star", [2]int{0, 2}, 6, []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "insufficient-" + tc.name
			sc := rtParse(t, name, fmt.Sprintf(`
name: %s
seed: 13
duration: 2s
nodes: 4
clocks:
  default:
    offset: uniform(-2ms, 2ms)
    drift_ppm: uniform(-50, 50)
    read_noise: 20ns
topology:
  kind: %s
links:
  default:
    delay: 50us
    jitter: 5us
  overrides:
    - {between: [%d, %d], loss: {random: 97%%}}
protocol:
  kind: sync
  cadence: 1ms
  window: 300ms
  rounds: 4
  gather_deadline: 100ms
  heartbeat: 100ms
  min_pairs: 10
`, name, tc.topology, tc.lossy[0], tc.lossy[1]))
			res, dir := rtRun(t, sc, nil)
			edges, rnds := rtRounds(t, dir)
			if len(rnds) != 4 || len(edges) != 4*tc.edges {
				t.Fatalf("%d rounds with %d edge records; want 4 rounds of %d edges", len(rnds), len(edges), tc.edges)
			}
			lossy := func(e offsets.Edge) bool {
				return (e.Src == tc.lossy[0] && e.Dst == tc.lossy[1]) || (e.Src == tc.lossy[1] && e.Dst == tc.lossy[0])
			}
			for _, e := range edges {
				switch {
				case lossy(e):
					if !e.Insufficient || e.Residual != nil || e.Rejected || e.PairsCount >= 10 || e.Alpha != 0 || e.Beta != 0 || e.Sigma != 0 {
						t.Errorf("round %d edge %d→%d: %+v; want insufficient, with fewer than 10 pairs, no fit and no residual", e.RoundID, e.Src, e.Dst, e)
					}
					if e.LostCount < 400 {
						t.Errorf("round %d edge %d→%d lost only %d probes at 97%% loss", e.RoundID, e.Src, e.Dst, e.LostCount)
					}
				case e.Insufficient || e.Residual == nil:
					t.Errorf("round %d edge %d→%d: insufficient %v, residual %v; want a fitted edge the solver used", e.RoundID, e.Src, e.Dst, e.Insufficient, e.Residual)
				}
			}

			// No record for an absent node; every other node solved in every
			// round, within 1µs of the truth: an offset taken from a zero
			// fit would be off by the clocks' milliseconds.
			offs := rtOffsets(t, dir)
			byNode := rtByNode(offs)
			for node := range 4 {
				recs := byNode[node]
				if slices.Contains(tc.absent, node) {
					if len(recs) != 0 {
						t.Errorf("node %d, reachable only over the insufficient edge, has offsets %+v", node, recs)
					}
					continue
				}
				if len(recs) != 4 {
					t.Errorf("node %d: %d offsets records; want one per round", node, len(recs))
				}
				for _, o := range recs {
					if node != 0 && (o.OffsetNS == 0 || o.DriftPPM == 0) {
						t.Errorf("node %d round %d: zero model %+v", node, o.RoundID, o)
					}
				}
			}
			errs, unsolved := groundtruth.Errors(offs, rtTruth(t, dir), 0)
			for _, e := range errs {
				for _, v := range e.Offset {
					if rtAbs(v) > 1000 {
						t.Errorf("node %d round %d: offset error %.0f ns; want < 1µs", e.Node, e.Round, v)
						break
					}
				}
			}
			for _, w := range unsolved {
				if !slices.Contains(tc.absent, w.Node) {
					t.Errorf("node %d round %d unsolved", w.Node, w.Round)
				}
			}
			for _, r := range rnds {
				if len(tc.absent) > 0 && !strings.Contains(r.Error, "disconnected") {
					t.Errorf("round %d: error %q; want the disconnected node named", r.RoundID, r.Error)
				}
				if len(tc.absent) == 0 && (r.Error != "" || r.Solved != 4) {
					t.Errorf("round %d: %d nodes solved, error %q; want all 4", r.RoundID, r.Solved, r.Error)
				}
			}
			t.Logf("%s: online p99 %.0f ns over %d points, %d unsolved windows", tc.name, res.Summary.Sync.Online.OffsetError.P99, res.Summary.Sync.Online.OffsetError.N, res.Summary.Sync.Online.Unsolved)
		})
	}
}
