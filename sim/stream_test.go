package sim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// closer records how and when streams end.
type closer struct {
	s      **sim.Sim
	opened []time.Duration
	closed []time.Duration
	errs   []error
	onOpen func(world.Stream)
}

func (c *closer) OnOpen(st world.Stream) {
	c.opened = append(c.opened, (*c.s).Now())
	if c.onOpen != nil {
		c.onOpen(st)
	}
}
func (c *closer) OnMessage(world.Stream, []byte) {}
func (c *closer) OnClose(_ world.Stream, err error) {
	c.closed = append(c.closed, (*c.s).Now())
	c.errs = append(c.errs, err)
}

func TestStreamFaults(t *testing.T) {
	tests := []struct {
		name       string
		fault      sim.Fault
		wantClosed time.Duration // when both ends learn (0: the dialer only, see below)
		wantErr    error
	}{
		// A partition breaks the stream once the timeout (1s) has passed.
		{"partition", sim.Fault{At: 100 * ms, Kind: sim.Partition, Groups: [][]int{{0}, {1}}}, 1100 * ms, sim.ErrBroken},
		// A link flap of 0→1 longer than the timeout breaks it the same way.
		{"link down", sim.Fault{At: 100 * ms, Kind: sim.LinkFlap, From: 0, To: 1, Both: true, Down: 5 * time.Second, Count: 1}, 1100 * ms, sim.ErrBroken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mesh(2, ms)
			cfg.Faults = []sim.Fault{tc.fault}
			var s *sim.Sim
			h := [2]*closer{{s: &s}, {s: &s}}
			s, err := sim.New(cfg, func(id world.NodeID) world.Program {
				return world.ProgramFunc(func(env world.Env) error {
					if id == 1 {
						_, err := env.Listen(5, h[1])
						return err
					}
					_, err := env.Dial(world.Addr{Node: 1, Port: 5}, h[0])
					return err
				})
			}, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(3 * time.Second)
			for i, c := range h {
				if len(c.opened) != 1 || len(c.closed) != 1 {
					t.Fatalf("end %d: opened %v closed %v, want once each", i, c.opened, c.closed)
				}
				if c.closed[0] != tc.wantClosed || !errors.Is(c.errs[0], tc.wantErr) {
					t.Errorf("end %d closed at %v with %v, want %v with %v", i, c.closed[0], c.errs[0], tc.wantClosed, tc.wantErr)
				}
			}
		})
	}
}

func TestCrashResetsPeerStream(t *testing.T) {
	cfg := mesh(2, ms)
	cfg.Faults = []sim.Fault{{At: 100 * ms, Kind: sim.Crash, Node: 1}}
	var s *sim.Sim
	dialer := &closer{s: &s}
	s, err := sim.New(cfg, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			if id == 1 {
				_, err := env.Listen(5, &closer{s: &s})
				return err
			}
			_, err := env.Dial(world.Addr{Node: 1, Port: 5}, dialer)
			return err
		})
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(time.Second)
	if len(dialer.closed) != 1 || dialer.closed[0] != 101*ms || !errors.Is(dialer.errs[0], sim.ErrBroken) {
		t.Fatalf("dialer closed at %v with %v; want once at 101ms (one delay after the crash) with ErrBroken", dialer.closed, dialer.errs)
	}
	if s.Up(1) {
		t.Fatal("node 1 is up after a crash without restart")
	}
}

