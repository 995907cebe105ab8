package kernel

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// recorder records the args of the events it gets, with the time they fired.
type recorder struct {
	k   *Kernel
	got []([2]int64)
}

func (r *recorder) Fire(arg uint64) { r.got = append(r.got, [2]int64{r.k.Now(), int64(arg)}) }

func TestOrderIsTimeThenInsertion(t *testing.T) {
	tests := []struct {
		name  string
		times []int64 // event i is scheduled at times[i], arg i
		want  []int64 // args in firing order
	}{
		{"sorted", []int64{1, 2, 3}, []int64{0, 1, 2}},
		{"reversed", []int64{3, 2, 1}, []int64{2, 1, 0}},
		{"ties keep insertion order", []int64{5, 5, 1, 5, 1}, []int64{2, 4, 0, 1, 3}},
		{"all equal", []int64{7, 7, 7, 7}, []int64{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &Kernel{}
			r := &recorder{k: k}
			for i, at := range tc.times {
				if err := k.At(at, r, uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			k.RunUntil(100)
			var args []int64
			for _, g := range r.got {
				args = append(args, g[1])
			}
			if !slices.Equal(args, tc.want) {
				t.Fatalf("fired %v, want %v", args, tc.want)
			}
			if k.Now() != 100 {
				t.Fatalf("Now = %d after RunUntil(100)", k.Now())
			}
		})
	}
}

func TestRandomScheduleMatchesSort(t *testing.T) {
	k := &Kernel{}
	r := &recorder{k: k}
	src := rand.New(rand.NewPCG(1, 2))
	type ev struct{ at, arg int64 }
	var want []ev
	for i := range 5000 {
		at := src.Int64N(1000)
		want = append(want, ev{at, int64(i)})
		_ = k.At(at, r, uint64(i))
	}
	slices.SortStableFunc(want, func(a, b ev) int { return int(a.at - b.at) })
	k.RunUntil(1000)
	if len(r.got) != len(want) {
		t.Fatalf("fired %d events, want %d", len(r.got), len(want))
	}
	for i, g := range r.got {
		if g[0] != want[i].at || g[1] != want[i].arg {
			t.Fatalf("event %d: fired (t=%d, arg=%d), want (t=%d, arg=%d)", i, g[0], g[1], want[i].at, want[i].arg)
		}
	}
}

func TestRunUntilStopsAtBoundary(t *testing.T) {
	k := &Kernel{}
	r := &recorder{k: k}
	for _, at := range []int64{10, 20, 30} {
		_ = k.At(at, r, uint64(at))
	}
	if n := k.RunUntil(20); n != 2 {
		t.Fatalf("RunUntil(20) fired %d, want 2 (events at exactly t fire)", n)
	}
	if next, ok := k.Next(); !ok || next != 30 {
		t.Fatalf("Next = %d, %v; want 30, true", next, ok)
	}
	if err := k.At(19, r, 0); !errors.Is(err, ErrPast) {
		t.Fatalf("At(19) at now=20: err = %v, want ErrPast", err)
	}
}

// chain reschedules itself: each firing schedules the next.
type chain struct {
	k     *Kernel
	delay int64
}

func (c *chain) Fire(arg uint64) { c.k.After(c.delay+int64(arg&7), c, arg+1) }

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	k := &Kernel{}
	cs := make([]*chain, 64)
	for i := range cs {
		cs[i] = &chain{k: k, delay: int64(i + 1)}
		k.After(int64(i), cs[i], 0)
	}
	k.RunUntil(10_000) // warm up: the queue reaches its working size
	allocs := testing.AllocsPerRun(100, func() { k.RunUntil(k.Now() + 1000) })
	if allocs != 0 {
		t.Fatalf("%.1f allocations per 1000ns of virtual time, want 0", allocs)
	}
}
