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
