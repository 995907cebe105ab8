package clockmodel

import (
	"testing"
	"time"
)

func BenchmarkRead(b *testing.B) {
	c := mustNew(b, Params{
		Offset: time.Second, PPM: 12, WanderPPM: 0.1, PeriodicPPM: 1, PeriodicPeriod: time.Minute,
		Granularity: 10, ReadNoise: 100, Steps: []Step{{At: time.Hour, By: 1}},
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c.Read(int64(i) * 1000)
	}
}

func BenchmarkTracerRead(b *testing.B) {
	c := mustNew(b, Params{PPM: 12, WanderPPM: 0.1, ReadNoise: 100})
	tr, err := NewTracer(c, TracerParams{PPM: 3, ReadNoise: 10}, rng(3))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tr.Read(int64(i) * 1000)
	}
}
