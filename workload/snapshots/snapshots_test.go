package snapshots_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/workload/snapshots"
	"github.com/chronosync/chronosync/world"
)

const (
	us = time.Microsecond
	ms = time.Millisecond
	s  = time.Second
)

// tracerClock is the node's tracer: far off its host clock, with its own
// rate and 10ns ticks.
func tracerClock() clockmodel.TracerParams {
	return clockmodel.TracerParams{Offset: 7 * s, PPM: -15, Granularity: 10, ReadNoise: 5}
}

// node is the one node: its host clock a bit off and drifting.
func node() sim.NodeConfig {
	return sim.NodeConfig{
		Clock:  clockmodel.Params{Offset: 1234 * time.Microsecond, PPM: 42, ReadNoise: 20},
		Tracer: tracerClock(),
	}
}

// run samples on node 0 of a one-node world for d, with the given faults,
// then stops the sampler.
func run(t *testing.T, cfg snapshots.Config, d time.Duration, faults ...sim.Fault) *snapshots.Sampler {
	t.Helper()
	smp, err := snapshots.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(sim.Config{
		Seed:   5,
		Nodes:  []sim.NodeConfig{node()},
		Faults: faults,
	}, func(world.NodeID) world.Program { return smp }, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(d)
	smp.Stop()
	return smp
}

func TestCadence(t *testing.T) {
	tests := []struct {
		name   string
		period time.Duration
		run    time.Duration
		want   int // samples, the one at Stop included
	}{
		{"default period", 0, 22 * s, 7},       // 0 4 8 12 16 20 + stop
		{"one second", s, 10500 * ms, 12},      // 0..10 + stop
		{"shorter than a period", 0, 3 * s, 2}, // 0 + stop
		{"fast", 10 * ms, 995 * ms, 101},       // 0..990ms + stop
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			smp := run(t, snapshots.Config{Period: tc.period, Burst: 1}, tc.run)
			period := smp.Config().Period
			pairs := smp.Pairs()
			st := smp.Stats()
			if len(pairs) != tc.want || st != (snapshots.Stats{SnapshotsTaken: tc.want}) {
				t.Fatalf("%d pairs, stats %+v; want %d pairs, none missed or dropped", len(pairs), st, tc.want)
			}
			for i, p := range pairs {
				if i > 0 {
					prev := pairs[i-1]
					if p.Sys <= prev.Sys || p.Tracer <= prev.Tracer {
						t.Errorf("pair %d %+v does not follow %+v in both clocks", i, p, prev)
					}
					if gap := p.Sys.Sub(prev.Sys); i < len(pairs)-1 && (gap < period-ms || gap > period+ms) {
						t.Errorf("pair %d: %v after the previous one, want %v", i, gap, period)
					}
				}
				// Read back to back: R is the tracer's function of S up
				// to read noise and ticks.
				tc := tracerClock()
				want := float64(tc.Offset) + (1+tc.PPM*1e-6)*float64(p.Sys)
				if d := float64(p.Tracer) - want; math.Abs(d) > 200 {
					t.Errorf("pair %d %+v: R is %.0fns off the tracer of S", i, p, d)
				}
			}
		})
	}
}

// TestBurst: each sample is a burst of Burst pairs BurstGap apart, the
// first on the schedule; a Stop mid-burst ends the burst.
func TestBurst(t *testing.T) {
	pairs := run(t, snapshots.Config{Period: s}, 10500*ms).Pairs()
	if len(pairs) != 11*4+1 {
		t.Fatalf("%d pairs, want 11 bursts of 4 and a stop", len(pairs))
	}
	near := func(d, want time.Duration) bool { return d > want-us && d < want+us }
	for i := 1; i < len(pairs)-1; i++ {
		from, want := i-1, ms
		if i%4 == 0 { // a burst's first pair: a period after the last's
			from, want = i-4, s
		}
		if gap := pairs[i].Sys.Sub(pairs[from].Sys); !near(gap, want) {
			t.Errorf("pair %d: %v after pair %d, want %v", i, gap, from, want)
		}
	}
	// The host clock steps back 10s between the second and third pairs of
	// the 4s burst (host time 4.0012s): the schedule re-anchors after the
	// burst and goes on every 4s, bursts at true 0 4 8 12 16 20 (each
	// 3ms after the last, so Stop at 22s is less than half a period late).
	step := sim.Fault{At: 4 * s, Kind: sim.ClockStep, Node: 0, By: -10 * s}
	if got := run(t, snapshots.Config{}, 22*s, step).Stats(); got != (snapshots.Stats{SnapshotsTaken: 6 * 4}) {
		t.Errorf("clock stepped back mid-burst: stats %+v, want 24 pairs taken, none missed", got)
	}
	// Bursts at 0 and 1s, then 2s and 2.01s; stopped 15ms into that burst.
	if got := run(t, snapshots.Config{Period: s, BurstGap: 10 * ms}, 2015*ms).Stats(); got != (snapshots.Stats{SnapshotsTaken: 10}) {
		t.Errorf("stopped mid-burst: stats %+v, want 10 pairs taken", got)
	}
}