func TestStreamSurvivesShortPartition(t *testing.T) {
	cfg := mesh(2, ms)
	cfg.Faults = []sim.Fault{{At: 100 * ms, Kind: sim.Partition, Groups: [][]int{{0}, {1}}, HealAfter: 300 * ms}}
	var s *sim.Sim
	dialer := &closer{s: &s}
	var got []time.Duration
	listener := &recvAt{s: &s, got: &got}
	s, err := sim.New(cfg, func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			if id == 1 {
				_, err := env.Listen(5, listener)
				return err
			}
			// Sent during the partition: held, then delivered once the
			// break check finds the path healed.
			st, err := env.Dial(world.Addr{Node: 1, Port: 5}, dialer)
			env.AfterFunc(150*ms, func() {
				if err := st.Send([]byte("held")); err != nil {
					t.Errorf("send: %v", err)
				}
			})
			return err
		})
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(3 * time.Second)
	if len(dialer.closed) != 0 {
		t.Fatalf("the stream broke at %v although the partition healed within the timeout", dialer.closed)
	}
	if len(got) != 1 || got[0] != 1101*ms {
		t.Fatalf("held message delivered at %v, want once at 1101ms (break check at 1.1s plus one delay)", got)
	}
}

type recvAt struct {
	s   **sim.Sim
	got *[]time.Duration
}

func (r *recvAt) OnOpen(world.Stream)            {}
func (r *recvAt) OnClose(world.Stream, error)    {}
func (r *recvAt) OnMessage(world.Stream, []byte) { *r.got = append(*r.got, (*r.s).Now()) }

// gatherHandler records when messages reach node 0 and, on the other
// nodes, sends sizes once their stream to node 0 opens.
type gatherHandler struct {
	s     **sim.Sim
	sizes []int
	got   []time.Duration
}

func (g *gatherHandler) OnOpen(st world.Stream) {
	for _, n := range g.sizes {
		if err := st.Send(make([]byte, n)); err != nil {
			panic(err)
		}
	}
}
func (g *gatherHandler) OnMessage(_ world.Stream, _ []byte) { g.got = append(g.got, (*g.s).Now()) }
func (g *gatherHandler) OnClose(world.Stream, error)        {}

// TestNICQueuesAGather: with a NIC rate, a gather of one message from each
// of 7 nodes queues at the receiver's interface (one message time apart),
// and a node's messages queue at its own; without one, they all arrive
// after the link's delay.
func TestNICQueuesAGather(t *testing.T) {
	const size = 9958 // + 42 bytes of headers: 80 µs at 1 Gbit/s
	for _, tc := range []struct {
		name  string
		nic   uint64
		sizes []int
		want  func(i int) time.Duration
	}{
		{"no NIC", 0, []int{size}, func(int) time.Duration { return 2*ms + 50*time.Microsecond }},
		// Each sender's message leaves 80 µs after its stream opens, crosses
		// the 50 µs link and then waits its turn at node 0's interface.
		{"1 Gbit/s", 1_000_000_000, []int{size}, func(i int) time.Duration {
			return 2*ms + 50*time.Microsecond + time.Duration(i+1)*80*time.Microsecond
		}},
		// One sender's three messages leave one after another.
		{"1 Gbit/s, 3 from each", 1_000_000_000, []int{size, size, size}, func(i int) time.Duration {
			return 2*ms + 50*time.Microsecond + time.Duration(i+1)*80*time.Microsecond
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mesh(8, 50*time.Microsecond)
			cfg.NICRate = tc.nic
			var s *sim.Sim
			g := &gatherHandler{s: &s}
			send := &gatherHandler{s: &s, sizes: tc.sizes}
			s, err := sim.New(cfg, func(id world.NodeID) world.Program {
				return world.ProgramFunc(func(env world.Env) error {
					if id == 0 {
						_, err := env.Listen(5, g)
						return err
					}
					// Dial at 1.95 ms: the streams open at 2.05 ms.
					env.AfterFunc(1950*time.Microsecond, func() { _, _ = env.Dial(world.Addr{Node: 0, Port: 5}, send) })
					return nil
				})
			}, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(100 * ms)
			if want := 7 * len(tc.sizes); len(g.got) != want {
				t.Fatalf("%d messages reached node 0, want %d", len(g.got), want)
			}
			for i, at := range g.got {
				if w := tc.want(i) + 50*time.Microsecond; at != w {
					t.Errorf("message %d arrived at %v, want %v", i, at, w)
				}
			}
		})
	}
}
