package clockmodel

import (
	"math"
	"testing"
	"time"
)

func TestTracerExact(t *testing.T) {
	host := mustNew(t, Params{Offset: time.Second, PPM: 100})
	tr, err := NewTracer(host, TracerParams{Offset: -500, PPM: -20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := host.Ideal(1e9) // 1e9 + 1e9 + 1e5
	want := -500 + s - s*20/1e6
	if got := tr.Ideal(1e9); got != want {
		t.Errorf("Tracer.Ideal(1s) = %d, want %d", got, want)
	}
	if got := tr.Read(1e9); got != want {
		t.Errorf("Tracer.Read(1s) = %d, want %d", got, want)
	}
	if got, want := tr.Rate(1e9), (1-20e-6)*(1+100e-6); math.Abs(got-want) > 1e-15 {
		t.Errorf("Tracer.Rate = %v, want %v", got, want)
	}
}

func TestTracerLineAgainstHost(t *testing.T) {
	tests := []struct {
		name string
		host Params
		p    TracerParams
	}{
		{"offset only", Params{PPM: 30}, TracerParams{Offset: 123 * time.Millisecond}},
		{"rate and offset", Params{PPM: -7, WanderPPM: 0.5}, TracerParams{Offset: -time.Hour, PPM: 250}},
		{"noisy coarse host", Params{ReadNoise: time.Microsecond, Granularity: time.Microsecond, PeriodicPPM: 2, PeriodicPeriod: time.Minute},
			TracerParams{Offset: 42, PPM: -3.5, Granularity: 10, ReadNoise: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := mustNew(t, tt.host)
			tr, err := NewTracer(host, tt.p, rng(3))
			if err != nil {
				t.Fatal(err)
			}
			var s, r []float64
			g := granularity(tt.p.Granularity)
			for tt0 := int64(0); tt0 < 200e9; tt0 += 97_000_003 {
				s = append(s, float64(host.Ideal(tt0)))
				r = append(r, float64(tr.Ideal(tt0)))
				read := tr.Read(tt0)
				if read%g != 0 && read > 0 {
					t.Fatalf("Tracer.Read = %d, not a multiple of %d", read, g)
				}
				if d := read - tr.Ideal(tt0); d > 6*int64(tt.p.ReadNoise) || d < -g-6*int64(tt.p.ReadNoise) {
					t.Fatalf("Tracer.Read − Ideal = %d, too far", d)
				}
			}
			slope, intercept := fitLine(s, r)
			if want := 1 + tt.p.PPM*1e-6; math.Abs(slope-want) > 1e-12 {
				t.Errorf("slope of R over S = %.15f, want %.15f", slope, want)
			}
			if want := float64(tt.p.Offset); math.Abs(intercept-want) > 2 {
				t.Errorf("intercept of R over S = %.2f, want %.0f", intercept, want)
			}
		})
	}
}

// TestTracerIgnoresHostSteps: a step of the host clock (NTP setting the
// time) does not move a tracer clock (a GPU's counter), which keeps
// running at its rate off the host's unstepped clock.
func TestTracerIgnoresHostSteps(t *testing.T) {
	host := mustNew(t, Params{Steps: []Step{{At: time.Second, By: time.Millisecond}, {At: 2 * time.Second, By: -3 * time.Millisecond}}})
	tr, err := NewTracer(host, TracerParams{PPM: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{1e9, 2e9} {
		if got, want := tr.Ideal(at)-tr.Ideal(at-1), int64(1); got != want {
			t.Errorf("tracer advance over the ns of the host step at %d = %d, want %d", at, got, want)
		}
		if got, want := host.Ideal(at)-host.Ideal(at-1), int64(1); got == want {
			t.Errorf("host did not step at %d", at)
		}
	}
	if got, want := tr.Ideal(3e9), int64(3e9+3e6); got != want {
		t.Errorf("tracer at 3 s = %d, want %d (1000 ppm of the unstepped host clock)", got, want)
	}
}
