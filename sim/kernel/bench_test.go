package kernel

import (
	"runtime"
	"testing"
)

// BenchmarkKernel measures the scheduler alone: 1,024 self-rescheduling
// handlers with distinct periods keep the queue at its working size, so each
// iteration is one pop and one push. It reports events per wall second and
// heap allocations per event (targets: at least 5 million events/s on one
// core, zero allocations per event).
func BenchmarkKernel(b *testing.B) {
	k := &Kernel{}
	const handlers = 1024
	for i := range handlers {
		c := &chain{k: k, delay: int64(1000 + i)}
		k.After(int64(i), c, 0)
	}
	for range 10 * handlers {
		k.Step()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		k.Step()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/event")
}
