package clockmodel

import (
	"math"
	"testing"
	"time"
)

func TestStepsLandExactly(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step // given in any order
		at    int64  // a step time to probe
		by    int64  // total jump at that time
	}{
		{"positive", []Step{{At: 5 * time.Second, By: 3 * time.Millisecond}}, 5e9, 3e6},
		{"negative", []Step{{At: 2 * time.Second, By: -time.Millisecond}}, 2e9, -1e6},
		{"unordered", []Step{{At: 5 * time.Second, By: 7}, {At: 2 * time.Second, By: -1}}, 5e9, 7},
		{"two at once", []Step{{At: time.Second, By: 10}, {At: time.Second, By: 5}}, 1e9, 15},
		{"at zero", []Step{{At: 0, By: 42}}, 0, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, Params{Offset: 100, Steps: tt.steps})
			before, at := c.Ideal(tt.at-1), c.Ideal(tt.at)
			if got := at - before; got != tt.by+1 {
				t.Errorf("Ideal(At) − Ideal(At−1) = %d, want By+1 = %d", got, tt.by+1)
			}
			var sum int64
			for _, s := range tt.steps {
				if int64(s.At) <= tt.at {
					sum += int64(s.By)
				}
			}
			if got, want := c.Ideal(tt.at), 100+tt.at+sum; got != want {
				t.Errorf("Ideal(%d) = %d, want %d", tt.at, got, want)
			}
		})
	}
}

func TestAddStep(t *testing.T) {
	c := mustNew(t, Params{PPM: 10, Steps: []Step{{At: 10 * time.Second, By: 1000}}})
	c.Read(3e9)
	if err := c.AddStep(Step{At: 2 * time.Second, By: 5}); err == nil {
		t.Fatal("AddStep before the latest query: no error")
	}
	if err := c.AddStep(Step{At: 3 * time.Second, By: 5}); err != nil {
		t.Fatalf("AddStep at the latest query: %v", err)
	}
	if err := c.AddStep(Step{At: 6 * time.Second, By: -2 * time.Second}); err != nil {
		t.Fatalf("AddStep in the future: %v", err)
	}
	if err := c.AddStep(Step{At: 6 * time.Second, By: 1}); err != nil {
		t.Fatalf("AddStep at the same time as another: %v", err)
	}
	base := func(tt int64) int64 { return tt + int64(math.Round(10*float64(tt)/1e6)) }
	for _, tc := range []struct{ t, steps int64 }{
		{3e9 - 1, 0}, {3e9, 5}, {6e9 - 1, 5}, {6e9, 5 - 2e9 + 1}, {10e9, 5 - 2e9 + 1 + 1000},
	} {
		if got, want := c.Ideal(tc.t), base(tc.t)+tc.steps; got != want {
			t.Errorf("Ideal(%d) = %d, want %d", tc.t, got, want)
		}
	}
}

func TestReadGoesBackOnlyOnNegativeStep(t *testing.T) {
	c := mustNew(t, Params{ReadNoise: time.Microsecond, Granularity: 10,
		Steps: []Step{{At: time.Second, By: -time.Millisecond}}})
	prev := c.Read(0)
	for tt := int64(1000); tt < 2e9; tt += 1000 {
		r := c.Read(tt)
		if tt == 1e9 {
			if r > prev-time.Millisecond.Nanoseconds()+20*time.Microsecond.Nanoseconds() {
				t.Fatalf("Read across a −1ms step: %d → %d, want about 1ms back", prev, r)
			}
		} else if r < prev {
			t.Fatalf("Read(%d) = %d < previous %d without a step", tt, r, prev)
		}
		prev = r
	}
}
