package worldtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

// TestNetTimers: Advance fires what falls due in the order due (armed
// first on a tie), each at its own time on the node's clock; Step fires
// the earliest pending timer of any node; a stopped timer never fires.
func TestNetTimers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drive func(n *Net)
		want  string
	}{
		{"advance in due order", func(n *Net) { n.Advance(10 * time.Millisecond) },
			"n1:b@1002000000 n0:a@1003000000 n0:c@1003000000"},
		{"advance stops at its end", func(n *Net) { n.Advance(2 * time.Millisecond) }, "n1:b@1002000000"},
		{"step fires one", func(n *Net) { n.Step(); n.Step() }, "n1:b@1002000000 n0:a@1003000000"},
		{"fire ignores the due time", func(n *Net) { n.Fire(0) }, "n0:a@1000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNet(2)
			n.Node(1).Offset = 1000 // reads 1 µs ahead
			var got []string
			arm := func(id world.NodeID, d time.Duration, name string) world.Timer {
				nd := n.Node(id)
				return nd.AfterFunc(d, func() { got = append(got, fmt.Sprintf("n%d:%s@%d", id, name, nd.Now()-world.Time(nd.Offset))) })
			}
			arm(0, 3*time.Millisecond, "a")
			arm(1, 2*time.Millisecond, "b")
			arm(0, 3*time.Millisecond, "c")
			arm(1, time.Millisecond, "stopped").Stop()
			tc.drive(n)
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("fired %q, want %q", s, tc.want)
			}
		})
	}
}

// TestNetDatagrams: without Latency a datagram waits for Deliver, stamped
// on arrival with the receiver's clock; with it, Advance delivers it that
// long after it left; a crashed node's datagrams are lost.
func TestNetDatagrams(t *testing.T) {
	for _, tc := range []struct {
		name    string
		latency time.Duration
		drive   func(n *Net)
		want    []world.Time // RxTimes at node 1
	}{
		{"by hand", 0, func(n *Net) { n.Clock += 5; n.Deliver(0) }, []world.Time{1e9 + 5 + 7}},
		{"latency", time.Microsecond, func(n *Net) { n.Advance(time.Millisecond) }, []world.Time{1e9 + 1000 + 7}},
		{"latency not yet", time.Microsecond, func(n *Net) { n.Advance(999) }, nil},
		{"crashed receiver", time.Microsecond, func(n *Net) { n.Crash(1); n.Advance(time.Millisecond) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNet(2)
			n.Latency = tc.latency
			n.Node(1).Offset = 7
			var got []world.Time
			if _, err := n.Node(1).ListenPacket(9, func(p world.Packet) { got = append(got, p.RxTime) }); err != nil {
				t.Fatal(err)
			}
			c, err := n.Node(0).ListenPacket(9, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Send(world.Addr{Node: 1, Port: 9}, []byte("x")); err != nil {
				t.Fatal(err)
			}
			tc.drive(n)
			if !slices.Equal(got, tc.want) {
				t.Errorf("received at %v, want %v", got, tc.want)
			}
		})
	}
}

// events records a stream handler's callbacks.
type events struct {
	name string
	log  *[]string
}

func (e events) OnOpen(s world.Stream) { *e.log = append(*e.log, e.name+" open") }
func (e events) OnMessage(s world.Stream, msg []byte) {
	*e.log = append(*e.log, e.name+" msg "+string(msg))
}
func (e events) OnClose(s world.Stream, err error) {
	*e.log = append(*e.log, fmt.Sprintf("%s close %v", e.name, err))
}

// TestNetStreams: a dial waits in Frames until delivered, then opens both
// ends (the listener's first); messages and closes arrive in order, one
// frame at a time; a dial to no listener, or a dropped connect, fails; a
// crash breaks the peer's end; nothing may be sent before the open.
func TestNetStreams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listen bool
		drive  func(n *Net, s world.Stream)
		want   string
	}{
		{"open, message, close", true, func(n *Net, s world.Stream) {
			n.DeliverFrame(0)
			_ = s.Send([]byte("hi"))
			_ = s.Close()
			n.DeliverFrame(0)
			n.DeliverFrame(0)
		}, "L open; D open; L msg hi; L close <nil>"},
		{"refused", false, func(n *Net, s world.Stream) { n.DeliverFrame(0) },
			"D close dial n1:5: worldtest: connection refused"},
		{"connect dropped", true, func(n *Net, s world.Stream) { n.DropFrame(0) },
			"D close worldtest: connection refused"},
		{"crash breaks the stream", true, func(n *Net, s world.Stream) {
			n.DeliverFrame(0)
			n.Crash(0)
			n.DeliverFrame(0)
		}, "L open; D open; L close worldtest: peer crashed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNet(2)
			var log []string
			if tc.listen {
				if _, err := n.Node(1).Listen(5, events{"L", &log}); err != nil {
					t.Fatal(err)
				}
			}
			s, err := n.Node(0).Dial(world.Addr{Node: 1, Port: 5}, events{"D", &log})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send([]byte("early")); err == nil {
				t.Error("Send before the open succeeded")
			}
			tc.drive(n, s)
			if got := strings.Join(log, "; "); got != tc.want {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			if len(n.Frames) != 0 {
				t.Errorf("%d frames left in flight", len(n.Frames))
			}
		})
	}
}
