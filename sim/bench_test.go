package sim_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// BenchmarkWorld measures the whole simulated world, not just the kernel:
// 16 nodes in a full mesh exchanging datagrams every millisecond over
// jittery links, with the event log hashed. One op is one virtual second.
// It reports events per wall second and allocations per event (each
// datagram copies its payload and schedules a delivery).
func BenchmarkWorld(b *testing.B) {
	cfg := mesh(16, 50*time.Microsecond)
	for i := range cfg.Links {
		cfg.Links[i].Params.Jitter = 10 * time.Microsecond
	}
	s, err := sim.New(cfg, func(id world.NodeID) world.Program { return burstForever(id) }, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s.Run(100 * ms)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := s.Events()
	b.ResetTimer()
	for range b.N {
		s.Run(s.Now() + time.Second)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	events := float64(s.Events() - start)
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
}

func burstForever(id world.NodeID) world.Program {
	return world.ProgramFunc(func(env world.Env) error {
		c, err := env.ListenPacket(1, func(world.Packet) {})
		if err != nil {
			return err
		}
		payload := []byte("0123456789abcdef")
		var tick func()
		tick = func() {
			for j := range env.Nodes() {
				if world.NodeID(j) != id {
					_, _ = c.Send(world.Addr{Node: world.NodeID(j), Port: 1}, payload)
				}
			}
			env.AfterFunc(ms, tick)
		}
		env.AfterFunc(ms, tick)
		return nil
	})
}
