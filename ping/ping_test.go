package ping

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

func TestExchangeMath(t *testing.T) {
	tests := []struct {
		name           string
		t1, t2, t3, t4 world.Time
		offset, delay  time.Duration
	}{
		// Peer 1000ns ahead, 50ns each way, 10ns turnaround.
		{"symmetric", 0, 1050, 1060, 110, 1000, 100},
		// Same clocks, 30ns out and 70ns back: the estimate is off by
		// half the asymmetry.
		{"asymmetric", 0, 30, 30, 100, -20, 100},
		{"peer behind", 5000, 4100, 4200, 5300, -1000, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Exchange{T1: tc.t1, T2: tc.t2, T3: tc.t3, T4: tc.t4}
			if e.Offset() != tc.offset || e.Delay() != tc.delay {
				t.Fatalf("offset %v delay %v, want %v and %v", e.Offset(), e.Delay(), tc.offset, tc.delay)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Interval: 0, Payload: 64}, {Interval: time.Second, Payload: HeaderSize - 1}} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
