package halo

import (
	"crypto/sha256"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// runSim runs p on ranks simulated ranks joined by links of delay, and
// returns the aggregated row and every rank's samples.
func runSim(t *testing.T, p phasegap.Params, costs Costs, delay time.Duration, bitsPerSecond uint64) (report.Row, []report.Rank) {
	t.Helper()
	cfg := sim.Config{Seed: 1, DefaultLink: netem.Params{Delay: delay, Rate: netem.Rate{BitsPerSecond: bitsPerSecond}}}
	cfg.Nodes = make([]sim.NodeConfig, p.Ranks)
	var ranks []*Rank
	w, err := sim.New(cfg, func(world.NodeID) world.Program {
		r, err := New(p, p.Ranks, costs)
		if err != nil {
			t.Fatal(err)
		}
		ranks = append(ranks, r)
		return r
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(10 * time.Second)
	var sums []report.RankSummary
	var out []report.Rank
	for i, r := range ranks {
		if !r.Done() || r.Err() != nil {
			t.Fatalf("rank %d: done %v, err %v", i, r.Done(), r.Err())
		}
		out = append(out, r.Result())
		sums = append(sums, report.Summarize(r.Result()))
	}
	return report.Aggregate(report.Config{Params: p}, sums, 0), out
}

func params(mode string, ranks, threads int) phasegap.Params {
	p := phasegap.DefaultParams()
	p.Mode, p.Ranks, p.Threads, p.N, p.Halo, p.Iters, p.Warmup, p.PollEvery = mode, ranks, threads, 100_000, 64, 40, 5, 5000
	return p
}

// TestModes: in virtual time, phase_blk hides nothing; the nonblocking
// modes hide an exchange shorter than the interior; nb_test and omp_tasks
// test while they compute.
func TestModes(t *testing.T) {
	for _, mode := range phasegap.Modes() {
		row, _ := runSim(t, params(mode, 4, 2), DefaultCosts(), 20*time.Microsecond, 0)
		t.Logf("%-13s iter %.1f µs interior %.1f wait %.2f comm %.1f overlap %.3f tests %.1f", mode, row.TIterMean, row.TInterior.Avg, row.TWait.Avg, row.TCommWindow.Avg, row.OverlapRatio, row.MPITestCallsMean)
		switch mode {
		case phasegap.ModeBlk:
			if row.OverlapRatio > 0.05 {
				t.Errorf("phase_blk: overlap %.3f", row.OverlapRatio)
			}
		default:
			if row.OverlapRatio < 0.5 {
				t.Errorf("%s: overlap %.3f, want most of the exchange hidden", mode, row.OverlapRatio)
			}
		}
		if polls := mode == phasegap.ModeNBTest || mode == phasegap.ModeTasks; polls != (row.MPITestCallsMean > 0) {
			t.Errorf("%s: %.1f tests per iteration", mode, row.MPITestCallsMean)
		}
	}
}

// TestRendezvousNeedsProgress: a halo above the eager limit goes by
// rendezvous, which moves only inside MPI calls: phase_nb then exposes
// the whole transfer after the interior, and a progress thread hides it
// again.
func TestRendezvousNeedsProgress(t *testing.T) {
	p := params(phasegap.ModeNB, 2, 1)
	p.Halo = 20_000             // 160 kB: rendezvous
	const rate = 10_000_000_000 // 10 Gbit/s: 16 µs a halo
	inline, _ := runSim(t, p, DefaultCosts(), 20*time.Microsecond, rate)
	p.Progress = "progress_thread"
	thread, _ := runSim(t, p, DefaultCosts(), 20*time.Microsecond, rate)
	t.Logf("wait: inline %.1f µs, progress thread %.1f µs", inline.TWait.Avg, thread.TWait.Avg)
	if inline.TWait.Avg < 30 || thread.TWait.Avg > inline.TWait.Avg/4 {
		t.Errorf("wait %.1f µs inline, %.1f µs with a progress thread: want the rendezvous exposed inline (≥ 30 µs) and hidden by the thread", inline.TWait.Avg, thread.TWait.Avg)
	}
}

// TestDeterministic: the same run gives the same samples, byte for byte.
func TestDeterministic(t *testing.T) {
	hash := func() string {
		_, ranks := runSim(t, params(phasegap.ModeNBTest, 3, 2), DefaultCosts(), 30*time.Microsecond, 0)
		return fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%+v", ranks)))
	}
	if a, b := hash(), hash(); a != b {
		t.Errorf("two runs: %s and %s", a, b)
	}
}

// TestLargeRing: 64 ranks of 32 threads, beyond any machine here, run in
// the simulator; with more threads a compute-bound interior shrinks (down
// to the memory ceiling) and the exposed wait of phase_blk stays, so its
// wait fraction grows.
func TestLargeRing(t *testing.T) {
	var fracs []float64
	for _, threads := range []int{1, 32} {
		p := params(phasegap.ModeBlk, 64, threads)
		p.Iters, p.Flops = 20, 32 // compute-bound: the threads shrink the interior
		row, ranks := runSim(t, p, DefaultCosts(), 50*time.Microsecond, 0)
		if len(ranks) != 64 || len(ranks[63].Samples) != 20 {
			t.Fatalf("%d ranks, %d samples on the last", len(ranks), len(ranks[63].Samples))
		}
		fracs = append(fracs, row.WaitFrac)
	}
	if fracs[1] <= fracs[0] {
		t.Errorf("wait_frac %.3f at T=1, %.3f at T=32: want it to grow as the interior shrinks", fracs[0], fracs[1])
	}
}

// TestImbalanceWaits: with an imbalance, the odd rank's interior is
// longer and the even rank waits for it, every iteration: on a 1 µs link
// the average wait grows by half the imbalance, the worst rank's by all of
// it (within the link's µs).
func TestImbalanceWaits(t *testing.T) {
	p := params(phasegap.ModeBlk, 2, 1)
	quiet, _ := runSim(t, p, DefaultCosts(), time.Microsecond, 0)
	c := DefaultCosts()
	c.ImbalanceNS = 20_000
	slow, _ := runSim(t, p, c, time.Microsecond, 0)
	t.Logf("wait avg/max: quiet %.2f/%.2f µs, imbalanced %.2f/%.2f µs", quiet.TWait.Avg, quiet.TWait.Max, slow.TWait.Avg, slow.TWait.Max)
	if d := slow.TWait.Avg - quiet.TWait.Avg; math.Abs(d-10) > 1 {
		t.Errorf("average wait grew %.3f µs, want 10", d)
	}
	if d := slow.TWait.Max - quiet.TWait.Max; math.Abs(d-20) > 1 {
		t.Errorf("worst wait grew %.3f µs, want 20", d)
	}
}
