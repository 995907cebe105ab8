package rounds

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// TestDataDriven runs the interaction scripts under testdata/interaction:
// the protocol's core on the shared hand-driven net (worldtest.Net), as
// etcd raft pins its core. Each script's header says what it pins. The
// commands (each prints what happened while it ran: the frames sent on
// the streams, the nodes' windows, rounds, models and consensus updates,
// and their log lines at INFO and above, in order):
//
//	net nodes=N [mode=rounds|windows|consensus] [master=M] [window=D]
//	    [cadence=D] [gather=D] [heartbeat=D] [rounds=K] [latency=D]
//	    [offsets=o0,o1,... (ns)] [gain=G] [heartbeats=show]
//	                       a fresh net: every node probes every other,
//	                       datagrams arrive after latency (default 1ms)
//	start [node=I]         boot node I (default: every node)
//	advance d=D            move the clock, firing timers and delivering
//	                       datagrams as they fall due; stream frames wait
//	step [n=K]             fire the next K timers (default 1)
//	deliver [from=I] [to=I] [kind=K] [n=K]
//	                       deliver the frames in flight that match (those
//	                       sent while delivering wait for the next command)
//	drop [from=I] [to=I] [kind=K] [n=K]
//	                       lose the matching frames in flight
//	crash node=I           node I goes down; its streams break
//	restart node=I         node I boots again, a new incarnation
//	frames                 list the frames in flight
//	stats node=I           the node's counters
//
// Update with -rewrite after checking the new output by eye.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		var d *driver
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if td.Cmd == "net" {
				d = newDriver(t, td)
				return d.flush()
			}
			if d == nil {
				td.Fatalf(t, "%s before net", td.Cmd)
			}
			d.run(t, td)
			return d.flush()
		})
	})
}

// driver runs one script.
type driver struct {
	net   *worldtest.Net
	cfg   Config
	nodes []*Node
	inc   []uint64
	out   strings.Builder
	// beats shows heartbeat frames, which a script hides by default.
	beats bool
}

func newDriver(t *testing.T, td *datadriven.TestData) *driver {
	n := 3
	cfg := Config{
		Mode: ModeRounds, Estimate: estimate.Options{Kind: estimate.Regression},
		Cadence: 5 * time.Millisecond, Window: 100 * time.Millisecond,
		GatherDeadline: 50 * time.Millisecond, Heartbeat: 200 * time.Millisecond,
		ConsensusGain: 0.5,
	}
	latency := time.Millisecond
	var offs []int64
	beats := false
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
		case "latency":
			latency, err = time.ParseDuration(v)
		case "gain":
			cfg.ConsensusGain, err = strconv.ParseFloat(v, 64)
		case "offsets":
			for _, s := range strings.Split(strings.Join(a.Vals, ","), ",") {
				o, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil {
					err = perr
				}
				offs = append(offs, o)
			}
		case "heartbeats":
			beats = v == "show"
		default:
			td.Fatalf(t, "net: unknown argument %q", a.Key)
		}
		if err != nil {
			td.Fatalf(t, "net: %s: %v", a.Key, err)
		}
	}
	d := &driver{net: worldtest.NewNet(n), nodes: make([]*Node, n), inc: make([]uint64, n), beats: beats}
	d.net.Latency = latency
	d.net.LogTo = &d.out
	d.net.OnFrame = func(f worldtest.Frame) {
		if line := d.describe(f); line != "" {
			fmt.Fprintf(&d.out, "n%d→n%d %s\n", f.From.Node, f.To.Node, line)
		}
	}
	for i := range n {
		id := world.NodeID(i)
		cfg.Nodes = append(cfg.Nodes, id)
		cfg.Participants = append(cfg.Participants, id)
		nd := d.net.Node(id)
		for j := range n {
			if j != i {
				nd.PeerIDs = append(nd.PeerIDs, world.NodeID(j))
			}
		}
		if i < len(offs) {
			nd.Offset = offs[i]
		}
	}
	d.cfg = cfg
	fmt.Fprintf(&d.out, "%d nodes, mode %s, master n%d, window %v, cadence %v\n", n, cfg.Mode, cfg.Master, cfg.Window, cfg.Cadence)
	return d
}

// flush returns what happened since the last command.
func (d *driver) flush() string {
	s := d.out.String()
	d.out.Reset()
	if s == "" {
		return "ok\n"
	}
	return s
}

// nodeArg returns the node=I argument, or -1.
func nodeArg(t *testing.T, td *datadriven.TestData, key string) int {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			v, err := strconv.Atoi(a.Vals[0])
			if err != nil {
				td.Fatalf(t, "%s: %v", key, err)
			}
			return v
		}
	}
	return -1
}

