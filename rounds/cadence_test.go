package rounds

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// agentEnv is a hand-driven world.Env for one agent node (node 0 of two,
// probing node 1, node 1 the master): its clock stands still, timers wait
// until the test fires them, datagrams go nowhere, and its log is kept.
type agentEnv struct {
	timers []*agentTimer
	log    bytes.Buffer
	stream *agentStream
}

type agentTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *agentTimer) Stop() bool { s := t.stopped; t.stopped = true; return !s }

type agentClock struct{}

func (agentClock) Now() world.Time { return 1e9 }

// agentPacketConn is the prober's endpoint: it accepts every datagram.
type agentPacketConn struct{}

func (agentPacketConn) LocalAddr() world.Addr { return world.Addr{Node: 0} }
func (agentPacketConn) Send(world.Addr, []byte) (world.Time, error) {
	return agentClock{}.Now(), nil
}
func (agentPacketConn) Close() error { return nil }

// agentStream is the node's stream to the master.
type agentStream struct{}

func (*agentStream) LocalAddr() world.Addr  { return world.Addr{Node: 0} }
func (*agentStream) RemoteAddr() world.Addr { return world.Addr{Node: 1, Port: Port} }
func (*agentStream) Send([]byte) error      { return nil }
func (*agentStream) Close() error           { return nil }

func (e *agentEnv) Node() world.NodeID    { return 0 }
func (e *agentEnv) Nodes() int            { return 2 }
func (e *agentEnv) Peers() []world.NodeID { return []world.NodeID{1} }
func (e *agentEnv) Host() world.Clock     { return agentClock{} }
func (e *agentEnv) Tracer() world.Clock   { return agentClock{} }
func (e *agentEnv) Rand() *rand.Rand      { return rand.New(rand.NewPCG(1, 2)) }
func (e *agentEnv) Logger() *slog.Logger  { return slog.New(slog.NewTextHandler(&e.log, nil)) }

func (e *agentEnv) AfterFunc(d time.Duration, f func()) world.Timer {
	t := &agentTimer{d: d, f: f}
	e.timers = append(e.timers, t)
	return t
}

func (e *agentEnv) ListenPacket(uint16, world.PacketHandler) (world.PacketConn, error) {
	return agentPacketConn{}, nil
}

func (e *agentEnv) Listen(uint16, world.StreamHandler) (world.Listener, error) {
	return nil, errors.New("an agent does not listen")
}

func (e *agentEnv) Dial(world.Addr, world.StreamHandler) (world.Stream, error) {
	e.stream = &agentStream{}
	return e.stream, nil
}

// pending returns the timers not yet fired or stopped, and forgets the
// others.
func (e *agentEnv) pending() []*agentTimer {
	e.timers = slices.DeleteFunc(e.timers, func(t *agentTimer) bool { return t.stopped })
	return e.timers
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
			env := &agentEnv{}
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
				agentConn{n}.OnMessage(env.stream, msg)
			}
			if n.length != tc.window || n.Prober().Cadence() != tc.cadence {
				t.Errorf("window %v, cadence %v; want %v, %v", n.length, n.Prober().Cadence(), tc.window, tc.cadence)
			}
			if got := n.Stats().RefusedTiming; got != tc.refused {
				t.Errorf("RefusedTiming %d, want %d", got, tc.refused)
			}
			log := env.log.String()
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
			var tick *agentTimer
			for _, tm := range env.pending() {
				if tm.d == 0 {
					tick = tm
				}
			}
			if tick == nil {
				t.Fatal("the round's window did not start probing")
			}
			before := len(env.pending())
			tick.stopped = true
			tick.f()
			next := env.pending()
			if len(next) != before {
				t.Fatalf("%d timers pending after the tick, want %d", len(next), before)
			}
			if d := next[len(next)-1].d; d != tc.cadence {
				t.Errorf("next tick armed %v later, want the cadence %v", d, tc.cadence)
			}
			if n.Prober().Stats().PairsSent != 1 {
				t.Errorf("%d pairs sent, want 1", n.Prober().Stats().PairsSent)
			}
		})
	}
}
