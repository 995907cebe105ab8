package sim_test

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// simWorld runs the conformance suite's programs in the simulator, with
// drifting, noisy clocks and jittery (but lossless) links.
type simWorld struct{}

func (simWorld) Run(t *testing.T, n int, newProgram func(world.NodeID) world.Program, done func() bool, limit time.Duration) {
	cfg := sim.Config{Seed: 7}
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{
			Clock:  clockmodel.Params{Offset: time.Duration(i) * time.Millisecond, PPM: float64(50 - 40*i), ReadNoise: 20, Granularity: 10},
			Tracer: clockmodel.TracerParams{Offset: time.Second, PPM: 10},
		})
		for j := range n {
			if i != j {
				cfg.Links = append(cfg.Links, sim.LinkConfig{From: i, To: j, Params: netem.Params{Delay: 100 * time.Microsecond, Jitter: 10 * time.Microsecond}})
			}
		}
	}
	s, err := sim.New(cfg, newProgram, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for step := time.Millisecond; s.Now() < limit && !done(); {
		s.Run(s.Now() + step)
	}
}

func TestConformance(t *testing.T) { worldtest.Run(t, simWorld{}) }
