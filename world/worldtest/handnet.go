package worldtest

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/chronosync/chronosync/world"
)

// Net is a hand-driven world for protocol unit tests: the one fake network
// probe's and rounds' tests share (and rounds' interaction scripts run on).
// Nothing happens until the test says so: every node's host clock (and
// tracer clock) reads the shared true time Clock plus the node's Offset;
// timers wait until the test fires them ([Net.Fire]) or moves the clock
// past them ([Net.Advance], [Net.Step]); datagrams wait in Datagrams for
// [Net.Deliver] or [Net.Drop], or arrive Latency after they left where
// Latency is set; stream events (a connect, a message, a close) wait in
// Frames, in the order they happened, for [Net.DeliverFrame] or
// [Net.DropFrame]. A node can crash ([Net.Crash]): its timers stop, its
// endpoints go, and the other end of each of its streams sees the stream
// break.
//
// A Net is not safe for concurrent use; one test goroutine drives it.
type Net struct {
	// Clock is true time, ns. The test may set it; [Net.Advance] moves it
	// and fires what falls due.
	Clock int64
	// TxLag is added to a kernel transmit timestamp: the send path a
	// user-space reading misses.
	TxLag int64
	// Latency, where positive, delivers each datagram that long after it
	// left, in [Net.Advance]; where zero, datagrams wait in Datagrams.
	Latency time.Duration
	// Datagrams are the datagrams on their way, oldest first (Latency
	// zero only).
	Datagrams []Datagram
	// Frames are the stream events on their way, oldest first.
	Frames []Frame
	// LogLevel is the lowest level the nodes' loggers write.
	LogLevel slog.Level
	// LogTo, where set, also receives every node's log lines, each
	// prefixed "n<id> ".
	LogTo io.Writer
	// OnFrame, where set, runs as each frame is queued.
	OnFrame func(f Frame)

	nodes   []*Node
	seq     uint64
	arrive  []*arrival
	streams []*handStream
}

// Datagram is one datagram on its way.
type Datagram struct {
	From, To world.Addr
	Data     []byte
}

// NewNet returns a net of n nodes, clock at 1 s, none with an offset or
// peers.
func NewNet(n int) *Net {
	net := &Net{Clock: 1e9}
	for range n {
		net.AddNode()
	}
	return net
}

// AddNode adds a node with the next ID and returns it.
func (n *Net) AddNode() *Node {
	nd := &Node{net: n, ID: world.NodeID(len(n.nodes))}
	n.nodes = append(n.nodes, nd)
	return nd
}

// Node returns node id.
func (n *Net) Node(id world.NodeID) *Node { return n.nodes[id] }

// Len returns how many nodes the net has.
func (n *Net) Len() int { return len(n.nodes) }

// Node is one node of a [Net]; it is the node's [world.Env].
type Node struct {
	net *Net
	// ID is the node's ID.
	ID world.NodeID
	// Offset is how far the node's clocks read ahead of true time, ns.
	Offset int64
	// PeerIDs is what Peers returns.
	PeerIDs []world.NodeID
	// Sourced makes the node's datagram endpoints world.SourcedSenders (as
	// the real backend's) whose transmit timestamps come from Sources in
	// turn, TxKernel once they run out; otherwise they are plain
	// PacketConns (as the simulator's).
	Sourced bool
	// Sources are the transmit timestamp sources still to come.
	Sources []world.TxSource
	// Log holds the node's log lines (without times).
	Log bytes.Buffer
	// Down is set by [Net.Crash] and cleared by [Net.Restart].
	Down bool

	timers    []*Timer
	packets   map[uint16]world.PacketHandler
	listeners map[uint16]world.StreamHandler
}

// Timer is a pending callback of a node.
type Timer struct {
	// D is the delay it was armed with.
	D time.Duration
	// At is the true time it falls due.
	At      int64
	seq     uint64
	f       func()
	stopped bool
}

// Stop implements [world.Timer].
func (t *Timer) Stop() bool { s := t.stopped; t.stopped = true; return !s }

// Run fires the timer now (if it is still pending).
func (t *Timer) Run() {
	if t.stopped {
		return
	}
	t.stopped = true
	t.f()
}

