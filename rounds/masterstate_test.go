package rounds

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// TestMasterCore runs the scripts under testdata/core: the master's core
// alone (masterCore), with no world: each command is one event, and
// prints the actions the core returned, in order (sends, closes, hand-offs
// to the master's own node, the deadline timer, solve requests, logs at
// DEBUG and above, the rounds reported). The clock is the script's: t=D
// moves it (never back) before the event. The commands:
//
//	core nodes=N [mode=rounds|windows] [master=M] [window=D] [cadence=D]
//	     [gather=D] [heartbeat=D] [rounds=K] [local=none]
//	                       a fresh core, started (evStart); every node a
//	                       participant; the master's own node takes its
//	                       RoundResults unless local=none
//	open conn=C [from=N]   a stream accepted from node N (default C); the
//	                       stream's later events come from there too
//	hello conn=C node=N [inc=I] [last=R] [features=F]
//	                       a hello on the stream (features default 1,
//	                       FeatureRoundResult)
//	report node=N round=R [conn=C] [window=W] [claims=K]
//	                       node N's report of round R, on conn C, or by the
//	                       master's own node's direct call without conn;
//	                       claims=K makes it claim node K
//	beat conn=C            a heartbeat on the stream
//	garbage conn=C         bytes that are no message
//	close conn=C           the stream broke
//	tick                   the heartbeat
//	state                  print the core's round and connection state
//	fire                   the earliest pending timer fires (at its time
//	                       unless t=); a stopped one does not
//	solved [offsets=o0,o1,...] [err=E]
//	                       the solution of the round being solved: a
//	                       record per reporting node, offset o_node ns (0
//	                       where not given), no summary; err=E fails it
//	                       (no records unless offsets are given)
//
// Update with -rewrite after checking the new output by eye.
func TestMasterCore(t *testing.T) {
	datadriven.Walk(t, "testdata/core", func(t *testing.T, path string) {
		var h *coreHarness
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd == "core" {
				h = newCoreHarness(t, td)
				h.c.Step(evStart{})
				return h.print()
			}
			if h == nil {
				td.Fatalf(t, "%s before core", td.Cmd)
			}
			h.run(t, td)
			return h.print()
		})
	})
}

// coreHarness drives one core for a script.
type coreHarness struct {
	c   *masterCore
	now int64
	out strings.Builder
	// timers are the armed timers still pending, in the order armed;
	// solve is the round asked for, with its reports.
	timers []pendingTimer
	armed  int // timers armed so far
	solve  *actSolve
	// from is where each stream came from (open).
	from map[connID]world.Addr
}

// pendingTimer is an armed timer: its kind, when it falls due, and its
// number in the order armed.
type pendingTimer struct {
	kind timerKind
	due  int64
	n    int
}

func newCoreHarness(t *testing.T, td *datadriven.TestData) *coreHarness {
	n := 3
	cfg := Config{
		Mode: ModeRounds, Cadence: 5 * time.Millisecond, Window: 100 * time.Millisecond,
		GatherDeadline: 50 * time.Millisecond, Heartbeat: 200 * time.Millisecond,
	}
	local := uint64(FeatureRoundResult)
	for _, a := range td.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		var err error
		switch a.Key {
		case "nodes":
			n, err = strconv.Atoi(v)
		case "mode":
			cfg.Mode = Mode(v)
		case "master":
			var m int
			m, err = strconv.Atoi(v)
			cfg.Master, cfg.Reference = world.NodeID(m), world.NodeID(m)
		case "window":
			cfg.Window, err = time.ParseDuration(v)
		case "cadence":
			cfg.Cadence, err = time.ParseDuration(v)
		case "gather":
			cfg.GatherDeadline, err = time.ParseDuration(v)
		case "heartbeat":
			cfg.Heartbeat, err = time.ParseDuration(v)
		case "rounds":
			cfg.Rounds, err = strconv.Atoi(v)
		case "local":
			if v == "none" {
				local = 0
			}
		default:
			td.Fatalf(t, "core: unknown argument %q", a.Key)
		}
		if err != nil {
			td.Fatalf(t, "core: %s: %v", a.Key, err)
		}
	}
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, world.NodeID(i))
		cfg.Participants = append(cfg.Participants, world.NodeID(i))
	}
	h := &coreHarness{from: map[connID]world.Addr{}}
	h.c = newMasterCore(cfg, n, local, func() int64 { return h.now })
	fmt.Fprintf(&h.out, "core: %d nodes, mode %s, master n%d, window %v, gather %v, heartbeat %v\n",
		n, cfg.Mode, cfg.Master, cfg.Window, cfg.GatherDeadline, cfg.Heartbeat)
	return h
}

