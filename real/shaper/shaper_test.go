//go:build linux

package shaper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// memPort is an in-memory Port: the test sends frames as the node with
// send and reads what the shaper wrote to the node from out.
type memPort struct {
	in, out chan []byte
	done    chan struct{}
	once    sync.Once
	failW   error // WriteFrame returns it when set
}

var _ Port = (*memPort)(nil)

func newMemPort() *memPort {
	return &memPort{in: make(chan []byte, 1024), out: make(chan []byte, 4096), done: make(chan struct{})}
}

func (p *memPort) ReadFrame(buf []byte) (int, error) {
	select {
	case f := <-p.in:
		if len(f) > len(buf) {
			return 0, ErrFrameTooLarge
		}
		return copy(buf, f), nil
	case <-p.done:
		return 0, net.ErrClosed
	}
}

func (p *memPort) WriteFrame(b []byte) error {
	if p.failW != nil {
		return p.failW
	}
	select {
	case p.out <- bytes.Clone(b):
		return nil
	case <-p.done:
		return net.ErrClosed
	}
}

func (p *memPort) Close() error { p.once.Do(func() { close(p.done) }); return nil }

func (p *memPort) send(f []byte) { p.in <- f }

// recv returns the next frame written to the port, or nil after wait.
func (p *memPort) recv(wait time.Duration) []byte {
	select {
	case f := <-p.out:
		return f
	case <-time.After(wait):
		return nil
	}
}

// macOf is node i's MAC in these tests.
func macOf(i int) []byte { return []byte{0x02, 0, 0, 0, 0, byte(i + 1)} }

var broadcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// frame is an Ethernet frame with an IPv4 ethertype and payload.
func frame(dst, src []byte, payload string) []byte {
	f := append(append(append([]byte{}, dst...), src...), 0x08, 0x00)
	return append(f, payload...)
}

// startShaper runs a shaper over n memory ports until the test ends.
func startShaper(t *testing.T, n int, links func(from, to int) (netem.Params, bool)) ([]*memPort, *Shaper) {
	t.Helper()
	mem := make([]*memPort, n)
	ports := make([]Port, n)
	for i := range mem {
		mem[i] = newMemPort()
		ports[i] = mem[i]
	}
	s, err := New(ports, Config{Links: links, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return mem, s
}

func ideal(int, int) (netem.Params, bool) { return netem.Params{}, true }

// expect checks that exactly the ports in want get frame f (and no other
// frame) within a short wait.
func expect(t *testing.T, ports []*memPort, f []byte, want ...int) {
	t.Helper()
	for i, p := range ports {
		wanted := false
		for _, w := range want {
			wanted = wanted || w == i
		}
		if wanted {
			if got := p.recv(time.Second); !bytes.Equal(got, f) {
				t.Errorf("port %d got %x, want %x", i, got, f)
			}
		}
		if got := p.recv(20 * time.Millisecond); got != nil {
			t.Errorf("port %d got unexpected frame %x", i, got)
		}
	}
}

func TestMACLearning(t *testing.T) {
	p, _ := startShaper(t, 3, ideal)
	f := frame(macOf(1), macOf(0), "to B, unknown")
	p[0].send(f)
	expect(t, p, f, 1, 2) // unknown unicast floods
	f = frame(macOf(0), macOf(1), "to A, learnt")
	p[1].send(f)
	expect(t, p, f, 0)
	f = frame(macOf(1), macOf(0), "to B, learnt")
	p[0].send(f)
	expect(t, p, f, 1)
	// B moves to port 2.
	f = frame(macOf(0), macOf(1), "B on port 2")
	p[2].send(f)
	expect(t, p, f, 0)
	f = frame(macOf(1), macOf(0), "to B, moved")
	p[0].send(f)
	expect(t, p, f, 2)
	// A frame for a MAC behind its own input port goes nowhere.
	f = frame(macOf(0), macOf(3), "hairpin")
	p[0].send(f)
	expect(t, p, f)
}

func TestBroadcastReplication(t *testing.T) {
	p, s := startShaper(t, 4, ideal)
	for _, dst := range [][]byte{broadcast, {0x01, 0x00, 0x5e, 0, 0, 1}} {
		f := frame(dst, macOf(1), "everyone")
		p[1].send(f)
		expect(t, p, f, 0, 2, 3)
	}
	for _, st := range s.Stats() {
		want := uint64(0)
		if st.From == 1 {
			want = 2
		}
		if st.Sent != want || st.Written != want {
			t.Errorf("link %d->%d: sent %d written %d, want %d", st.From, st.To, st.Sent, st.Written, want)
		}
	}
}

func TestNoLinkDrops(t *testing.T) {
	links := func(from, to int) (netem.Params, bool) { return netem.Params{}, !(from == 0 && to == 1) }
	p, s := startShaper(t, 3, links)
	f := frame(macOf(0), macOf(1), "learn B")
	p[1].send(f)
	expect(t, p, f, 0, 2)
	f = frame(macOf(1), macOf(0), "0->1 has no link")
	p[0].send(f)
	expect(t, p, f)
	f = frame(broadcast, macOf(0), "bcast from 0")
	p[0].send(f)
	expect(t, p, f, 2)
	for _, st := range s.Stats() {
		if st.From == 0 && st.To == 1 && (st.Connected || st.Unrouted != 2 || st.Sent != 0) {
			t.Errorf("0->1: %+v, want unconnected with 2 unrouted", st)
		}
	}
}

// TestOrdering checks that a link with a rate limit and delay (FIFO in
// netem) delivers in order, and that one with jitter (which netem
// reorders) delivers the same frames, each once.
func TestOrdering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      netem.Params
		inFIFO bool
	}{
		{"rate", netem.Params{Delay: time.Millisecond, Rate: netem.Rate{BitsPerSecond: 50e6}}, true},
		{"jitter", netem.Params{Delay: 2 * time.Millisecond, Jitter: time.Millisecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := startShaper(t, 2, func(int, int) (netem.Params, bool) { return tc.p, true })
			const n = 300
			for i := range n {
				p[0].send(frame(broadcast, macOf(0), fmt.Sprintf("%04d", i)))
			}
			seen := make(map[string]bool)
			inversions := 0
			last := ""
			for range n {
				f := p[1].recv(2 * time.Second)
				if f == nil {
					t.Fatalf("got %d frames of %d", len(seen), n)
				}
				id := string(f[ethHeader:])
				if seen[id] {
					t.Fatalf("frame %s twice", id)
				}
				seen[id] = true
				if id < last {
					inversions++
				}
				last = id
			}
			if tc.inFIFO && inversions > 0 {
				t.Errorf("%d inversions on a FIFO link", inversions)
			}
			if !tc.inFIFO && inversions == 0 {
				t.Error("no reordering on a jittered link")
			}
		})
	}
}

