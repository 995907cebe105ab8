package rounds

import (
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// quietStream is an accepted stream that records whether it was closed.
type quietStream struct {
	world.Stream
	from   world.Addr
	closed bool
}

func (s *quietStream) RemoteAddr() world.Addr { return s.from }
func (s *quietStream) Close() error           { s.closed = true; return nil }
func (s *quietStream) Send([]byte) error      { return nil }

// TestSilentConnections: a stream that opens and never says hello is
// closed after helloWait heartbeats (it was kept for good), one that says
// hello stays, and a flood of silent connections holds at most maxPending
// per node: the oldest goes first.
func TestSilentConnections(t *testing.T) {
	net, env := masterNet(2)
	nodes := []world.NodeID{0, 1}
	n := &Node{cfg: Config{Mode: ModeRounds, Cadence: time.Millisecond, Window: time.Second, Rounds: 1,
		Nodes: nodes, Participants: nodes, GatherDeadline: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond, MaxFrame: 1 << 20},
		obs: NopObserver{}, env: env}
	m, err := newMaster(n)
	if err != nil {
		t.Fatal(err)
	}
	c := masterConn{m}
	silent := &quietStream{from: world.Addr{Node: 1, Port: 40000}}
	greeter := &quietStream{from: world.Addr{Node: 1, Port: 40001}}
	c.OnOpen(silent)
	c.OnOpen(greeter)
	hello, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Hello{Hello: &syncpb.Hello{NodeId: 1, Incarnation: 1}}}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c.OnMessage(greeter, hello)
	net.Clock += int64(2 * n.cfg.Heartbeat)
	m.heartbeat()
	if silent.closed || greeter.closed {
		t.Fatalf("after 2 heartbeats: silent closed %v, greeter closed %v; want both open", silent.closed, greeter.closed)
	}
	beat, err := wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{Heartbeat: &syncpb.Heartbeat{SentNs: net.Clock}}}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c.OnMessage(greeter, beat) // the node keeps its connection alive
	net.Clock += int64(2 * n.cfg.Heartbeat)
	m.heartbeat()
	if !silent.closed {
		t.Error("a stream silent for 4 heartbeats is still open")
	}
	if greeter.closed {
		t.Error("the stream that said hello was closed")
	}
	if !strings.Contains(env.Log.String(), "closing connection: no hello") {
		t.Errorf("log lacks the closed silent stream:\n%s", env.Log.String())
	}
	flood := make([]*quietStream, maxPending*2+1)
	for i := range flood {
		flood[i] = &quietStream{from: world.Addr{Node: 1, Port: uint16(50000 + i)}}
		c.OnOpen(flood[i])
	}
	if !flood[0].closed || flood[1].closed || len(m.core.pending) != maxPending*2 {
		t.Errorf("%d silent streams on a 2-node master: first closed %v, second %v, %d waiting; want the first closed, %d waiting",
			len(flood), flood[0].closed, flood[1].closed, len(m.core.pending), maxPending*2)
	}
}
