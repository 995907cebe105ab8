package phasegap

import (
	"fmt"
	"testing"
	"time"

	"github.com/chronosync/chronosync/phasegap/report"
)

// newRank sets up rank 0 of a ring of one (its halos its own, exchanged
// without allocating) for p.
func newRank(t testing.TB, p Params) *rank {
	t.Helper()
	c := newMemRing(1).comm(0)
	d, err := p.Validate(1)
	if err != nil {
		t.Fatal(err)
	}
	r := &rank{c: c, p: p, d: d, k: kernel{name: p.Kernel, flops: p.Flops, reads: p.Bytes / 8}}
	if err := r.setup(); err != nil {
		t.Fatal(err)
	}
	if r.team, err = newTeam(p.Threads, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.team.close)
	return r
}

// TestTimedLoopAllocatesNothing: an iteration of every mode, on one
// thread or three, allocates nothing.
func TestTimedLoopAllocatesNothing(t *testing.T) {
	for _, mode := range Modes() {
		for _, threads := range []int{1, 3} {
			p := DefaultParams()
			p.Mode, p.Threads, p.N, p.Timesteps, p.Halo, p.PollEvery = mode, threads, 5000, 2, 4, 700
			r := newRank(t, p)
			s := report.Sample{Threads: make([]report.Span, threads)}
			it := 0
			if n := testing.AllocsPerRun(50, func() {
				if err := r.iterate(it, &s); err != nil {
					t.Fatal(err)
				}
				it++
			}); n != 0 {
				t.Errorf("%s, %d threads: %.1f allocations per iteration, want 0", mode, threads, n)
			}
		}
	}
}

// BenchmarkTimedLoop: what the timed loop costs beyond its computation.
// One iteration of phase_nb on one thread (its exchange with itself a
// copy of the halos) against a bare loop of the same kernel over the same
// points, both measured in the same run: overhead-ns/iter is the
// harness's own cost per iteration (timestamps, phases, the halo copies,
// the fork of a team of one).
func BenchmarkTimedLoop(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			p := DefaultParams()
			p.N, p.Halo = n, 16
			r := newRank(b, p)
			s := report.Sample{Threads: make([]report.Span, 1)}
			src, dst := make([]float64, n+2*p.Halo), make([]float64, n+2*p.Halo)
			var sk sink
			b.ReportAllocs()
			b.ResetTimer()
			// Interleaved, so that both see the same machine.
			var loop, bare time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := r.iterate(i, &s); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				r.k.update(dst, src, p.Halo, p.Halo+n, &sk)
				src, dst = dst, src
				loop, bare = loop+t1.Sub(t0), bare+time.Since(t1)
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
			b.ReportMetric(per(loop), "ns/iter")
			b.ReportMetric(per(bare), "bare-ns/iter")
			b.ReportMetric(per(loop)-per(bare), "overhead-ns/iter")
		})
	}
}

// BenchmarkTeamFork: the cost of one fork/join of a team of T threads
// with nothing to compute, PhaseGap's equivalent of an OpenMP parallel
// region's barrier (S+0 of them per iteration: one per interior step).
func BenchmarkTeamFork(b *testing.B) {
	for _, threads := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("T=%d", threads), func(b *testing.B) {
			tm, err := newTeam(threads, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tm.close()
			f := func(int) {}
			b.ReportAllocs()
			for b.Loop() {
				tm.fork(f)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/fork")
		})
	}
}
