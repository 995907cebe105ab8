package phasegap

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// runRingWith runs p with o on a memRing of p.Ranks ranks and returns
// each rank's result and error.
func runRingWith(p Params, o RunOptions) ([]*Result, []error) {
	m := newMemRing(p.Ranks)
	out := make([]*Result, p.Ranks)
	errs := make([]error, p.Ranks)
	var wg sync.WaitGroup
	for r := range p.Ranks {
		wg.Go(func() { out[r], errs[r] = RunWith(m.comm(r), p, o) })
	}
	wg.Wait()
	return out, errs
}

// ghostFault adds delta to (or, delta NaN, sets) rank's last left ghost
// cell after the unpack at iteration at.
func ghostFault(rank, at int, delta float64) faultHook {
	return func(rk, it int, a []float64, h, _ int) {
		if rk == rank && it == at {
			if math.IsNaN(delta) {
				a[h-1] = delta
			} else {
				a[h-1] += delta
			}
		}
	}
}

// TestCheckCatchesHaloBug: a corrupted ghost cell (an injected halo bug)
// passes unnoticed without --check, and fails the run at the next check
// with it: the rank, iteration, cell, expected and got named, the other
// rank failing with ErrPeerFailed.
func TestCheckCatchesHaloBug(t *testing.T) {
	for _, mode := range Modes() {
		p := DefaultParams()
		p.Mode, p.Ranks, p.Threads, p.N, p.Halo, p.Iters, p.Warmup, p.CheckEvery, p.PureComm = mode, 2, 2, 200, 4, 12, 3, 5, 1
		fault := ghostFault(1, p.Warmup+4, 1) // measured iteration 4: the first check follows it
		p.Check = false
		if _, errs := runRingWith(p, RunOptions{fault: fault}); errs[0] != nil || errs[1] != nil {
			t.Fatalf("%s without --check: %v", mode, errs)
		}
		p.Check = true
		_, errs := runRingWith(p, RunOptions{fault: fault})
		var ce *CheckError
		if !errors.As(errs[1], &ce) || ce.Rank != 1 || ce.Iter != p.Warmup+4 || ce.Cell != p.N || ce.Kind != "mismatch" || ce.Got-ce.Expected != s3c1 {
			t.Fatalf("%s: rank 1: %v (%+v), want a mismatch at iteration %d, cell %d, got − expected = %v", mode, errs[1], ce, p.Warmup+4, p.N, s3c1)
		}
		if !errors.Is(errs[0], ErrPeerFailed) {
			t.Errorf("%s: rank 0: %v, want ErrPeerFailed", mode, errs[0])
		}
		msg := errs[1].Error()
		for _, want := range []string{"rank 1", "iteration 7", "cell 200", "expected 0.", "got 0."} {
			if !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("%s: %q: want one line with %q", mode, msg, want)
			}
		}
	}
}

// TestPoisonGhostReportsNaN: a ghost cell left NaN by the unpack (an
// injected bug under --poison_ghost) fails the run at that iteration,
// naming the rank and the cell, with or without --check.
func TestPoisonGhostReportsNaN(t *testing.T) {
	for _, check := range []bool{false, true} {
		p := DefaultParams()
		p.Ranks, p.N, p.Halo, p.Iters, p.Warmup, p.PoisonGhost, p.Check = 1, 100, 3, 10, 2, true, check
		_, errs := runRingWith(p, RunOptions{fault: ghostFault(0, 6, math.NaN())})
		var ce *CheckError
		if !errors.As(errs[0], &ce) || ce.Kind != "NaN read" || !ce.Ghost || ce.Iter != 6 || ce.Cell != p.Halo-1 {
			t.Fatalf("check %v: %v (%+v), want a NaN read of ghost cell %d at iteration 6", check, errs[0], ce, p.Halo-1)
		}
		if msg := errs[0].Error(); !strings.Contains(msg, "rank 0, iteration 6: NaN read: ghost cell 2") {
			t.Errorf("%q", msg)
		}
	}
}

// TestSerialRefWindow: the recomputation on a cone narrower than the
// ring (window mode) agrees with every mode's run, for every kernel.
func TestSerialRefWindow(t *testing.T) {
	for _, kernel := range Kernels() {
		p := DefaultParams()
		p.Ranks, p.Threads, p.N, p.Halo, p.Timesteps, p.Iters, p.Warmup, p.CheckEvery, p.Kernel = 3, 2, 300, 6, 3, 9, 2, 4, kernel
		if ref := newSerialRef(kernel, 2, 1, 3, p.N, (p.Warmup+p.Iters)*p.Timesteps); ref.whole && kernel != KernelAxpy {
			t.Fatalf("%s: the cone covers the whole ring; the test wants a window", kernel)
		}
		res, errs := runRingWith(p, RunOptions{})
		for r, err := range errs {
			if err != nil || len(res[r].Checks) != 3 {
				t.Fatalf("%s: rank %d: %v", kernel, r, err)
			}
		}
	}
}

// TestWatchdog: no beat for longer than the limit calls onStall once,
// with the iteration and stage; regular beats never do.
func TestWatchdog(t *testing.T) {
	got := make(chan error, 2)
	w := startWatchdog(3, 50*time.Millisecond, false, func(err error) { got <- err })
	for i := range 20 {
		w.progress(i, stageIter)
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-got:
		t.Fatalf("stall reported while beating: %v", err)
	default:
	}
	select {
	case err := <-got:
		var se *StallError
		if !errors.As(err, &se) || se.Rank != 3 || se.Iter != 19 || se.Phase != "iteration" || se.Elapsed < 50*time.Millisecond {
			t.Errorf("%v (%+v)", err, se)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no stall reported 5 s after the last beat")
	}
	w.close()
	if startWatchdog(0, 0, false, func(error) {}) != nil {
		t.Error("--stall_timeout 0 started a watchdog")
	}
	if autoLimit(100e6) != 2*time.Second || autoLimit(1e6) != StallFloor || autoLimit(0) != StallNoWarmup {
		t.Errorf("autoLimit: %v %v %v", autoLimit(100e6), autoLimit(1e6), autoLimit(0))
	}
}

// TestStallInRun: a rank held for 1.5 s in iteration 5 makes its
// neighbour's watchdog (limit 200 ms) report the stall at iteration 5;
// the run then completes.
func TestStallInRun(t *testing.T) {
	p := DefaultParams()
	p.Ranks, p.N, p.Iters, p.Warmup, p.StallTimeout = 2, 1000, 10, 2, 200*time.Millisecond
	var mu sync.Mutex
	var stalls []*StallError
	hold := func(rk, it int, _ []float64, _, _ int) {
		if rk == 1 && it == 5 {
			time.Sleep(1500 * time.Millisecond)
		}
	}
	_, errs := runRingWith(p, RunOptions{fault: hold, OnStall: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		var se *StallError
		if errors.As(err, &se) {
			stalls = append(stalls, se)
		}
	}})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	found := false
	for _, se := range stalls {
		found = found || se.Rank == 0 && se.Phase == "iteration" && se.Iter >= 5 && se.Iter <= 6 && se.Limit == p.StallTimeout
	}
	if !found {
		t.Errorf("stalls %+v, want rank 0's at iteration 5 or 6", stalls)
	}
}
