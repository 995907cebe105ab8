package report

import (
	"math"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
)

const us1 = int64(1000) // one microsecond in ns

// nb builds a nonblocking-mode iteration (post, interior, wait, boundary
// back to back; the comm window opens at the post) from µs durations.
func nb(iter int, start, post, interior, wait, boundary, poll, comm int64) Sample {
	s := Sample{Iter: iter, Start: start * us1,
		Post: post * us1, Interior: interior * us1, Wait: wait * us1, Boundary: boundary * us1,
		Poll: poll * us1, CommWindow: comm * us1, Total: (post + interior + wait + boundary) * us1}
	s.CommStart = s.Start
	s.CommEnd = s.CommStart + s.CommWindow
	s.InteriorStart = s.Start + s.Post
	s.WaitStart = s.InteriorStart + s.Interior
	s.BoundaryStart = s.WaitStart + s.Wait
	s.WaitCalls = 1
	return s
}

// blk builds a phase_blk iteration as the core runs it: the interior, then
// the blocking exchange (timed as Wait, and as the whole comm window), then
// the boundary.
func blk(iter int, start, exch, interior, boundary int64) Sample {
	s := Sample{Iter: iter, Start: start * us1, Interior: interior * us1, Wait: exch * us1,
		Boundary: boundary * us1, CommWindow: exch * us1, Total: (exch + interior + boundary) * us1}
	s.InteriorStart = s.Start
	s.WaitStart = s.InteriorStart + s.Interior
	s.CommStart, s.CommEnd = s.WaitStart, s.WaitStart+s.Wait
	s.BoundaryStart = s.CommEnd
	return s
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want))) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func testConfig() Config {
	return Config{Params: params.Params{Settings: params.Settings{Mode: "phase_nb", Threads: 2, N: 1000,
		Halo: 256, Kernel: "stencil3", Radius: 1, Timesteps: 1, PollEvery: 64, Progress: "inline_poll",
		Schedule: "static", Iters: 5, Warmup: 1}, Ranks: 2, Check: true, CheckEvery: 50, Sync: "none"},
		MPIThreadRequested: "funneled", MPIThreadProvided: "funneled", OMPBind: true, OMPPlaces: "cores",
		Trace: true, TraceIters: 3, TraceDetail: "thread", Transport: "shm", OutDir: "runs/t", RunID: "t1",
		CSVMode: "write", Manifest: true, Platform: "linux", Hostname: "host,a", GitSHA: "abc123",
		Timestamp: "2026-01-02T03:04:05Z", MPIImpl: "Open MPI", MPIVersion: "4.1.4", Impairment: "none"}
}