// arg returns the key=V argument, or "".
func arg(td *datadriven.TestData, key string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return ""
}

// intArg returns the key=I argument, or def.
func intArg(t *testing.T, td *datadriven.TestData, key string, def int) int {
	v := arg(td, key)
	if v == "" {
		return def
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return i
}

func (h *coreHarness) run(t *testing.T, td *datadriven.TestData) {
	if v := arg(td, "t"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			td.Fatalf(t, "t: %v", err)
		}
		if int64(d) < h.now {
			td.Fatalf(t, "t=%v is before the clock (%v)", d, time.Duration(h.now))
		}
		h.now = int64(d)
	}
	conn := connID(intArg(t, td, "conn", 0))
	from, ok := h.from[conn]
	if !ok || arg(td, "from") != "" {
		from = world.Addr{Node: world.NodeID(intArg(t, td, "from", int(conn))), Port: 40000 + uint16(conn)}
	}
	frame := func(env *syncpb.Envelope) []byte {
		b, err := wire.Marshal(env, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	switch td.Cmd {
	case "open":
		h.from[conn] = from
		h.c.Step(evOpen{Conn: conn, From: from})
	case "hello":
		hello := &syncpb.Hello{NodeId: int32(intArg(t, td, "node", -1)), Incarnation: uint64(intArg(t, td, "inc", 1)),
			LastRoundId: uint64(intArg(t, td, "last", 0)), Features: uint64(intArg(t, td, "features", int(FeatureRoundResult)))}
		h.c.Step(evMessage{Conn: conn, From: from, Data: frame(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: hello}})})
	case "report":
		node := intArg(t, td, "node", -1)
		round := uint64(intArg(t, td, "round", 1))
		d := &syncpb.NodeWindowData{
			NodeId: int32(intArg(t, td, "claims", node)), RoundId: round, WindowId: uint64(intArg(t, td, "window", int(round))),
			WindowStartNs: int64(round) * 1e9, WindowEndNs: int64(round)*1e9 + 1e8,
		}
		b := frame(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: d}})
		if conn == 0 {
			h.c.Step(evReport{Node: node, Data: d, Size: len(b)})
			return
		}
		h.c.Step(evMessage{Conn: conn, From: from, Data: b})
	case "beat":
		h.c.Step(evMessage{Conn: conn, From: from, Data: frame(&syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{SentNs: h.now}}})})
	case "garbage":
		h.c.Step(evMessage{Conn: conn, From: from, Data: []byte{0xff, 0xff, 0xff}})
	case "close":
		h.c.Step(evClosed{Conn: conn, Err: errors.New("peer crashed")})
	case "tick":
		h.c.Step(evTick{})
	case "fire":
		if len(h.timers) == 0 {
			fmt.Fprintln(&h.out, "no timer pending")
			return
		}
		i := 0
		for j, p := range h.timers {
			if p.due < h.timers[i].due {
				i = j
			}
		}
		p := h.timers[i]
		h.timers = slices.Delete(h.timers, i, i+1)
		if arg(td, "t") == "" {
			h.now = max(h.now, p.due)
		}
		fmt.Fprintf(&h.out, "fire %s (t=%v)\n", p.kind, time.Duration(h.now))
		h.c.Step(evTimer{Timer: p.kind})
	case "solved":
		h.solved(t, td)
	case "state":
		h.state()
	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
}

// solved answers the solve asked for.
func (h *coreHarness) solved(t *testing.T, td *datadriven.TestData) {
	if h.solve == nil {
		td.Fatalf(t, "solved: no solve asked for")
	}
	var offs []float64
	if v := arg(td, "offsets"); v != "" {
		for _, s := range strings.Split(v, ",") {
			o, err := strconv.ParseFloat(s, 64)
			if err != nil {
				td.Fatalf(t, "offsets: %v", err)
			}
			offs = append(offs, o)
		}
	}
	ev := evSolved{Round: h.solve.Round}
	if e := arg(td, "err"); e != "" {
		ev.Err = errors.New(e)
	}
	for _, d := range h.solve.Nodes {
		if ev.Err != nil && offs == nil {
			break // unsolved: no records
		}
		rec := offsets.Offset{Type: "offset", RoundID: d.RoundId, WindowID: d.WindowId, WindowStartNS: d.WindowStartNs,
			WindowEndNS: d.WindowEndNs, NodeID: int(d.NodeId), UncertaintyNS: 100}
		if int(d.NodeId) < len(offs) {
			rec.OffsetNS = offs[d.NodeId]
		}
		ev.Offsets = append(ev.Offsets, rec)
	}
	h.solve = nil
	h.c.Step(ev)
}

