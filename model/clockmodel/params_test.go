package clockmodel

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsInvalidParams(t *testing.T) {
	tests := []struct {
		name string
		p    Params
		want string // substring of the error
	}{
		{"NaN PPM", Params{PPM: math.NaN()}, "PPM is NaN"},
		{"Inf wander", Params{WanderPPM: math.Inf(1)}, "WanderPPM is +Inf"},
		{"NaN limit", Params{WanderPPM: 1, WanderLimitPPM: math.NaN()}, "WanderLimitPPM is NaN"},
		{"NaN periodic", Params{PeriodicPPM: math.NaN(), PeriodicPeriod: time.Second}, "PeriodicPPM is NaN"},
		{"negative wander", Params{WanderPPM: -1}, "WanderPPM is -1"},
		{"negative limit", Params{WanderPPM: 1, WanderLimitPPM: -2}, "WanderLimitPPM is -2"},
		{"negative wander step", Params{WanderStep: -time.Second}, "WanderStep is -1s"},
		{"tiny wander step", Params{WanderPPM: 1, WanderStep: time.Microsecond}, "WanderStep is 1µs"},
		{"negative period", Params{PeriodicPeriod: -time.Second}, "PeriodicPeriod is -1s"},
		{"negative granularity", Params{Granularity: -5}, "Granularity is -5ns"},
		{"negative noise", Params{ReadNoise: -time.Microsecond}, "ReadNoise is -1µs"},
		{"periodic without period", Params{PeriodicPPM: 3}, "PeriodicPeriod is 0"},
		{"clock stops", Params{PPM: -1e6}, "would stop"},
		{"clock runs backwards", Params{PPM: -5e5, WanderPPM: 1, WanderLimitPPM: 4e5, PeriodicPPM: 2e5, PeriodicPeriod: 1}, "would stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.p, rng(1), rng(2))
			if !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("New: error %v, want one wrapping ErrInvalidParams", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNewNilStreams(t *testing.T) {
	if _, err := New(Params{WanderPPM: 1}, nil, rng(2)); !errors.Is(err, ErrInvalidParams) {
		t.Errorf("wander without stream: error %v, want ErrInvalidParams", err)
	}
	if _, err := New(Params{ReadNoise: 1}, rng(1), nil); !errors.Is(err, ErrInvalidParams) {
		t.Errorf("noise without stream: error %v, want ErrInvalidParams", err)
	}
	if _, err := New(Params{PPM: 3, Granularity: time.Microsecond}, nil, nil); err != nil {
		t.Errorf("no wander, no noise, nil streams: %v", err)
	}
}

func TestNewTracerRejectsInvalidParams(t *testing.T) {
	host := mustNew(t, Params{})
	tests := []struct {
		name string
		p    TracerParams
		want string
	}{
		{"NaN PPM", TracerParams{PPM: math.NaN()}, "tracer PPM is NaN"},
		{"huge PPM", TracerParams{PPM: -2e6}, "tracer PPM is -2e+06"},
		{"negative granularity", TracerParams{Granularity: -1}, "tracer Granularity is -1ns"},
		{"negative noise", TracerParams{ReadNoise: -1}, "tracer ReadNoise is -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewTracer(host, tt.p, rng(3))
			if !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewTracer: error %v, want ErrInvalidParams containing %q", err, tt.want)
			}
		})
	}
	if _, err := NewTracer(host, TracerParams{ReadNoise: 1}, nil); !errors.Is(err, ErrInvalidParams) {
		t.Errorf("noise without stream: error %v, want ErrInvalidParams", err)
	}
	if _, err := NewTracer(nil, TracerParams{}, nil); err == nil {
		t.Errorf("nil host: no error")
	}
}

func TestNewDoesNotModifySteps(t *testing.T) {
	steps := []Step{{At: 2 * time.Second, By: 1}, {At: time.Second, By: 2}}
	c := mustNew(t, Params{Steps: steps})
	if steps[0].At != 2*time.Second {
		t.Errorf("New sorted the caller's Steps slice: %v", steps)
	}
	if err := c.AddStep(Step{At: 3 * time.Second, By: 4}); err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1].By != 2 {
		t.Errorf("AddStep changed the caller's Steps slice: %v", steps)
	}
}
