package mpirun

import (
	"math"
	"testing"
)

func TestCountProcessors(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"processor\t: 0\nmodel name\t: X\n\nprocessor\t: 1\nmodel name\t: X\n", 2},
		{"processor : 0\n", 1},
		{"model name : processor 9000\n", 0},
		{"", 0},
	} {
		if got := CountProcessors([]byte(c.text)); got != c.want {
			t.Errorf("CountProcessors(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestCPUList(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		want string
	}{{nil, ""}, {[]int{0}, "0"}, {[]int{0, 1}, "0-1"}, {[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"}} {
		if got := CPUList(c.cpus); got != c.want {
			t.Errorf("CPUList(%v) = %q, want %q", c.cpus, got, c.want)
		}
	}
}

func TestParseLoadavg(t *testing.T) {
	l, err := ParseLoadavg([]byte("2.92 2.55 3.68 7/124 26727\n"))
	if err != nil || l != [3]float64{2.92, 2.55, 3.68} {
		t.Errorf("ParseLoadavg = %v, %v", l, err)
	}
	for _, bad := range []string{"", "1.0 2.0", "x 1 2 1/2 3", "-1 0 0 1/1 1"} {
		if _, err := ParseLoadavg([]byte(bad)); err == nil {
			t.Errorf("ParseLoadavg(%q): no error", bad)
		}
	}
}

func TestOthersCPUs(t *testing.T) {
	for _, c := range []struct {
		busy      float64
		cpus      int
		span, own float64
		want      float64
	}{
		{1, 2, 10, 20, 0},   // the ranks kept both CPUs busy: nobody else
		{1, 2, 10, 10, 1},   // one CPU's worth was someone else's
		{0.5, 2, 10, 10, 0}, // only the ranks
		{0.25, 4, 1, 2, 0},  // the ranks' rusage ran ahead of /proc/stat's ticks: not below 0
		{0.75, 4, 2, 2.5, 1.75},
	} {
		if got := OthersCPUs(c.busy, c.cpus, c.span, c.own); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("OthersCPUs(%v, %d, %v, %v) = %v, want %v", c.busy, c.cpus, c.span, c.own, got, c.want)
		}
	}
}

// TestHostCPUs: the host's count is at least the rank's binding (a rank
// bound to one core of a 2-CPU host records 2, not 1).
func TestHostCPUs(t *testing.T) {
	host := HostCPUs()
	n, list := RankCPUs()
	if host < 1 || n < 1 || n > host || list == "" {
		t.Errorf("HostCPUs %d, RankCPUs %d (%q): want 1 ≤ rank's ≤ host's", host, n, list)
	}
	h := watchHost().end(1, 1, CPUSeconds())
	if !h.Measured || h.CPUs != host || math.IsNaN(h.LoadStart) || h.Status == "" {
		t.Errorf("watchHost: %+v", h)
	}
}
