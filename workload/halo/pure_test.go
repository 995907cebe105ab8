package halo

import (
	"math"
	"testing"
	"time"

	"github.com/chronosync/chronosync/phasegap"
)

// TestPureCommPass: after the measured iterations each rank times
// PureComm exchanges with nothing between post and wait (the first, which
// absorbs the ranks' drift, untimed), so a model run has t_pure_comm and
// hidden_frac as an MPI run has. On 1 ms links, the pure exchange is the
// link's delay plus the calls.
func TestPureCommPass(t *testing.T) {
	const delay = time.Millisecond
	for _, mode := range phasegap.Modes() {
		p := params(mode, 2, 1)
		p.PureComm = 7
		row, ranks := runSim(t, p, DefaultCosts(), delay, 0)
		for _, r := range ranks {
			if len(r.PureComm) != p.PureComm {
				t.Fatalf("%s rank %d: %d pure exchanges timed, want %d", mode, r.Rank, len(r.PureComm), p.PureComm)
			}
			for i, d := range r.PureComm {
				if d < int64(delay) || d > int64(delay+20*time.Microsecond) {
					t.Errorf("%s rank %d: pure exchange %d took %v, want the 1 ms delay plus a few calls", mode, r.Rank, i, time.Duration(d))
				}
			}
		}
		if math.IsNaN(row.HiddenFrac) || row.HiddenFrac < 0 || row.HiddenFrac > 1 {
			t.Errorf("%s: hidden_frac %v, want a share", mode, row.HiddenFrac)
		}
	}
	p := params(phasegap.ModeNB, 2, 1)
	p.PureComm = 0
	row, ranks := runSim(t, p, DefaultCosts(), delay, 0)
	if len(ranks[0].PureComm) != 0 || !math.IsNaN(row.HiddenFrac) {
		t.Errorf("--pure-comm 0: %d pure exchanges, hidden_frac %v; want none and an empty figure", len(ranks[0].PureComm), row.HiddenFrac)
	}
}

// TestHiddenFracFalls: as more threads shrink the interior below the
// link's 1 ms, phase_nb's exposed wait grows: hidden_frac falls with T,
// while the plan's overlap_ratio stays at 1 (the comm window always holds
// the interior), and phase_blk hides nothing at any T.
func TestHiddenFracFalls(t *testing.T) {
	const delay = time.Millisecond
	costs := DefaultCosts()
	prev := 2.0
	for _, c := range []struct {
		threads  int
		min, max float64 // hidden_frac's bounds: interior 1.91 ms / T against 1 ms
	}{{1, 0.99, 1}, {2, 0.85, 0.99}, {4, 0.4, 0.55}, {8, 0.15, 0.3}} {
		p := params(phasegap.ModeNB, 2, c.threads)
		p.Flops = 20
		row, _ := runSim(t, p, costs, delay, 0)
		t.Logf("T=%d interior %.0f µs wait %.0f µs pure %.0f µs: overlap_ratio %.3f hidden_frac %.3f",
			c.threads, row.TInterior.Avg, row.TWait.Avg, row.TPureCommMean, row.OverlapRatio, row.HiddenFrac)
		if row.HiddenFrac < c.min || row.HiddenFrac > c.max || row.HiddenFrac >= prev && c.threads > 1 {
			t.Errorf("T=%d: hidden_frac %.3f, want %.2f to %.2f and below T/2's %.3f", c.threads, row.HiddenFrac, c.min, c.max, prev)
		}
		if row.OverlapRatio < 0.99 {
			t.Errorf("T=%d: overlap_ratio %.3f, want 1 (it cannot fall)", c.threads, row.OverlapRatio)
		}
		prev = row.HiddenFrac
		p.Mode = phasegap.ModeBlk
		if row, _ := runSim(t, p, costs, delay, 0); row.HiddenFrac > 0.01 {
			t.Errorf("T=%d phase_blk: hidden_frac %.3f, want 0", c.threads, row.HiddenFrac)
		}
	}
}