func (d *driver) run(t *testing.T, td *datadriven.TestData) {
	switch td.Cmd {
	case "start":
		if id := nodeArg(t, td, "node"); id >= 0 {
			d.start(t, world.NodeID(id))
			return
		}
		for i := range d.nodes {
			d.start(t, world.NodeID(i))
		}
	case "advance":
		var dur time.Duration
		for _, a := range td.CmdArgs {
			if a.Key == "d" {
				var err error
				if dur, err = time.ParseDuration(a.Vals[0]); err != nil {
					td.Fatalf(t, "advance: %v", err)
				}
			}
		}
		d.net.Advance(dur)
	case "step":
		k := max(1, nodeArg(t, td, "n"))
		for range k {
			if !d.net.Step() {
				fmt.Fprintln(&d.out, "no timer pending")
				break
			}
		}
	case "deliver", "drop":
		d.frames(t, td)
	case "crash":
		id := world.NodeID(nodeArg(t, td, "node"))
		d.net.Crash(id)
		d.nodes[id] = nil
		fmt.Fprintf(&d.out, "n%d crashed\n", id)
	case "restart":
		id := world.NodeID(nodeArg(t, td, "node"))
		d.net.Restart(id)
		d.start(t, id)
	case "frames":
		for _, f := range d.net.Frames {
			fmt.Fprintf(&d.out, "n%d→n%d %s\n", f.From.Node, f.To.Node, d.describeAll(f))
		}
	case "stats":
		id := nodeArg(t, td, "node")
		n := d.nodes[id]
		if n == nil {
			fmt.Fprintf(&d.out, "n%d is down\n", id)
			return
		}
		s := n.Stats()
		fmt.Fprintf(&d.out, "n%d: results=%d refused_timing=%d unknown=%d dropped=%v\n", id, s.Results, s.RefusedTiming, s.UnknownMessages, sortedCounts(s.DroppedResults))
	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
}

// start boots a fresh program on node id.
func (d *driver) start(t *testing.T, id world.NodeID) {
	d.inc[id]++
	n := New(d.cfg, d.inc[id], &scriptObserver{d: d, id: id})
	d.nodes[id] = n
	fmt.Fprintf(&d.out, "n%d starts, incarnation %d\n", id, d.inc[id])
	if err := n.Start(d.net.Node(id)); err != nil {
		t.Fatalf("start n%d: %v", id, err)
	}
}

// frames delivers or drops the frames in flight that match the command's
// filters.
func (d *driver) frames(t *testing.T, td *datadriven.TestData) {
	from, to, limit := nodeArg(t, td, "from"), nodeArg(t, td, "to"), nodeArg(t, td, "n")
	var kind string
	for _, a := range td.CmdArgs {
		if a.Key == "kind" {
			kind = a.Vals[0]
		}
	}
	var pick []uint64
	for _, f := range d.net.Frames {
		if (from >= 0 && int(f.From.Node) != from) || (to >= 0 && int(f.To.Node) != to) ||
			(kind != "" && d.kindOf(f) != kind) || (limit >= 0 && len(pick) == limit) {
			continue
		}
		pick = append(pick, f.Seq)
	}
	if td.Cmd == "deliver" {
		// A stream keeps its order: a frame may not overtake an earlier
		// one on the same stream that stays behind.
		for i, f := range d.net.Frames {
			if !slices.Contains(pick, f.Seq) {
				continue
			}
			for _, g := range d.net.Frames[:i] {
				if g.From == f.From && g.To == f.To && !slices.Contains(pick, g.Seq) {
					td.Fatalf(t, "deliver: n%d→n%d %s would overtake %s on its stream", f.From.Node, f.To.Node, d.describeAll(f), d.describeAll(g))
				}
			}
		}
	}
	for _, seq := range pick {
		i := slices.IndexFunc(d.net.Frames, func(f worldtest.Frame) bool { return f.Seq == seq })
		if i < 0 {
			continue // gone: a crash while delivering
		}
		if td.Cmd == "drop" {
			f := d.net.Frames[i]
			fmt.Fprintf(&d.out, "dropped n%d→n%d %s\n", f.From.Node, f.To.Node, d.describeAll(f))
			d.net.DropFrame(i)
			continue
		}
		d.net.DeliverFrame(i)
	}
	if len(pick) == 0 {
		fmt.Fprintln(&d.out, "no frame matches")
	}
}

// kindOf is a frame's kind: connect, close, or the message's body.
func (d *driver) kindOf(f worldtest.Frame) string {
	if f.Kind != worldtest.FrameMessage {
		return f.Kind.String()
	}
	env, err := wire.Unmarshal(f.Data, 0)
	if err != nil {
		return "garbled"
	}
	return wire.Kind(env)
}

// describe is describeAll, hiding heartbeats unless the script shows them.
func (d *driver) describe(f worldtest.Frame) string {
	if !d.beats && d.kindOf(f) == "heartbeat" {
		return ""
	}
	return d.describeAll(f)
}

// describeAll says what a frame carries.
func (d *driver) describeAll(f worldtest.Frame) string {
	switch f.Kind {
	case worldtest.FrameConnect:
		return "connect"
	case worldtest.FrameClose:
		if f.Err != nil {
			return "close (broken: " + f.Err.Error() + ")"
		}
		return "close"
	}
	env, err := wire.Unmarshal(f.Data, 0)
	if err != nil {
		return "garbled: " + err.Error()
	}
	switch b := env.Body.(type) {
	case *syncpb.Envelope_Hello:
		return fmt.Sprintf("hello node=%d incarnation=%d last_round=%d features=%d", b.Hello.NodeId, b.Hello.Incarnation, b.Hello.LastRoundId, b.Hello.Features)
	case *syncpb.Envelope_RoundStart:
		return fmt.Sprintf("round_start round=%d seq=%d window=%v cadence=%v", b.RoundStart.RoundId, b.RoundStart.SequenceNumber, time.Duration(b.RoundStart.WindowNs), time.Duration(b.RoundStart.CadenceNs))
	case *syncpb.Envelope_RoundEnd:
		return fmt.Sprintf("round_end round=%d seq=%d", b.RoundEnd.RoundId, b.RoundEnd.SequenceNumber)
	case *syncpb.Envelope_Window:
		return "window " + windowLine(b.Window)
	case *syncpb.Envelope_RoundResult:
		r := b.RoundResult
		return fmt.Sprintf("round_result round=%d node=%d reference=%d degraded=%v", r.RoundId, r.NodeId, r.ReferenceNode, Degraded(r.Degraded))
	case *syncpb.Envelope_Heartbeat:
		return "heartbeat"
	}
	return wire.Kind(env)
}

// windowLine summarizes a node's window report.
func windowLine(w *syncpb.NodeWindowData) string {
	var edges []string
	for _, e := range w.Edges {
		s := fmt.Sprintf("%d→%d", e.SrcNodeId, e.DstNodeId)
		if e.Insufficient {
			s += "(insufficient)"
		}
		edges = append(edges, s)
	}
	return fmt.Sprintf("node=%d round=%d window=%d edges=[%s]", w.NodeId, w.RoundId, w.WindowId, strings.Join(edges, " "))
}

// sortedCounts prints a count map in key order.
func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	b.WriteString("}")
	return b.String()
}