// arrival is a datagram due at a time (Latency set).
type arrival struct {
	at  int64
	seq uint64
	d   Datagram
}

// Now returns the node's host clock reading.
func (nd *Node) Now() world.Time { return world.Time(nd.net.Clock + nd.Offset) }

// Node implements [world.Env].
func (nd *Node) Node() world.NodeID { return nd.ID }

// Nodes implements [world.Env].
func (nd *Node) Nodes() int { return len(nd.net.nodes) }

// Peers implements [world.Env].
func (nd *Node) Peers() []world.NodeID { return nd.PeerIDs }

// Host implements [world.Env].
func (nd *Node) Host() world.Clock { return nodeClock{nd} }

// Tracer implements [world.Env]: the host clock.
func (nd *Node) Tracer() world.Clock { return nodeClock{nd} }

// Rand implements [world.Env]: a stream seeded by the node's ID.
func (nd *Node) Rand() *rand.Rand { return rand.New(rand.NewPCG(1, 2+uint64(nd.ID))) }

// Logger implements [world.Env]: lines go to Log (and LogTo), without
// times.
func (nd *Node) Logger() *slog.Logger {
	var w io.Writer = &nd.Log
	if nd.net.LogTo != nil {
		w = io.MultiWriter(w, prefixWriter{nd.net.LogTo, fmt.Sprintf("n%d ", nd.ID)})
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: nd.net.LogLevel, ReplaceAttr: dropTime}))
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

// prefixWriter writes each write (a slog line) after a prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

// AfterFunc implements [world.Env]: the timer waits for the test.
func (nd *Node) AfterFunc(d time.Duration, f func()) world.Timer {
	n := nd.net
	n.seq++
	t := &Timer{D: d, At: n.Clock + int64(max(d, 0)), seq: n.seq, f: f}
	if nd.Down {
		t.stopped = true
	}
	nd.timers = append(nd.timers, t)
	return t
}

// Pending returns the node's timers not yet fired or stopped, in the
// order armed.
func (nd *Node) Pending() []*Timer {
	nd.timers = slices.DeleteFunc(nd.timers, func(t *Timer) bool { return t.stopped })
	return nd.timers
}

// Fire runs node id's earliest-armed pending timer, whenever it is due;
// it reports whether there was one.
func (n *Net) Fire(id world.NodeID) bool {
	p := n.nodes[id].Pending()
	if len(p) == 0 {
		return false
	}
	p[0].Run()
	return true
}

// ListenPacket implements [world.Env].
func (nd *Node) ListenPacket(port uint16, h world.PacketHandler) (world.PacketConn, error) {
	if nd.packets == nil {
		nd.packets = map[uint16]world.PacketHandler{}
	}
	if _, ok := nd.packets[port]; ok {
		return nil, fmt.Errorf("worldtest: n%d: port %d in use", nd.ID, port)
	}
	nd.packets[port] = h
	c := &handConn{nd: nd, addr: world.Addr{Node: nd.ID, Port: port}}
	if nd.Sourced {
		return &sourcedConn{c}, nil
	}
	return c, nil
}

// Receive hands p to the handler of the port it is addressed to, as if it
// had just arrived; nothing happens where none listens.
func (nd *Node) Receive(p world.Packet) {
	if h, ok := nd.packets[p.To.Port]; ok && !nd.Down {
		h(p)
	}
}

// Deliver hands the datagram at index i of Datagrams to its destination,
// stamped with the receiver's clock now, and removes it.
func (n *Net) Deliver(i int) {
	d := n.Datagrams[i]
	n.Datagrams = slices.Delete(n.Datagrams, i, i+1)
	n.DeliverCopy(d)
}

// DeliverCopy hands d to its destination without removing anything.
func (n *Net) DeliverCopy(d Datagram) {
	nd := n.nodes[d.To.Node]
	nd.Receive(world.Packet{From: d.From, To: d.To, Data: d.Data, RxTime: nd.Now()})
}

// Drop removes the datagram at index i of Datagrams.
func (n *Net) Drop(i int) { n.Datagrams = slices.Delete(n.Datagrams, i, i+1) }

