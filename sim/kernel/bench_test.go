package kernel

import "testing"

// BenchmarkKernel measures the scheduler alone: 1,024 self-rescheduling
// handlers with distinct periods keep the queue at its working size, so each
// iteration is one pop and one push. It reports events per wall second and
// allocations per event (the target: zero).
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
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		k.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
