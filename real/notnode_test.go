package real_test

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/world"
)

// TestNonNodeDatagrams sends 1,000 datagrams from a loopback address that
// is no node's to a node's port, beside 20 from the other node: the
// stranger's are dropped before the node sees them and counted as their
// own reason (NotNodeDrops, the summary's not_a_node), not as read errors
// or the loop's backlog, which are losses of the run's own (before, both
// were one counter, which the run judged against the datagrams it sent:
// 693 of 0 sent read as 69300 %); the node's own datagrams all arrive.
// Each such datagram, and each connection from that address, was logged:
// now the first of each is, and the rest are counted
// (NotNodeStreams for connections).
func TestNonNodeDatagrams(t *testing.T) {
	a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
	addr := func(i byte) netip.Addr { return netip.AddrFrom4([4]byte{127, a, b, i}) }
	var log bytes.Buffer
	cfg := real.Config{Seed: 1, Log: &log, LogLevel: 0, Nodes: []real.NodeConfig{{Addr: addr(1)}, {Addr: addr(2)}}}
	w, err := real.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const port = 7301
	var got, fromNode1, opened atomic.Int64
	conns := make(chan world.PacketConn, 2)
	err = w.Start(func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			if _, err := env.Listen(port, countOpens{&opened}); err != nil {
				return err
			}
			c, err := env.ListenPacket(port, func(p world.Packet) {
				got.Add(1)
				if p.From.Node == 1 {
					fromNode1.Add(1)
				}
			})
			conns <- c
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	var node1 world.PacketConn
	for range 2 {
		if c := <-conns; c.LocalAddr().Node == 1 {
			node1 = c
		}
	}
	stranger, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr(3), 0)),
		net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr(1), port)))
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	const sent = 1000
	for i := range sent {
		if _, err := stranger.Write([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if _, err := node1.Send(world.Addr{Node: 0, Port: port}, []byte("node 1")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // loopback's buffers hold them; no need to race them
		}
	}
	// Connections from the stranger are refused alike: counted, the
	// first logged.
	const dials = 20
	for range dials {
		c, err := (&net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr(3), 0))}).Dial("tcp", netip.AddrPortFrom(addr(1), port).String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for (w.NotNodeDrops() < sent || fromNode1.Load() < sent/50 || w.NotNodeStreams() < dials) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stopped = true
	w.Stop() // before the log is read: the nodes write it
	if n := w.NotNodeDrops(); n != sent {
		t.Errorf("NotNodeDrops = %d, want the %d datagrams from %s", n, sent, addr(3))
	}
	if n := w.NotNodeStreams(); n != dials || opened.Load() != 0 {
		t.Errorf("NotNodeStreams = %d, %d opened; want the %d connections from %s refused", n, opened.Load(), dials, addr(3))
	}
	if got.Load() != fromNode1.Load() || fromNode1.Load() != sent/50 {
		t.Errorf("the node's handler got %d datagrams, %d of them node 1's; want node 1's %d alone", got.Load(), fromNode1.Load(), sent/50)
	}
	if w.ReadErrors() != 0 || w.BacklogDrops() != 0 {
		t.Errorf("read errors %d, backlog drops %d: the stranger's datagrams counted as the run's own losses", w.ReadErrors(), w.BacklogDrops())
	}
	if w.Drops() != w.NotNodeDrops()+w.ReadErrors() {
		t.Errorf("Drops %d, want NotNodeDrops + ReadErrors", w.Drops())
	}
	// One warning names the stranger; the rest are only counted (a
	// stranger must not fill the run log either).
	for _, what := range []string{"datagram from an address that is no node's", "stream from an address that is no node's"} {
		if n := bytes.Count(log.Bytes(), []byte(what)); n != 1 {
			t.Errorf("%d warnings %q, want 1:\n%.2000s", n, what, log.String())
		}
	}
	if !bytes.Contains(log.Bytes(), []byte(addr(3).String())) {
		t.Errorf("the warning does not name %s:\n%.2000s", addr(3), log.String())
	}
}

// countOpens counts the streams a listener opened.
type countOpens struct{ n *atomic.Int64 }

func (c countOpens) OnOpen(world.Stream)            { c.n.Add(1) }
func (c countOpens) OnMessage(world.Stream, []byte) {}
func (c countOpens) OnClose(world.Stream, error)    {}
