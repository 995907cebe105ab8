package hostload

import (
	"strings"
	"testing"
	"time"
)

func TestParseCPUTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want CPUTimes
		err  string
	}{
		{"two cpus", "cpu  10 1 5 100 4 2 3 7 0 0\ncpu0 5 0 2 50 2 1 1 3 0 0\ncpu1 5 1 3 50 2 1 2 4 0 0\nintr 1\n", CPUTimes{Busy: 28, Idle: 104, Steal: 7, CPUs: 2}, ""},
		{"whole file", "cpu  1000 100 400 2000 300 50 50 100 0 0\ncpu0 500 50 200 1000 150 25 25 50 0 0\ncpu1 500 50 200 1000 150 25 25 50 0 0\nintr 199292350 24 10 0 0 0\nctxt 383098045\nprocs_running 5\n",
			CPUTimes{Busy: 1700, Idle: 2300, Steal: 100, CPUs: 2}, ""},
		{"empty", "", CPUTimes{}, "no cpu line"},
		{"no cpu line", "cpu0 1 2 3 4 5 6 7 8\n", CPUTimes{}, "no cpu line"},
		{"no cpuN lines", "cpu 1 2 3 4 5 6 7 8\n", CPUTimes{}, "no cpuN lines"},
		{"short cpu line", "cpu 1 2 3\ncpu0 1 2 3\n", CPUTimes{}, "fields"},
		{"not a number", "cpu 1 2 3 4 5 6 7 x\ncpu0 1\n", CPUTimes{}, "cpu line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPUTimes([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParsePressure(t *testing.T) {
	n, err := parsePressure([]byte("some avg10=57.87 avg60=74.98 avg300=52.21 total=3672086266\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if err != nil || n != 3672086266 {
		t.Errorf("got %d, %v", n, err)
	}
	if _, err := parsePressure([]byte("full total=1\n")); err == nil {
		t.Error("no some line: want an error")
	}
}

// TestOwnCPU: a process that spins for 200 ms reads about one CPU of its
// own (less on a busy machine, never more), and the machine's counters
// come back where the kernel has them.
func TestOwnCPU(t *testing.T) {
	s := Take()
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	r := s.Since()
	if r.OwnCPU <= 0.01 || r.OwnCPU > 1.2 {
		t.Errorf("own CPU %.2f after spinning one goroutine, want about 1", r.OwnCPU)
	}
	if r.CPUs < 1 || r.Busy <= 0 || r.Busy > 1 {
		t.Errorf("reading %+v: want CPUs ≥ 1 and a busy share in (0, 1]", r)
	}
}

func TestParseMemAvailable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n", 23000000 << 10, ""},
		{"MemTotal: 1 kB\n", 0, "no MemAvailable line"},
		{"MemAvailable: lots kB\n", 0, "malformed line"},
		{"MemAvailable: -5 kB\n", 0, "malformed line"},
	} {
		got, err := ParseMemAvailable([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
