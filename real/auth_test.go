package real_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/world"
)

const (
	authDgramPort  = 7001
	authStreamPort = 7002
	authMessages   = 40
)

// inbox records what node 0's program heard.
type inbox struct {
	mu     sync.Mutex
	dgrams []string
	frames []string
	opens  int
}

func (b *inbox) add(to *[]string, msg []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*to = append(*to, string(msg))
}

func (b *inbox) OnOpen(world.Stream) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opens++
}
func (b *inbox) OnMessage(_ world.Stream, msg []byte) { b.add(&b.frames, msg) }
func (b *inbox) OnClose(world.Stream, error)          {}

// sender is node 1's program: authMessages datagrams to node 0, one every
// millisecond, and as many frames on a stream to it.
type sender struct{}

func (sender) OnOpen(s world.Stream) {
	for i := range authMessages {
		_ = s.Send(fmt.Appendf(nil, "frame %d", i))
	}
}
func (sender) OnMessage(world.Stream, []byte) {}
func (sender) OnClose(world.Stream, error)    {}

func (sender) start(env world.Env) error {
	c, err := env.ListenPacket(authDgramPort, func(world.Packet) {})
	if err != nil {
		return err
	}
	if _, err := env.Dial(world.Addr{Node: 0, Port: authStreamPort}, sender{}); err != nil {
		return err
	}
	i := 0
	var tick func()
	tick = func() {
		_, _ = c.Send(world.Addr{Node: 0, Port: authDgramPort}, fmt.Appendf(nil, "dgram %d", i))
		if i++; i < authMessages {
			env.AfterFunc(time.Millisecond, tick)
		}
	}
	env.AfterFunc(time.Millisecond, tick)
	return nil
}

// relay is an attacker on the path from node 1 to node 0: it forwards
// what node 1 sends (datagrams and one stream), keeping copies, and sends
// from node 1's address as it likes.
type relay struct {
	t         *testing.T
	from, to  netip.Addr // node 1's address, node 0's
	mu        sync.Mutex
	dgrams    [][]byte
	streamOut bytes.Buffer // what node 1 wrote on its stream
	fake      *net.UDPConn
}

func (r *relay) datagrams(l *net.UDPConn) {
	buf := make([]byte, 65536)
	for {
		k, err := l.Read(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.dgrams = append(r.dgrams, slices.Clone(buf[:k]))
		r.mu.Unlock()
		r.send(buf[:k])
	}
}

func (r *relay) send(b []byte) {
	if _, err := r.fake.WriteToUDPAddrPort(b, netip.AddrPortFrom(r.to, authDgramPort)); err != nil {
		r.t.Error(err)
	}
}

func (r *relay) stream(l net.Listener) {
	c, err := l.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	up, err := r.dial()
	if err != nil {
		r.t.Error(err)
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(c, up) }()
	var tee safeBuffer
	tee.r = r
	_, _ = io.Copy(up, io.TeeReader(c, &tee))
}

// dial connects to node 0's stream port from node 1's address.
func (r *relay) dial() (net.Conn, error) {
	d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(r.from, 0))}
	return d.Dial("tcp", netip.AddrPortFrom(r.to, authStreamPort).String())
}

type safeBuffer struct{ r *relay }

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	return b.r.streamOut.Write(p)
}