// state prints the core's state: its round, the gather, each connected
// node's stream, incarnation and features, the streams owed a hello.
func (h *coreHarness) state() {
	c := h.c
	gather := "closed"
	if c.gather {
		var got []int
		for i, d := range c.reports {
			if d != nil {
				got = append(got, i)
			}
		}
		gather = fmt.Sprintf("open, reports from %v", got)
	}
	if c.solving != 0 {
		gather = fmt.Sprintf("closed, solving round %d", c.solving)
	}
	fmt.Fprintf(&h.out, "round %d seq %d started=%v gather %s window %v retries %d\n", c.round, c.seq, c.started, gather, c.length, c.retries)
	for i, conn := range c.conns {
		if conn != 0 {
			fmt.Fprintf(&h.out, "n%d on c%d: incarnation %d features %d heard %v\n", i, conn, c.incarnation[i], c.features[i], time.Duration(c.heard[i]))
		}
	}
	for _, p := range c.pending {
		fmt.Fprintf(&h.out, "c%d from %v owes a hello since %v\n", p.conn, p.from, time.Duration(p.at))
	}
}

// print returns the actions since the last command, one a line.
func (h *coreHarness) print() string {
	for _, a := range h.c.Ready() {
		switch a := a.(type) {
		case actSend:
			fmt.Fprintf(&h.out, "send c%d→n%d %s", a.Conn, a.Node, envLine(a.Env))
			if a.Purpose == sendEcho {
				fmt.Fprint(&h.out, " (echo)")
			}
			fmt.Fprintln(&h.out)
		case actClose:
			fmt.Fprintf(&h.out, "close c%d\n", a.Conn)
		case actLocal:
			fmt.Fprintf(&h.out, "local %s\n", envLine(a.Env))
		case actTimer:
			h.armed++
			h.timers = append(h.timers, pendingTimer{kind: a.Timer, due: h.now + int64(a.After), n: h.armed})
			fmt.Fprintf(&h.out, "timer %s after %v (t=%v)\n", a.Timer, a.After, time.Duration(h.now+int64(a.After)))
		case actStop:
			// The last armed timer, if still pending.
			last := slices.IndexFunc(h.timers, func(p pendingTimer) bool { return p.n == h.armed })
			if last >= 0 {
				fmt.Fprintf(&h.out, "stop %s\n", h.timers[last].kind)
				h.timers = slices.Delete(h.timers, last, last+1)
			} else {
				fmt.Fprintln(&h.out, "stop (fired already)")
			}
		case actSolve:
			s := a
			h.solve = &s
			var nodes []int32
			for _, d := range a.Nodes {
				nodes = append(nodes, d.NodeId)
			}
			fmt.Fprintf(&h.out, "solve round=%d reports=%v\n", a.Round, nodes)
		case actLog:
			fmt.Fprintf(&h.out, "log %s %q%s\n", a.Level, a.Msg, logArgs(a.Args))
		case actRound:
			fmt.Fprintln(&h.out, roundLine(a.Report))
		}
	}
	s := h.out.String()
	h.out.Reset()
	if s == "" {
		return "ok\n"
	}
	return s
}

// envLine says what a message carries.
func envLine(env *syncpb.Envelope) string {
	switch b := env.Body.(type) {
	case *syncpb.Envelope_RoundStart:
		return fmt.Sprintf("round_start round=%d seq=%d window=%v", b.RoundStart.RoundId, b.RoundStart.SequenceNumber, time.Duration(b.RoundStart.WindowNs))
	case *syncpb.Envelope_RoundEnd:
		return fmt.Sprintf("round_end round=%d seq=%d", b.RoundEnd.RoundId, b.RoundEnd.SequenceNumber)
	case *syncpb.Envelope_RoundResult:
		r := b.RoundResult
		return fmt.Sprintf("round_result round=%d node=%d offset=%.0fns degraded=%v", r.RoundId, r.NodeId, r.OffsetNs, Degraded(r.Degraded))
	}
	return wire.Kind(env)
}