// scriptObserver prints what one node's protocol produces.
type scriptObserver struct {
	d  *driver
	id world.NodeID
}

func (o *scriptObserver) Window(node world.NodeID, _ []probelog.Block, data *syncpb.NodeWindowData) {
	fmt.Fprintf(&o.d.out, "n%d closes its window: %s\n", node, windowLine(data))
}

func (o *scriptObserver) Round(r *RoundReport) {
	var nodes []int32
	for _, d := range r.Nodes {
		nodes = append(nodes, d.NodeId)
	}
	solved := "solved"
	if r.Summary == nil {
		solved = "unsolved"
	}
	fmt.Fprintf(&o.d.out, "n%d round %d %s: window=%d reports=%v missing=%v", o.id, r.Round, solved, r.Window, nodes, r.Missing)
	if r.Err != nil {
		fmt.Fprintf(&o.d.out, " err=%q", r.Err.Error())
	}
	fmt.Fprintln(&o.d.out)
}

func (o *scriptObserver) Consensus(node world.NodeID, rec offsets.Offset) {
	fmt.Fprintf(&o.d.out, "n%d consensus: round=%d window=%d offset=%.0fns drift=%.3fppm\n", node, rec.RoundID, rec.WindowID, rec.OffsetNS, rec.DriftPPM)
}

func (o *scriptObserver) Model(node world.NodeID, m Model) {
	fmt.Fprintf(&o.d.out, "n%d model: round=%d offset=%.0fns reference=n%d degraded=%v\n", node, m.Offset.RoundID, m.Offset.OffsetNS, m.Reference, m.Degraded)
}

var _ ModelObserver = (*scriptObserver)(nil)
