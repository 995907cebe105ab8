package phasegap

import (
	"math"
	"strings"
	"sync"
	"testing"
)

// runRing runs p on a memRing of p.Ranks ranks and returns each rank's
// result.
func runRing(t *testing.T, p Params) []*Result {
	t.Helper()
	m := newMemRing(p.Ranks)
	out := make([]*Result, p.Ranks)
	errs := make([]error, p.Ranks)
	var wg sync.WaitGroup
	for r := range p.Ranks {
		wg.Go(func() { out[r], errs[r] = Run(m.comm(r), p) })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// reference steps the whole ring (P×N points, periodic) serially, as
// many times as a run does, and returns the checksum every rank's run
// must agree on.
func reference(p Params) uint64 {
	n := p.Ranks * p.N
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = float64(i*7919%1000) / 1000
	}
	at := func(i int) float64 { return a[(i%n+n)%n] }
	for range (p.Warmup + p.Iters) * p.Timesteps {
		for i := range b {
			switch p.Kernel {
			case KernelStencil5:
				b[i] = s5c0*at(i) + s5c1*(at(i-1)+at(i+1)) + s5c2*(at(i-2)+at(i+2))
			case KernelAxpy:
				b[i] = axA*at(i) + axB
			default:
				b[i] = s3c0*at(i) + s3c1*(at(i-1)+at(i+1))
			}
		}
		a, b = b, a
	}
	var sum uint64
	for _, v := range a {
		sum += math.Float64bits(v)
	}
	return sum
}

// TestAgreesWithSerial: every mode, with any thread count, timesteps,
// kernel and rank count, ends with the serial computation's values
// (checksum of the whole ring), ghost zones poisoned or not.
func TestAgreesWithSerial(t *testing.T) {
	for _, tc := range []struct {
		ranks, threads, steps, halo, n int
		kernel                         string
	}{
		{1, 1, 1, 1, 64, KernelStencil3},
		{2, 2, 1, 4, 100, KernelStencil3},
		{3, 3, 2, 4, 37, KernelStencil3},
		{2, 2, 3, 6, 50, KernelStencil5},
		{4, 1, 2, 5, 9, KernelStencil5}, // N < 2B: no interior
		{2, 3, 1, 0, 20, KernelAxpy},
	} {
		for i, mode := range Modes() {
			p := DefaultParams()
			p.Mode, p.Ranks, p.Threads, p.Timesteps, p.Halo, p.N, p.Kernel = mode, tc.ranks, tc.threads, tc.steps, tc.halo, tc.n, tc.kernel
			p.Iters, p.Warmup, p.CheckEvery, p.PollEvery, p.PureComm, p.PoisonGhost = 7, 2, 3, 5, 2, true
			// Every schedule, and the progress thread, somewhere.
			p.Schedule = []string{"static", "dynamic", "guided"}[(i+tc.n)%3]
			p.Chunk = tc.n % 7
			if (i+tc.ranks)%2 == 0 && mode != ModeBlk {
				p.Progress = "progress_thread"
			}
			want := reference(p)
			for r, res := range runRing(t, p) {
				if len(res.Checks) != 3 || res.Rank.Checksum != want {
					t.Errorf("%s %s %s %+v rank %d: checks %x, want 3 ending in %x", mode, p.Schedule, p.Progress, tc, r, res.Checks, want)
				}
			}
		}
	}
}

// TestPollCounts: nb_test and omp_tasks test the exchange while they
// compute and record how many tests it took; the other modes never test.
func TestPollCounts(t *testing.T) {
	for _, mode := range Modes() {
		p := DefaultParams()
		p.Mode, p.Ranks, p.Threads, p.N, p.PollEvery, p.Iters = mode, 2, 2, 20000, 500, 20
		res := runRing(t, p)[0]
		tests, done := 0, 0
		for _, s := range res.Rank.Samples {
			tests += s.TestCalls
			if s.PollsToComplete > 0 {
				done++
			}
			if s.Total != s.Post+s.Interior+s.Wait+s.Boundary {
				t.Fatalf("%s: iteration %d: phases %d+%d+%d+%d != total %d", mode, s.Iter, s.Post, s.Interior, s.Wait, s.Boundary, s.Total)
			}
		}
		polls := mode == ModeNBTest || mode == ModeTasks
		if polls != (tests > 0) || polls && done == 0 {
			t.Errorf("%s: %d tests, %d iterations completed by a test", mode, tests, done)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Params)
		size int
		want string
	}{
		{func(p *Params) { p.Mode = "fast" }, 1, `--mode "fast": expected one of [phase_nb phase_blk nb_test phase_persist omp_tasks]`},
		{func(p *Params) { p.Kernel = "fft" }, 1, `--kernel "fft"`},
		{func(p *Params) { p.Threads = 0 }, 1, "--threads 0: expected 1 to 1024"},
		{func(p *Params) { p.Ranks = 4 }, 2, "--ranks 4, but the communicator has 2 ranks (mpirun -np 4)"},
		{func(p *Params) { p.Halo, p.Timesteps = 3, 2; p.Kernel = KernelStencil5 }, 1, "--halo 3 is smaller than B = radius × timesteps = 2 × 2 = 4"},
		{func(p *Params) { p.Radius = 1; p.Kernel = KernelStencil5 }, 1, "--radius 1 is smaller than kernel stencil5's own radius 2"},
		{func(p *Params) { p.Halo, p.N = 20, 10 }, 1, "--halo 20 is wider than the 10 points a rank owns"},
		{func(p *Params) { p.Sync = "often" }, 1, `--sync "often"`},
	} {
		p := DefaultParams()
		tc.edit(&p)
		_, err := p.Validate(tc.size)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	p := DefaultParams()
	if d, err := p.Validate(1); err != nil || d.B != 1 || d.Interior != p.N-2 {
		t.Errorf("defaults: %+v, %v", d, err)
	}
}
