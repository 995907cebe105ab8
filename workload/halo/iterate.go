package halo

import (
	"time"

	"github.com/chronosync/chronosync/world"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
)

// begin starts an iteration: the post (four MPI calls), then the
// exchange's first messages leave.
func (r *Rank) begin() {
	if r.err != nil {
		return
	}
	r.started = true
	r.sample = report.Sample{Iter: r.iter}
	r.done, r.isPosted, r.tests, r.polls = false, false, 0, 0
	r.sample.Start = int64(r.now())
	if r.p.Mode == phasegap.ModeBlk {
		r.sample.InteriorStart = r.sample.Start
		r.interior()
		return
	}
	r.sample.CommStart = r.sample.Start
	r.inMPI = true
	r.after(r.calls(4), func() {
		r.startExchange()
		r.progress()
		r.inMPI = false
		r.sample.InteriorStart = int64(r.now())
		r.interior()
	})
}

// calls is the time of n MPI calls.
func (r *Rank) calls(n int) time.Duration { return time.Duration(float64(n) * r.costs.CallNS) }

// startExchange sends both halos (eager) or requests to send them
// (rendezvous).
func (r *Rank) startExchange() {
	r.isPosted = true
	kind, size := kindData, r.msgBytes()
	if size > r.costs.EagerLimit {
		kind, size = kindRTS, 0
	}
	r.send(kind, goingLeft, r.iter, size)
	r.send(kind, goingRight, r.iter, size)
}

// interior computes the S interior steps: at once, or, when the master
// tests (nb_test, omp_tasks without a progress thread), in chunks of
// PollEvery points of the master's share with a test after each.
func (r *Rank) interior() {
	total := r.slowed(r.costs.interior(r.p.N, r.p.Threads, r.d.Radius, r.p.Timesteps, r.p.Flops, r.p.Bytes))
	polling := (r.p.Mode == phasegap.ModeNBTest || r.p.Mode == phasegap.ModeTasks) && r.p.Progress != "progress_thread"
	if !polling || total == 0 {
		r.after(total, r.afterInterior)
		return
	}
	// The master's share, in chunks of PollEvery points.
	share := max(1, (r.d.Interior+r.p.Threads-1)/r.p.Threads) * r.p.Timesteps
	chunks := max(1, (share+r.p.PollEvery-1)/r.p.PollEvery)
	per := total / time.Duration(chunks)
	var chunk func(i int)
	chunk = func(i int) {
		if i == chunks {
			r.afterInterior()
			return
		}
		r.after(per, func() {
			r.test()
			chunk(i + 1)
		})
	}
	chunk(0)
}

// test is one MPI_Testall: progress, inside an MPI call.
func (r *Rank) test() {
	if r.done {
		return
	}
	r.tests++
	r.polls++
	r.inMPI = true
	r.progress()
	r.inMPI = false
}

// afterInterior completes the exchange: phase_blk starts it now and waits
// for it (Sendrecv); the others wait unless a test saw it done.
func (r *Rank) afterInterior() {
	r.sample.WaitStart = int64(r.now())
	if r.p.Mode == phasegap.ModeBlk {
		r.sample.CommStart = r.sample.WaitStart
		r.startExchange()
	}
	if r.done {
		r.completed()
		return
	}
	r.sample.WaitCalls = 1
	r.waiting, r.inMPI = true, true
	r.after(r.calls(1), r.progress)
}

// completed computes the boundary once both halos are here.
func (r *Rank) completed() {
	if r.pure {
		r.pureEnd()
		return
	}
	r.sample.CommEnd = int64(r.doneAt)
	r.sample.BoundaryStart = int64(r.now())
	var total time.Duration
	for step := 1; step <= r.p.Timesteps; step++ {
		points := min(r.p.N, 2*step*r.d.Radius) + 2*(r.p.Timesteps-step)*r.d.Radius
		total += r.costs.compute(points, 1, r.p.Flops, r.p.Bytes)
	}
	r.after(total, r.endIter)
}

// endIter records the iteration and begins the next.
func (r *Rank) endIter() {
	s := &r.sample
	end := int64(r.now())
	s.Finish(end)
	s.TestCalls = r.tests
	if r.tests > 0 && s.WaitCalls == 0 {
		s.PollsToComplete = r.polls
	}
	s.Threads = make([]report.Span, r.p.Threads)
	for t := range s.Threads {
		s.Threads[t] = report.Span{Start: s.InteriorStart, End: s.WaitStart}
	}
	if r.iter >= r.p.Warmup {
		r.samples = append(r.samples, *s)
	}
	r.iter++
	if r.iter == r.p.Warmup+r.p.Iters {
		if r.p.PureComm > 0 {
			r.pureBegin()
			return
		}
		r.finished = true
		r.ended()
		return
	}
	r.begin()
}

// pureBegin starts one exchange of the pure-communication pass, the MPI
// benchmark's (t_pure_comm: OSU's and IMB's pure time, SMB's base_t,
// hidden_frac's denominator): the post (four MPI calls; none for
// phase_blk, whose exchange is the Sendrecv) and the wait, with nothing
// between. It runs after the measured iterations, so that their timing is
// the model's without it: PureComm + 1 exchanges, the first untimed, as
// it absorbs the ranks' drift at the end of the measured iterations (a
// slow rank's neighbour waits for it once).
func (r *Rank) pureBegin() {
	if r.err != nil {
		return
	}
	r.pure = true
	r.done, r.isPosted = false, false
	r.pureStart = r.now()
	r.inMPI = true
	post := r.calls(4)
	if r.p.Mode == phasegap.ModeBlk {
		post = 0
	}
	r.after(post, func() {
		r.startExchange()
		r.progress()
		if r.done {
			r.inMPI = false
			r.pureEnd()
			return
		}
		r.waiting = true
		r.after(r.calls(1), r.progress)
	})
}

// pureEnd records a pure exchange once both halos are here and starts
// the next, or ends the rank after the last.
func (r *Rank) pureEnd() {
	if r.pureDone > 0 {
		r.pureComm = append(r.pureComm, int64(r.doneAt-r.pureStart))
	}
	r.pureDone++
	r.iter++
	if r.pureDone == r.p.PureComm+1 {
		r.finished = true
		r.ended()
		return
	}
	r.pureBegin()
}

// after runs f once the rank's modelled work of d is done: a timer in the
// simulator; on a world whose timers fire late (the real backend's, tens
// of µs to a millisecond), a timer due Spin early, then a spin on the
// host clock to the deadline, as a computing rank keeps its CPU busy.
func (r *Rank) after(d time.Duration, f func()) {
	if r.spin <= 0 || d <= 0 {
		r.env.AfterFunc(d, f)
		return
	}
	deadline := r.now() + world.Time(d)
	r.env.AfterFunc(d-r.spin, func() {
		for r.now() < deadline {
		}
		f()
	})
}

// slowed is the interior d of this rank: an odd rank's is longer by the
// machine's imbalance (Costs.ImbalanceNS, ImbalanceFrac).
func (r *Rank) slowed(d time.Duration) time.Duration {
	if r.env.Node()%2 == 0 || d <= 0 {
		return d
	}
	return d + time.Duration(r.costs.ImbalanceNS+r.costs.ImbalanceFrac*float64(d))
}
