package phasegap

import (
	"fmt"
	"math"

	"github.com/chronosync/chronosync/phasegap/report"
)

// iterate runs one iteration into s, the plan's per-iteration model:
// post the exchange, compute the interior on the team (the master
// progressing the exchange as its mode says), complete the exchange,
// compute the boundary, swap.
func (r *rank) iterate(it int, s *report.Sample) error {
	p, c := &r.p, r.c
	r.done, r.doneAt, r.pollNS, r.tests, r.polls, r.pollErr = false, 0, 0, 0, 0, nil
	s.Iter = it
	r.it = it
	s.WaitCalls = 0
	s.Start = c.Now()
	// Post: the sends leave from their own buffers, so that the interior
	// may overwrite the array while they are in flight.
	h, n := p.Halo, p.N
	cur := r.a[r.cur]
	copy(r.sendL, cur[h:2*h])
	copy(r.sendR, cur[n:n+h])
	blocking := p.Mode == ModeBlk
	if !blocking {
		s.CommStart = c.Now()
		if err := r.halo.Start(); err != nil {
			return fmt.Errorf("iteration %d: post: %w", it, err)
		}
		if r.prog != nil {
			r.prog.begin()
		}
	}
	s.InteriorStart = c.Now()
	// Interior: S steps, each one fork of the team.
	r.polling = (p.Mode == ModeNBTest || p.Mode == ModeTasks) && r.prog == nil
	f := r.interiorF
	if p.Mode == ModeTasks {
		f = r.tasksF
	}
	for step := 1; step <= p.Timesteps; step++ {
		r.step = step
		r.next.Store(0)
		r.team.fork(f)
	}
	if r.pollErr != nil {
		return fmt.Errorf("iteration %d: test: %w", it, r.pollErr)
	}
	s.WaitStart = c.Now()
	// Completion.
	switch {
	case blocking:
		s.CommStart = s.WaitStart
		if err := r.halo.Exchange(); err != nil {
			return fmt.Errorf("iteration %d: exchange: %w", it, err)
		}
		s.CommEnd = c.Now()
	case r.prog != nil:
		r.prog.finish()
		if r.prog.err != nil {
			return fmt.Errorf("iteration %d: progress thread: %w", it, r.prog.err)
		}
		r.done, r.doneAt, r.tests, r.polls, r.pollNS = true, r.prog.doneAt, r.prog.tests, r.prog.tests, r.prog.pollNS
		s.CommEnd = r.doneAt
	case r.done:
		s.CommEnd = r.doneAt
	default:
		if err := r.halo.Wait(); err != nil {
			return fmt.Errorf("iteration %d: wait: %w", it, err)
		}
		s.WaitCalls = 1
		s.CommEnd = c.Now()
	}
	s.BoundaryStart = c.Now()
	ghostErr := r.boundary()
	end := c.Now()
	s.Finish(end)
	s.Poll = r.pollNS
	s.TestCalls = r.tests
	s.PollsToComplete = 0
	if r.done {
		s.PollsToComplete = r.polls
	}
	copy(s.Threads, r.spans)
	if p.PoisonGhost {
		if ghostErr != nil {
			return ghostErr
		}
		if i := firstNaN(r.a[r.cur][h : h+n]); i >= 0 {
			return &CheckError{Rank: c.Rank(), Iter: it, Cell: c.Rank()*n + i, Got: math.NaN(), Expected: math.NaN(), Kind: "NaN read"}
		}
		r.poison()
	}
	return nil
}

// bounds are the array indices interior step s updates: the owned points
// at least s×R from either end (they depend on no halo point).
func (r *rank) bounds(step int) (int, int) {
	h, n, rad := r.p.Halo, r.p.N, r.d.Radius
	return h + step*rad, h + n - step*rad
}

// interior is one thread's part of the current interior step, as the
// schedule shares it; the master tests the exchange every PollEvery
// points in nb_test.
func (r *rank) interior(tid int) {
	lo, hi := r.bounds(r.step)
	src, dst := r.a[(r.cur+r.step-1)%2], r.a[(r.cur+r.step)%2]
	r.spanStart(tid)
	if r.p.Schedule == "static" {
		a, b := share(lo, hi, tid, r.team.size())
		r.compute(tid, dst, src, a, b)
	} else {
		for {
			a, b, ok := r.grab(lo, hi)
			if !ok {
				break
			}
			r.compute(tid, dst, src, a, b)
		}
	}
	r.spanEnd(tid)
}