// TestAuthenticatedCluster: with a key, node 0 hears exactly what node 1
// sent, through an attacker on the path who also sends, from node 1's
// address, a datagram without the key, a replay of a genuine datagram, an
// altered one, a forged frame on a stream of its own and the whole of
// node 1's stream again on a new connection: each is dropped and counted
// by its reason, and nothing else changes.
func TestAuthenticatedCluster(t *testing.T) {
	a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
	ip := func(last byte) netip.Addr { return netip.AddrFrom4([4]byte{127, a, b, last}) }
	key, err := auth.NewKey(bytes.Repeat([]byte{42}, auth.MinKeySize))
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{t: t, from: ip(2), to: ip(1)}
	dl, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip(9), authDgramPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	if r.fake, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip(2), 0))); err != nil {
		t.Fatal(err)
	}
	defer r.fake.Close()
	sl, err := net.Listen("tcp", netip.AddrPortFrom(ip(9), authStreamPort).String())
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	go r.datagrams(dl)
	go r.stream(sl)

	// Node 0 runs in one world; node 1 in another, which has node 0 at
	// the relay's address.
	in := &inbox{}
	w0 := startAuthWorld(t, key, []netip.Addr{ip(1), ip(2)}, 0, func(env world.Env) error {
		if _, err := env.ListenPacket(authDgramPort, func(p world.Packet) { in.add(&in.dgrams, p.Data) }); err != nil {
			return err
		}
		_, err := env.Listen(authStreamPort, in)
		return err
	})
	w1 := startAuthWorld(t, key, []netip.Addr{ip(9), ip(2)}, 1, sender{}.start)

	var want []string
	for i := range authMessages {
		want = append(want, fmt.Sprintf("dgram %d", i))
	}
	waitFor(t, "node 1's datagrams", func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return len(in.dgrams) >= authMessages && len(in.frames) >= authMessages
	})

	// The attacks, from node 1's address.
	r.mu.Lock()
	genuine := slices.Clone(r.dgrams[3])
	recorded := slices.Clone(r.streamOut.Bytes())
	r.mu.Unlock()
	r.send([]byte("dgram forged without the key"))
	r.send(genuine)
	altered := slices.Clone(genuine)
	altered[0] ^= 1
	r.send(altered)
	forgeFrame(t, r)
	replayStream(t, r, recorded)
	waitFor(t, "the attacks counted", func() bool {
		d := w0.AuthDrops()
		return d.Forged+d.Replayed >= 5
	})
	time.Sleep(20 * time.Millisecond) // anything more would show now

	if err := w1.Stop(); err != nil {
		t.Error(err)
	}
	if err := w0.Stop(); err != nil {
		t.Error(err)
	}
	// Two datagrams and two frames forged; one datagram replayed.
	if got, wantDrops := w0.AuthDrops(), (real.AuthDrops{Forged: 4, Replayed: 1}); got != wantDrops {
		t.Errorf("node 0's world dropped %+v, want %+v", got, wantDrops)
	}
	if got := w1.AuthDrops(); got != (real.AuthDrops{}) {
		t.Errorf("node 1's world dropped %+v, want nothing", got)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !slices.Equal(in.dgrams, want) {
		t.Errorf("node 0 heard datagrams %q, want %q", in.dgrams, want)
	}
	var wantFrames []string
	for i := range authMessages {
		wantFrames = append(wantFrames, fmt.Sprintf("frame %d", i))
	}
	if !slices.Equal(in.frames, wantFrames) {
		t.Errorf("node 0 heard frames %q, want %q", in.frames, wantFrames)
	}
}

// forgeFrame opens a stream to node 0 from node 1's address, exchanges
// nonces as a node would, and sends one frame with a made-up tag.
func forgeFrame(t *testing.T, r *relay) {
	c, err := r.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nonce := make([]byte, 16)
	if _, err := io.ReadFull(c, nonce); err != nil {
		t.Fatal(err)
	}
	frame := append([]byte("frame forged"), make([]byte, auth.Overhead)...)
	binary.BigEndian.PutUint32(frame[len(frame)-auth.Overhead:], 1) // from node 1
	msg := binary.BigEndian.AppendUint32(nonce, uint32(len(frame)))
	if _, err := c.Write(append(msg, frame...)); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(c) // node 0 closes it
}

// replayStream sends all that node 1 wrote on its stream (its nonce and
// frames) on a new connection to node 0.
func replayStream(t *testing.T, r *relay, recorded []byte) {
	c, err := r.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(recorded); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(c)
}

func startAuthWorld(t *testing.T, key *auth.Key, addrs []netip.Addr, local world.NodeID, program func(world.Env) error) *real.World {
	t.Helper()
	cfg := real.Config{Seed: 1, LogLevel: 8, Key: key, Local: []world.NodeID{local}}
	for _, a := range addrs {
		cfg.Nodes = append(cfg.Nodes, real.NodeConfig{Addr: a})
	}
	w, err := real.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(func(world.NodeID) world.Program { return world.ProgramFunc(program) }); err != nil {
		w.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	return w
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
