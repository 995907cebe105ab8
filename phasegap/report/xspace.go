package report

import (
	"fmt"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// RankXSpace is one rank's traced iterations as an XSpace with one plane,
// "/rank:N", so that chronosync combine and validate, and Perfetto (through
// combine's Chrome export), show a PhaseGap run beside GPU traces: line 0,
// "iterations", holds each iteration and its four phases
// (comm_post, interior_compute, waitall, boundary_compute) as the Chrome
// trace's lane 0 does; line t+1 holds thread t's interior spans. Times are
// the rank's clock in ns; the plane's node_id stat is the rank.
func RankXSpace(cfg Config, r Rank) *xplanepb.XSpace {
	b := xspace.NewPlaneBuilder(int64(r.Rank), fmt.Sprintf("/rank:%d", r.Rank))
	b.AddStat(xspace.Int("node_id", int64(r.Rank)))
	b.AddStat(xspace.Str("run_id", cfg.RunID))
	b.AddStat(xspace.Str("phasegap_mode", cfg.Params.Mode))
	b.AddStat(xspace.Int("threads", int64(cfg.Params.Threads)))
	space := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{b.Plane()}, Hostnames: []string{cfg.Hostname}}
	if len(r.Samples) == 0 {
		return space
	}
	t0 := r.Samples[0].Start
	for _, s := range r.Samples {
		t0 = min(t0, s.Start)
		for _, sp := range s.Threads {
			if sp.End > sp.Start {
				t0 = min(t0, sp.Start)
			}
		}
	}
	it := b.Line(0, "iterations", t0)
	for _, s := range r.Samples {
		it.Add("iteration", s.Start, s.Total, xspace.Int("iter", int64(s.Iter)), xspace.Int("mpi_test_calls", int64(s.TestCalls)))
		it.Add("comm_post", s.Start, s.InteriorStart-s.Start)
		it.Add("interior_compute", s.InteriorStart, s.WaitStart-s.InteriorStart)
		it.Add("waitall", s.WaitStart, s.BoundaryStart-s.WaitStart)
		it.Add("boundary_compute", s.BoundaryStart, s.Start+s.Total-s.BoundaryStart)
		for t, sp := range s.Threads {
			if sp.End > sp.Start {
				b.Line(int64(t+1), fmt.Sprintf("thread %d", t), t0).Add("interior_compute", sp.Start, sp.End-sp.Start)
			}
		}
	}
	return space
}