func TestRingBuffer(t *testing.T) {
	all := run(t, snapshots.Config{Period: s}, 10500*ms).Pairs() // 11 bursts of 4 + stop
	for _, capacity := range []int{1, 3, 44, 45, 46} {
		smp := run(t, snapshots.Config{Period: s, Capacity: capacity}, 10500*ms)
		kept := min(capacity, len(all))
		want := snapshots.Stats{SnapshotsTaken: len(all), Dropped: len(all) - kept}
		if st := smp.Stats(); st != want {
			t.Errorf("capacity %d: stats %+v, want %+v", capacity, st, want)
		}
		if got := smp.Pairs(); !slices.Equal(got, all[len(all)-kept:]) {
			t.Errorf("capacity %d: pairs %v, want the newest %d of %v", capacity, got, kept, all)
		}
	}
}

func TestMissedDeadline(t *testing.T) {
	tests := []struct {
		name        string
		fault       sim.Fault
		taken, miss int
	}{
		// Samples at 4s and 8s run 1s late.
		{"slow for two samples", sim.Fault{At: 3 * s, Kind: sim.SlowNode, ExtraDelay: s, For: 6 * s}, 7, 2},
		// The 4s sample runs at 13s: it is late and the 8s and 12s slots
		// are skipped.
		{"slow past two periods", sim.Fault{At: 3 * s, Kind: sim.SlowNode, ExtraDelay: 9 * s, For: 2 * s}, 5, 3},
		// 300ms late is within the default tolerance of 400ms.
		{"within tolerance", sim.Fault{At: 3 * s, Kind: sim.SlowNode, ExtraDelay: 300 * ms, For: 2 * s}, 7, 0},
		// A forward step looks like lateness: the 8s sample reads 17s, and
		// the slots of 12s and 16s are skipped.
		{"clock steps forward", sim.Fault{At: 5 * s, Kind: sim.ClockStep, Node: 0, By: 9 * s}, 7, 3},
		// A backward step re-anchors the schedule: still every 4s.
		{"clock steps back", sim.Fault{At: 5 * s, Kind: sim.ClockStep, Node: 0, By: -10 * s}, 7, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := run(t, snapshots.Config{Burst: 1}, 22*s, tc.fault).Stats()
			if want := (snapshots.Stats{SnapshotsTaken: tc.taken, MissedDeadline: tc.miss}); st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
}

func TestStop(t *testing.T) {
	smp, err := snapshots.New(snapshots.Config{})
	if err != nil {
		t.Fatal(err)
	}
	smp.Stop() // before Start: nothing
	if st := smp.Stats(); st != (snapshots.Stats{}) {
		t.Fatalf("stop before start: stats %+v", st)
	}
	smp = run(t, snapshots.Config{}, 11*s) // bursts at 0 4 8 + stop at 11
	smp.Stop()
	if got := smp.Stats().SnapshotsTaken; got != 13 {
		t.Errorf("%d pairs after two stops, want 13", got)
	}
	// A stop less than half a period after the last sample adds none,
	// however young its burst's last pair.
	if got := run(t, snapshots.Config{}, 9*s).Stats().SnapshotsTaken; got != 12 {
		t.Errorf("stop 1s after the last sample: %d pairs, want 12 (0 4 8)", got)
	}
	if got := run(t, snapshots.Config{Period: s, Burst: 3, BurstGap: 60 * ms}, 3500*ms).Stats().SnapshotsTaken; got != 13 {
		t.Errorf("stop 0.5s after the last sample, 0.38s after its last pair: %d pairs, want 13 (bursts at 0 1 2 3 + stop)", got)
	}
	p := smp.Pairs()
	p[0] = snapshots.Pair{}
	if smp.Pairs()[0] == (snapshots.Pair{}) {
		t.Error("Pairs returned the ring buffer itself")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  snapshots.Config
		want string // substring of the error; "" for valid
	}{
		{"defaults", snapshots.Config{}, ""},
		{"explicit", snapshots.Config{Period: ms, Capacity: 1, Tolerance: 1}, ""},
		{"negative period", snapshots.Config{Period: -s}, "Period is -1s"},
		{"negative capacity", snapshots.Config{Capacity: -1}, "Capacity is -1"},
		{"negative tolerance", snapshots.Config{Tolerance: -ms}, "Tolerance is -1ms"},
		{"negative burst", snapshots.Config{Burst: -1}, "Burst is -1"},
		{"negative burst gap", snapshots.Config{BurstGap: -ms}, "burst of 4 pairs -1ms apart"},
		{"burst too long", snapshots.Config{Period: s, Burst: 3, BurstGap: 63 * ms}, "spans more than Period/8 (125ms)"},
		{"burst just fits", snapshots.Config{Period: s, Burst: 3, BurstGap: 62500 * us}, ""},
		{"one pair, any gap", snapshots.Config{Burst: 1, BurstGap: -ms}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshots.New(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ in, want snapshots.Config }{
		{snapshots.Config{Period: s}, snapshots.Config{Period: s, Capacity: snapshots.DefaultCapacity, Tolerance: 100 * ms, Burst: 4, BurstGap: ms}},
		// A short period shortens the gap: the burst spans Period/8.
		{snapshots.Config{Period: 24 * ms, Burst: 4}, snapshots.Config{Period: 24 * ms, Capacity: snapshots.DefaultCapacity, Tolerance: 2400 * us, Burst: 4, BurstGap: ms}},
		{snapshots.Config{Period: 12 * ms}, snapshots.Config{Period: 12 * ms, Capacity: snapshots.DefaultCapacity, Tolerance: 1200 * us, Burst: 4, BurstGap: 500 * us}},
		{snapshots.Config{Burst: 1}, snapshots.Config{Period: 4 * s, Capacity: snapshots.DefaultCapacity, Tolerance: 400 * ms, Burst: 1}},
	} {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("defaults of %+v: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