// TestSchedulerOrder queues items with random release times, ties
// included, and checks they are written in (release, queue) order.
func TestSchedulerOrder(t *testing.T) {
	start := time.Now()
	sched, err := newScheduler(func() int64 { return int64(time.Since(start)) }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.close()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 500
	now := sched.clock()
	var got []*item
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		sched.run(ctx, func(it *item, now int64) error {
			got = append(got, it)
			if len(got) == n {
				close(done)
			}
			return nil
		}, func(int) error { return errors.New("no input to poll") })
	})
	for range n {
		sched.push(&item{at: now + 2e6 + r.Int64N(20)*250e3}, true) // many ties
	}
	<-done
	cancel()
	wg.Wait()
	for i := 1; i < n; i++ {
		a, b := got[i-1], got[i]
		if a.at > b.at || a.at == b.at && a.seq > b.seq {
			t.Fatalf("written out of order: (%d,%d) before (%d,%d)", a.at, a.seq, b.at, b.seq)
		}
	}
}

func TestDuplicateAndCorrupt(t *testing.T) {
	p, s := startShaper(t, 2, func(int, int) (netem.Params, bool) {
		return netem.Params{Duplicate: 1, Corrupt: 1}, true
	})
	f := frame(broadcast, macOf(0), "payload")
	p[0].send(f)
	for k := range 2 {
		g := p[1].recv(time.Second)
		if len(g) != len(f) {
			t.Fatalf("copy %d: %x", k, g)
		}
		diff := 0
		for i := range f {
			diff += bits.OnesCount8(f[i] ^ g[i])
		}
		if diff != 1 {
			t.Errorf("copy %d differs in %d bits, want 1", k, diff)
		}
	}
	st := s.Stats()[0]
	if st.Duplicated != 1 || st.Corrupted != 2 || st.Written != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestNewErrors(t *testing.T) {
	ports := []Port{newMemPort(), newMemPort()}
	if _, err := New(nil, Config{Links: ideal}); err == nil {
		t.Error("New without ports succeeded")
	}
	if _, err := New(ports, Config{}); err == nil {
		t.Error("New without Links succeeded")
	}
	bad := func(int, int) (netem.Params, bool) { return netem.Params{Duplicate: 2}, true }
	if _, err := New(ports, Config{Links: bad}); err == nil {
		t.Error("New with invalid params succeeded")
	}
}

// TestRunFailsWithPort checks that a failing port stops Run with its
// error and that every port is closed.
func TestRunFailsWithPort(t *testing.T) {
	a, b := newMemPort(), newMemPort()
	boom := errors.New("boom")
	b.failW = boom
	s, err := New([]Port{a, b}, Config{Links: ideal})
	if err != nil {
		t.Fatal(err)
	}
	a.send(frame(broadcast, macOf(0), "x"))
	if err := s.Run(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Run = %v, want %v", err, boom)
	}
	for i, p := range []*memPort{a, b} {
		select {
		case <-p.done:
		default:
			t.Errorf("port %d not closed", i)
		}
	}
	if err := s.Run(context.Background()); err == nil {
		t.Error("second Run succeeded")
	}
}

// discardPort is a Port whose writes go nowhere, without allocating.
type discardPort struct{ *memPort }

func (discardPort) WriteFrame([]byte) error { return nil }

// TestRelayAllocatesNothing checks that forwarding a frame through a link
// with delay, jitter and loss, and releasing its copy, allocates nothing
// once the item pool has grown: no garbage, so no collection beside the
// real-time thread (see itemPool).
func TestRelayAllocatesNothing(t *testing.T) {
	ports := []Port{discardPort{newMemPort()}, discardPort{newMemPort()}}
	link := netem.Params{Delay: time.Millisecond, Jitter: 100 * time.Microsecond, Loss: netem.Loss{Model: netem.LossRandom, Probability: 0.01}}
	s, err := New(ports, Config{Links: func(int, int) (netem.Params, bool) { return link, true }, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	now := int64(0)
	sched, err := newScheduler(func() int64 { return now }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.close()
	f0 := frame(macOf(1), macOf(0), "from node 0")
	f1 := frame(macOf(0), macOf(1), "from node 1")
	step := func() {
		s.forward(sched, 0, f0, now, false)
		s.forward(sched, 1, f1, now, false)
		now += 100_000 // 0.1 ms: ten copies in flight per link
		for {
			due, _ := sched.popDue(now)
			if due == nil {
				break
			}
			if err := s.write(due, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 2000 { // the pool, the heap and the lateness rings grow
		step()
	}
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Errorf("%v allocations per relayed pair of frames, want 0", a)
	}
}
