//go:build rocm

package rocm

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOpen expects no AMD GPU (the CI machines have none): Open must fail at
// once with a clear hsa_init error. On a machine with a GPU it checks the
// clock instead and reports the test as skipped, so that the unexpected
// success is visible.
func TestOpen(t *testing.T) {
	c, err := Open()
	if err != nil {
		t.Logf("Open: %v", err)
		if !strings.Contains(err.Error(), "hsa_init") {
			t.Errorf("Open error %q does not mention hsa_init", err)
		}
		if !errors.Is(err, ErrNoDevice) {
			t.Errorf("Open error %q does not wrap ErrNoDevice", err)
		}
		var se *StatusError
		if !errors.As(err, &se) || se.Status == 0 || se.Name == "" {
			t.Errorf("Open error %q does not carry an HSA status: %+v", err, se)
		}
		return
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	checkClock(t, c)
	t.Skip("Open succeeded: this machine has a usable AMD GPU; clock checked, failure path not tested")
}

// checkClock checks that c is monotonic and advances at the rate of the
// host's monotonic clock, within 1%.
func checkClock(t *testing.T, c *Clock) {
	t.Helper()
	start, hostStart := c.Now(), time.Now()
	prev := start
	for i := 0; i < 1000; i++ {
		now := c.Now()
		if now < prev {
			t.Fatalf("Now went backwards: %d after %d", now, prev)
		}
		prev = now
	}
	time.Sleep(200 * time.Millisecond)
	elapsed, hostElapsed := c.Now()-start, time.Since(hostStart)
	if ratio := float64(elapsed) / float64(hostElapsed); ratio < 0.99 || ratio > 1.01 {
		t.Errorf("HSA clock advanced %v while the host's advanced %v (ratio %.4f)", time.Duration(elapsed), hostElapsed, ratio)
	}
}
