package sim_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/chronosync/chronosync/sim"
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
	s, err := sim.New(cfg, pinger{period: ms}.program, sim.Options{})
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
