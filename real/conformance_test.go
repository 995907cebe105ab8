package real_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// loopbackWorld runs the conformance suite's programs on loopback: node i
// is 127.a.b.(i+1) for a random a.b per run, so concurrent runs do not
// collide, with drifting injected clocks.
type loopbackWorld struct{}

func (loopbackWorld) Run(t *testing.T, n int, newProgram func(world.NodeID) world.Program, done func() bool, limit time.Duration) {
	a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
	cfg := real.Config{Seed: 7, Log: os.Stderr, LogLevel: 8} // errors only
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, real.NodeConfig{
			Clock:  clockmodel.Params{Offset: time.Duration(i) * time.Millisecond, PPM: float64(50 - 40*i)},
			Tracer: clockmodel.TracerParams{Offset: time.Second, PPM: 10},
			Addr:   netip.AddrFrom4([4]byte{127, a, b, byte(i + 1)}),
		})
	}
	runWorld(t, cfg, newProgram, done, limit)
}

func runWorld(t *testing.T, cfg real.Config, newProgram func(world.NodeID) world.Program, done func() bool, limit time.Duration) {
	t.Helper()
	w, err := real.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Start errors are part of what the suite checks (the second listen on
	// a port must fail inside a program), so they are not fatal here.
	_ = w.Start(newProgram)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && !done() && w.Failure() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestConformanceLoopback(t *testing.T) { worldtest.Run(t, loopbackWorld{}) }

func ExampleWorld() {
	cfg := real.Config{Nodes: []real.NodeConfig{
		{Addr: netip.MustParseAddr("127.0.0.1"), Clock: clockmodel.Params{Offset: 5 * time.Millisecond}},
	}}
	w, err := real.New(cfg)
	if err != nil {
		panic(err)
	}
	started := make(chan world.Time, 1)
	if err := w.Start(func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			started <- env.Host().Now()
			return nil
		})
	}); err != nil {
		panic(err)
	}
	s := <-started
	fmt.Println(s > world.Time(5*time.Millisecond))
	fmt.Println(w.Stop())
	// Output:
	// true
	// <nil>
}

// netnsWorld runs the conformance suite's programs with every node in its
// own network namespace, on a bridge (what a real run without link
// parameters uses).
type netnsWorld struct{}

func (netnsWorld) Run(t *testing.T, n int, newProgram func(world.NodeID) world.Program, done func() bool, limit time.Duration) {
	lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: n, Kind: netlab.Bridge})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	}()
	cfg := real.Config{Seed: 7, Log: os.Stderr, LogLevel: 8} // errors only
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, real.NodeConfig{
			Clock:  clockmodel.Params{Offset: time.Duration(i) * time.Millisecond, PPM: float64(50 - 40*i)},
			Tracer: clockmodel.TracerParams{Offset: time.Second, PPM: 10},
			Addr:   lab.Addr(i),
			Enter:  func(f func() error) error { return lab.Do(i, f) },
		})
	}
	runWorld(t, cfg, newProgram, done, limit)
}

func TestConformanceNetns(t *testing.T) {
	needs.Available(t, netlab.Available())
	worldtest.Run(t, netnsWorld{})
}
