package phasegap

import (
	"sync"
	"testing"
)

// TestGather: rank 0 receives every rank's summary and the last traced
// iterations, intact; the other ranks receive nothing.
func TestGather(t *testing.T) {
	p := DefaultParams()
	p.Ranks, p.Threads, p.N, p.Iters, p.Warmup = 3, 2, 300, 12, 1
	m := newMemRing(p.Ranks)
	got := make([]*Gathered, p.Ranks)
	res := make([]*Result, p.Ranks)
	var wg sync.WaitGroup
	for r := range p.Ranks {
		wg.Go(func() {
			c := m.comm(r)
			var err error
			if res[r], err = Run(c, p); err != nil {
				t.Error(err)
				return
			}
			if got[r], err = Gather(c, res[r], 5); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got[1] != nil || got[2] != nil {
		t.Fatal("ranks other than 0 received the gather")
	}
	g := got[0]
	if len(g.Summaries) != 3 || len(g.Ranks) != 3 {
		t.Fatalf("rank 0 holds %d summaries, %d ranks' samples; want 3 and 3", len(g.Summaries), len(g.Ranks))
	}
	for r, rk := range g.Ranks {
		if rk.Rank != r || g.Summaries[r].Rank != 0 && g.Summaries[r].Rank != r {
			t.Errorf("rank %d arrived as %d", r, rk.Rank)
		}
		want := res[r].Rank.Samples[len(res[r].Rank.Samples)-5:]
		if len(rk.Samples) != 5 {
			t.Fatalf("rank %d: %d samples, want the last 5", r, len(rk.Samples))
		}
		for i, s := range rk.Samples {
			w := want[i]
			if s.Iter != w.Iter || s.Total != w.Total || s.CommEnd != w.CommEnd || s.Threads[1] != w.Threads[1] || s.TestCalls != w.TestCalls {
				t.Errorf("rank %d sample %d: %+v, want %+v", r, i, s, w)
			}
		}
	}
}
