package rounds

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// agentNet is the shared hand-driven net (worldtest.Net) set up for one
// agent node (node 0 of two, probing node 1, node 1 the master): its clock
// stands still, timers wait until the test fires them, datagrams and
// stream frames stay in flight, and its log is kept.
func agentNet() (*worldtest.Net, *worldtest.Node) {
	net := worldtest.NewNet(2)
	nd := net.Node(0)
	nd.PeerIDs = []world.NodeID{1}
	return net, nd
}

// agentConfig is a rounds-mode configuration: node 1 the master, node 0
// probing it every millisecond in windows of one second.
func agentConfig() Config {
	return Config{
		Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.Regression},
		Cadence: time.Millisecond, Window: time.Second,
		Master: 1, Reference: 1,
		Nodes: []world.NodeID{0, 1}, Participants: []world.NodeID{0, 1},
		GatherDeadline: time.Second, Heartbeat: time.Second,
	}
}

// TestRoundStartTiming (issue 18 item 10): a node takes the window and
// cadence of a ROUND_START from the master only within their bounds
// (MinCadence ≤ cadence ≤ window, MinWindow ≤ window ≤ MaxWindow, or the
// configured adaptive bounds). It refuses anything else with a logged
// error naming the field and its bounds, counts it in
// NodeStats.RefusedTiming, keeps its previous setting, and still runs the
// round at that setting: its prober never spins.
func TestRoundStartTiming(t *testing.T) {
	ms := int64(time.Millisecond)
	type start struct{ window, cadence int64 } // a ROUND_START's window_ns, cadence_ns
	for _, tc := range []struct {
		name   string
		config func(*Config)
		starts []start
		// window and cadence are the settings in effect after the
		// last ROUND_START.
		window, cadence time.Duration
		refused         int
		logs            []string // in the log, in order
	}{
		{name: "the configured window and cadence",
			starts: []start{{1000 * ms, ms}}, window: time.Second, cadence: time.Millisecond},
		{name: "fields unset keep the settings",
			starts: []start{{0, 0}}, window: time.Second, cadence: time.Millisecond},
		{name: "a cadence and window within bounds are taken",
			starts: []start{{500 * ms, 2 * ms}}, window: 500 * time.Millisecond, cadence: 2 * time.Millisecond},
		{name: "cadence_ns = MinCadence is taken",
			starts: []start{{1000 * ms, int64(MinCadence)}}, window: time.Second, cadence: MinCadence},
		{name: "cadence_ns = 1 is refused",
			starts: []start{{1000 * ms, 1}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=cadence_ns value=1ns min=100µs max=1s kept=1ms"}},
		{name: "cadence_ns just below MinCadence is refused",
			starts: []start{{1000 * ms, int64(MinCadence) - 1}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=cadence_ns value=99.999µs min=100µs"}},
		{name: "a negative cadence_ns is refused",
			starts: []start{{1000 * ms, -ms}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=cadence_ns value=-1ms"}},
		{name: "a cadence longer than the window is refused",
			starts: []start{{100 * ms, 200 * ms}}, window: 100 * time.Millisecond, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=cadence_ns value=200ms min=100µs max=100ms"}},
		{name: "window_ns = 1 is refused",
			starts: []start{{1, ms}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=window_ns value=1ns min=1ms max=1h0m0s kept=1s"}},
		{name: "a window beyond MaxWindow is refused",
			starts: []start{{int64(MaxWindow) + 1, ms}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=window_ns", "max=1h0m0s"}},
		{name: "window_ns = MaxInt64 and cadence_ns = 1: both refused",
			starts: []start{{math.MaxInt64, 1}}, window: time.Second, cadence: time.Millisecond, refused: 2,
			logs: []string{"field=window_ns", "field=cadence_ns value=1ns min=100µs max=1s"}},
		{name: "a window shorter than the cadence kept is refused",
			starts: []start{{1000 * ms, 500 * ms}, {10 * ms, 0}}, window: time.Second, cadence: 500 * time.Millisecond, refused: 1,
			logs: []string{"field=window_ns value=10ms min=500ms max=1h0m0s kept=1s"}},
		{name: "a refusal keeps the previous round's settings, not the configured ones",
			starts: []start{{500 * ms, 2 * ms}, {1, 1}}, window: 500 * time.Millisecond, cadence: 2 * time.Millisecond, refused: 2,
			logs: []string{"field=window_ns value=1ns", "kept=500ms", "field=cadence_ns value=1ns", "kept=2ms"}},
		{name: "an adaptive window within the configured bounds is taken",
			config: func(c *Config) { c.WindowMin, c.WindowMax = 100*time.Millisecond, 2*time.Second },
			starts: []start{{1500 * ms, ms}}, window: 1500 * time.Millisecond, cadence: time.Millisecond},
		{name: "an adaptive window below the configured bounds is refused",
			config: func(c *Config) { c.WindowMin, c.WindowMax = 100*time.Millisecond, 2*time.Second },
			starts: []start{{50 * ms, ms}}, window: time.Second, cadence: time.Millisecond, refused: 1,
			logs: []string{"field=window_ns value=50ms min=100ms max=2s"}},
		{name: "a configured cadence below MinCadence is the node's own",
			config: func(c *Config) { c.Cadence = 50 * time.Microsecond },
			starts: []start{{1000 * ms, 50_000}}, window: time.Second, cadence: 50 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := agentConfig()
			if tc.config != nil {
				tc.config(&cfg)
			}
			_, env := agentNet()
			n := New(cfg, 1, nil)
			if err := n.Start(env); err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.starts {
				msg, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_RoundStart{RoundStart: &syncpb.RoundStart{
					RoundId: uint64(i + 1), SequenceNumber: uint64(i + 1), WindowNs: s.window, CadenceNs: s.cadence,
				}}}, 0)
				if err != nil {
					t.Fatal(err)
				}
				agentConn{n}.OnMessage(n.conn, msg)
			}
			if n.length != tc.window || n.Prober().Cadence() != tc.cadence {
				t.Errorf("window %v, cadence %v; want %v, %v", n.length, n.Prober().Cadence(), tc.window, tc.cadence)
			}
			if got := n.Stats().RefusedTiming; got != tc.refused {
				t.Errorf("RefusedTiming %d, want %d", got, tc.refused)
			}
			log := env.Log.String()
			if got := strings.Count(log, "level=ERROR"); got != tc.refused {
				t.Errorf("%d errors logged, want %d:\n%s", got, tc.refused, log)
			}
			rest := log
			for _, s := range tc.logs {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("log lacks %q (in order):\n%s", s, log)
					break
				}
				rest = rest[i+len(s):]
			}
			// The round runs: its first tick sends a pair and arms the
			// next one a cadence later (one peer), never sooner.
			var tick *worldtest.Timer
			for _, tm := range env.Pending() {
				if tm.D == 0 {
					tick = tm
				}
			}
			if tick == nil {
				t.Fatal("the round's window did not start probing")
			}
			before := len(env.Pending())
			tick.Run()
			next := env.Pending()
			if len(next) != before {
				t.Fatalf("%d timers pending after the tick, want %d", len(next), before)
			}
			if d := next[len(next)-1].D; d != tc.cadence {
				t.Errorf("next tick armed %v later, want the cadence %v", d, tc.cadence)
			}
			if n.Prober().Stats().PairsSent != 1 {
				t.Errorf("%d pairs sent, want 1", n.Prober().Stats().PairsSent)
			}
		})
	}
}