// logArgs prints a log record's attributes as key=value.
func logArgs(args []any) string {
	var b strings.Builder
	for _, a := range slog.Group("", args...).Value.Group() {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	return b.String()
}

// roundLine summarizes a round the core reported.
func roundLine(r *RoundReport) string {
	var nodes []int32
	for _, d := range r.Nodes {
		nodes = append(nodes, d.NodeId)
	}
	f := r.Figures
	s := fmt.Sprintf("round %d: window=%d reports=%v missing=%v records=%d gather_wait=%v end_to_start=%v retries=%d bytes=%d",
		r.Round, r.Window, nodes, r.Missing, len(r.Offsets), f.GatherWait, f.EndToStart, f.Retries, f.MessageBytes)
	if r.Err != nil {
		s += fmt.Sprintf(" err=%q", r.Err.Error())
	}
	if len(r.Refused) > 0 {
		s += " refused=" + sortedCounts(r.Refused)
	}
	for _, n := range r.Notes {
		s += fmt.Sprintf("\n  note: %s", n)
	}
	return s
}

// readStep is one event of TestMasterCoreClockReads and the clock reads
// it must make.
type readStep struct {
	what string
	ev   coreEvent
	want int
}

// TestMasterCoreClockReads pins where the core reads its clock: a reading
// of a simulated host clock is a draw of its read noise, so each event
// must read it as often as the master always did, or every run's event
// log changes. (The gather's end is read when it closes, not once the
// solve is back, since the solve's cost is charged: 2026-11-27.)
func TestMasterCoreClockReads(t *testing.T) {
	nodes := []world.NodeID{0, 1, 2}
	cfg := Config{Mode: ModeRounds, Window: 100 * time.Millisecond, Cadence: 5 * time.Millisecond,
		GatherDeadline: 50 * time.Millisecond, Heartbeat: 200 * time.Millisecond, Nodes: nodes, Participants: nodes}
	frame := func(env *syncpb.Envelope) []byte {
		b, err := wire.Marshal(env, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hello := func(node int32) []byte {
		return frame(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: node, Incarnation: 1}}})
	}
	beat := frame(&syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{}}})
	report := func(node int32) *syncpb.NodeWindowData {
		return &syncpb.NodeWindowData{NodeId: node, RoundId: 1, WindowId: 1, WindowStartNs: 1e9, WindowEndNs: 11e8}
	}
	from := func(n world.NodeID) world.Addr { return world.Addr{Node: n, Port: 40000} }
	for _, mode := range []Mode{ModeRounds, ModeWindows} {
		cfg.Mode = mode
		reads := 0
		c := newMasterCore(cfg, len(nodes), FeatureRoundResult, func() int64 { reads++; return int64(1000 + reads) })
		steps := []readStep{
			{"start", evStart{}, 0},
			{"open", evOpen{Conn: 1, From: from(1)}, 1},
			{"bad hello", evMessage{Conn: 1, From: from(1), Data: hello(2)}, 0},
			{"open", evOpen{Conn: 2, From: from(1)}, 1},
			{"frame before hello", evMessage{Conn: 2, From: from(1), Data: beat}, 0},
			{"open", evOpen{Conn: 3, From: from(1)}, 1},
			{"open", evOpen{Conn: 4, From: from(2)}, 1},
			{"hello", evMessage{Conn: 3, From: from(1), Data: hello(1)}, 1},
			{"last hello: round 1 starts", evMessage{Conn: 4, From: from(2), Data: hello(2)}, 1},
			{"heartbeat frame", evMessage{Conn: 3, From: from(1), Data: beat}, 1},
			{"tick", evTick{}, 1},
		}
		if mode == ModeRounds {
			steps = append(steps, readStep{"round end", evTimer{Timer: timerRoundEnd}, 1},
				readStep{"own report", evReport{Node: 0, Data: report(0)}, 0})
		} else {
			steps = append(steps, readStep{"own report opens the gather", evReport{Node: 0, Data: report(0)}, 1})
		}
		steps = append(steps, []readStep{
			{"stream closed", evClosed{Conn: 4}, 0},
			{"last report: solve", evMessage{Conn: 3, From: from(1), Data: frame(&syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: report(1)}})}, 2},
			{"solved", evSolved{Round: 1}, 1},
		}...)
		for _, s := range steps {
			before := reads
			c.Step(s.ev)
			c.Ready()
			if got := reads - before; got != s.want {
				t.Errorf("mode %s, %s: %d clock reads, want %d", mode, s.what, got, s.want)
			}
		}
		if c.round != 2 {
			t.Errorf("mode %s: round %d after round 1 was solved, want 2", mode, c.round)
		}
	}
}