// compute updates [lo, hi) on thread tid: the master, when it polls, in
// pieces of PollEvery points with a test after each.
func (r *rank) compute(tid int, dst, src []float64, lo, hi int) {
	if tid != 0 || !r.polling {
		r.k.update(dst, src, lo, hi, &r.sinks[tid])
		return
	}
	for at := lo; at < hi; at += r.p.PollEvery {
		r.k.update(dst, src, at, min(at+r.p.PollEvery, hi), &r.sinks[0])
		r.poll()
	}
}

// grab takes the next chunk of [lo, hi) for the dynamic and guided
// schedules: Chunk points (1024 when 0), or for guided the remaining
// points over T when that is more.
func (r *rank) grab(lo, hi int) (int, int, bool) {
	chunk := int64(r.p.Chunk)
	if chunk == 0 {
		chunk = 1024
	}
	for {
		done := r.next.Load()
		start := int64(lo) + done
		if start >= int64(hi) {
			return 0, 0, false
		}
		size := chunk
		if r.p.Schedule == "guided" {
			size = max(chunk, (int64(hi)-start)/int64(r.team.size()))
		}
		if r.next.CompareAndSwap(done, done+size) {
			return int(start), int(min(start+size, int64(hi))), true
		}
	}
}

// tasks is omp_tasks: every thread takes chunks of PollEvery points of
// the current interior step in turn; the master tests the exchange after
// each of its chunks.
func (r *rank) tasks(tid int) {
	lo, hi := r.bounds(r.step)
	src, dst := r.a[(r.cur+r.step-1)%2], r.a[(r.cur+r.step)%2]
	q := int64(r.p.PollEvery)
	r.spanStart(tid)
	for {
		at := int64(lo) + (r.next.Add(1)-1)*q
		if at >= int64(hi) {
			break
		}
		r.k.update(dst, src, int(at), int(min(at+q, int64(hi))), &r.sinks[tid])
		if tid == 0 && r.polling {
			r.poll()
		}
	}
	r.spanEnd(tid)
}

// poll tests the exchange once, on the master, until it completed.
func (r *rank) poll() {
	if r.done || r.pollErr != nil {
		return
	}
	t := r.c.Now()
	done, err := r.halo.Test()
	now := r.c.Now()
	r.pollNS += now - t
	r.tests++
	r.polls++
	if err != nil {
		r.pollErr = err
		return
	}
	if done {
		r.done, r.doneAt = true, now
	}
}

func (r *rank) spanStart(tid int) {
	if r.step == 1 {
		r.spans[tid].Start = r.c.Now()
	}
}

func (r *rank) spanEnd(tid int) {
	if r.step == r.p.Timesteps {
		r.spans[tid].End = r.c.Now()
	}
}

// boundary unpacks the halos into the ghost zones and computes, step by
// step, the points that depend on them: the first and last s×R owned
// points of step s and, for the steps after it, the ghost points the
// next step reads (recomputed here rather than exchanged).
//
// It returns a *CheckError, under --poison_ghost, when a ghost cell the
// boundary reads (the B nearest each end) is NaN after the unpack.
func (r *rank) boundary() error {
	p, rad := &r.p, r.d.Radius
	h, n, steps := p.Halo, p.N, p.Timesteps
	cur := r.a[r.cur]
	copy(cur[0:h], r.recvL)
	copy(cur[h+n:h+n+h], r.recvR)
	if r.fault != nil {
		r.fault(r.c.Rank(), r.it, cur, h, n)
	}
	var err error
	if p.PoisonGhost {
		b := r.d.B
		if i := firstNaN(cur[h-b : h]); i >= 0 {
			err = &CheckError{Rank: r.c.Rank(), Iter: r.it, Cell: h - b + i, Ghost: true, Got: math.NaN(), Expected: math.NaN(), Kind: "NaN read"}
		} else if i := firstNaN(cur[h+n : h+n+b]); i >= 0 {
			err = &CheckError{Rank: r.c.Rank(), Iter: r.it, Cell: h + n + i, Ghost: true, Got: math.NaN(), Expected: math.NaN(), Kind: "NaN read"}
		}
	}
	for s := 1; s <= steps; s++ {
		src, dst := r.a[(r.cur+s-1)%2], r.a[(r.cur+s)%2]
		ext := (steps - s) * rad
		lo, hi := r.bounds(s)
		if lo >= hi { // no interior at this step: the whole range is boundary
			r.k.update(dst, src, h-ext, h+n+ext, &r.sinks[0])
			continue
		}
		r.k.update(dst, src, h-ext, lo, &r.sinks[0])
		r.k.update(dst, src, hi, h+n+ext, &r.sinks[0])
	}
	r.cur = (r.cur + steps) % 2
	return err
}