// Flush delivers every datagram in Datagrams, and those their delivery
// sends, in order, moving the clock on by hop ns before each.
func (n *Net) Flush(hop int64) {
	for len(n.Datagrams) > 0 {
		n.Clock += hop
		n.Deliver(0)
	}
}

type nodeClock struct{ nd *Node }

func (c nodeClock) Now() world.Time { return c.nd.Now() }

// handConn is a node's datagram endpoint.
type handConn struct {
	nd     *Node
	addr   world.Addr
	closed bool
}

func (c *handConn) LocalAddr() world.Addr { return c.addr }

func (c *handConn) Close() error {
	if !c.closed {
		c.closed = true
		delete(c.nd.packets, c.addr.Port)
	}
	return nil
}

func (c *handConn) Send(to world.Addr, data []byte) (world.Time, error) {
	tx, _, err := c.send(to, data)
	return tx, err
}

func (c *handConn) send(to world.Addr, data []byte) (world.Time, world.TxSource, error) {
	nd, n := c.nd, c.nd.net
	if c.closed {
		return 0, 0, fmt.Errorf("worldtest: send on closed endpoint %v", c.addr)
	}
	d := Datagram{From: c.addr, To: to, Data: slices.Clone(data)}
	if n.Latency > 0 {
		n.seq++
		n.arrive = append(n.arrive, &arrival{at: n.Clock + int64(n.Latency), seq: n.seq, d: d})
	} else {
		n.Datagrams = append(n.Datagrams, d)
	}
	src := world.TxKernel
	if len(nd.Sources) > 0 {
		src, nd.Sources = nd.Sources[0], nd.Sources[1:]
	}
	if src == world.TxUser {
		return nd.Now(), src, nil // the fallback: a reading before sendmsg
	}
	return nd.Now() + world.Time(n.TxLag), src, nil
}

// sourcedConn is a handConn that says where its timestamps came from.
type sourcedConn struct{ *handConn }

func (c *sourcedConn) SendSourced(to world.Addr, data []byte) (world.Time, world.TxSource, error) {
	return c.send(to, data)
}

// Advance moves the clock on by d, firing every timer and delivering every
// datagram (Latency set) that falls due on the way, in the order due
// (armed or sent first on a tie), each at its own time. Stream frames
// still wait for the test.
func (n *Net) Advance(d time.Duration) {
	end := n.Clock + int64(d)
	for n.next(end) {
	}
	n.Clock = end
}

// Step moves the clock to the earliest pending timer of any node (never
// back) and fires it, delivering the datagrams due before it on the way;
// it reports whether there was one.
func (n *Net) Step() bool {
	var first *Timer
	for _, nd := range n.nodes {
		for _, t := range nd.Pending() {
			if first == nil || t.At < first.At || (t.At == first.At && t.seq < first.seq) {
				first = t
			}
		}
	}
	if first == nil {
		return false
	}
	for n.next(first.At) && !first.stopped {
	}
	return true
}

// next runs the earliest timer or datagram due by end, if any, moving the
// clock to it.
func (n *Net) next(end int64) bool {
	var timer *Timer
	for _, nd := range n.nodes {
		for _, t := range nd.Pending() {
			if t.At <= end && (timer == nil || t.At < timer.At || (t.At == timer.At && t.seq < timer.seq)) {
				timer = t
			}
		}
	}
	ai := -1
	for i, a := range n.arrive {
		if a.at <= end && (ai < 0 || a.at < n.arrive[ai].at || (a.at == n.arrive[ai].at && a.seq < n.arrive[ai].seq)) {
			ai = i
		}
	}
	switch {
	case ai >= 0 && (timer == nil || n.arrive[ai].at < timer.At || (n.arrive[ai].at == timer.At && n.arrive[ai].seq < timer.seq)):
		a := n.arrive[ai]
		n.arrive = slices.Delete(n.arrive, ai, ai+1)
		n.Clock = max(n.Clock, a.at)
		n.DeliverCopy(a.d)
	case timer != nil:
		n.Clock = max(n.Clock, timer.At)
		timer.Run()
	default:
		return false
	}
	return true
}

var (
	_ world.Env        = (*Node)(nil)
	_ world.PacketConn = (*handConn)(nil)
)
