package sim_test

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// TestDeliveryBuffers: a datagram's payload is the sender's at Send, each
// copy of a duplicated one its own, though the sender reuses its buffer at
// once and the simulator reuses delivered datagrams' buffers for later ones.
func TestDeliveryBuffers(t *testing.T) {
	cases := []struct {
		name      string
		duplicate float64
		jitter    time.Duration
		sends     []string
		want      int // datagrams received
	}{
		{"one", 0, 0, []string{"alpha"}, 1},
		{"in turn", 0, 0, []string{"alpha", "beta", "a longer payload than the others", "c"}, 4},
		{"duplicated", 1, 0, []string{"alpha", "beta", "gamma"}, 6},
		{"in flight together", 0, 50 * time.Microsecond, []string{"one", "two", "three", "four", "five", "six"}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := sim.Config{Seed: 1, Nodes: []sim.NodeConfig{{}, {}}, Links: []sim.LinkConfig{
				{From: 0, To: 1, Params: netem.Params{Delay: 100 * time.Microsecond, Jitter: c.jitter, Duplicate: c.duplicate}},
				{From: 1, To: 0, Params: netem.Params{Delay: 100 * time.Microsecond}},
			}}
			var got []string
			prog := func(id world.NodeID) world.Program {
				return world.ProgramFunc(func(env world.Env) error {
					conn, err := env.ListenPacket(1, func(p world.Packet) {
						got = append(got, string(p.Data))
						for i := range p.Data {
							p.Data[i] = '!' // the receiver may scribble over it: the callback is done with it
						}
					})
					if err != nil || id != 0 {
						return err
					}
					buf := make([]byte, 64)
					for i, s := range c.sends {
						env.AfterFunc(time.Duration(i)*30*time.Microsecond, func() {
							n := copy(buf, s)
							if _, err := conn.Send(world.Addr{Node: 1, Port: 1}, buf[:n]); err != nil {
								t.Error(err)
							}
							copy(buf, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX") // reused at once
						})
					}
					return nil
				})
			}
			s, err := sim.New(cfg, prog, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(time.Second)
			if len(got) != c.want {
				t.Fatalf("received %d datagrams %q, want %d", len(got), got, c.want)
			}
			sent := map[string]int{}
			for _, s := range c.sends {
				sent[s] += c.want / len(c.sends)
			}
			for _, g := range got {
				sent[g]--
			}
			for s, n := range sent {
				if n != 0 {
					t.Errorf("payload %q received %d times too few; got %q", s, n, got)
				}
			}
		})
	}
}
