package phasegap

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// Result is what one rank measured and computed.
type Result struct {
	Derived Derived
	Rank    report.Rank
	// Checks are the global checksums of the checks made (every
	// CheckEvery iterations and at the end), in order: the same inputs
	// give the same values in every mode.
	Checks []uint64
}

// rank is one rank's state. Its timed loop allocates nothing: the
// buffers, the samples and the closures the team runs are made once.
type rank struct {
	c    Comm
	p    Params
	d    Derived
	k    kernel
	team *team
	a    [2][]float64 // the array, N owned points between ghost zones of H
	cur  int          // the buffer holding the current values
	// The halo's send and receive buffers (Comm.Alloc): the exchange never
	// touches a while requests are pending.
	sendL, sendR, recvL, recvR []float64
	halo                       Halo
	sinks                      []sink
	prog                       *progressThread // --progress progress_thread; nil otherwise

	// The iteration in progress.
	step      int // interior step (1..S) the team is computing
	polling   bool
	done      bool  // both halos arrived (nb_test, omp_tasks)
	doneAt    int64 // when a test found them arrived
	pollNS    int64
	tests     int
	polls     int
	pollErr   error
	next      atomic.Int64 // omp_tasks: the next chunk to take
	spans     []report.Span
	interiorF func(tid int)
	tasksF    func(tid int)
	it        int       // the iteration in progress
	fault     faultHook // tests: an injected halo bug
}

// RunOptions are what Run's caller adds beyond the parameters.
type RunOptions struct {
	// OnStall is called once, from the stall watchdog's goroutine, when
	// an iteration runs longer than Params.StallTimeout (a *StallError).
	// The master is then blocked (in an exchange a stopped rank never
	// answers, say): OnStall must end the process. Nil: no watchdog.
	OnStall func(error)

	// fault, for tests, corrupts the ghost zones after the halos are
	// unpacked (an injected halo bug); nil: the envFault hook of builds
	// tagged phasegap_fault, else none.
	fault faultHook
}

// faultHook is called after the halos are unpacked into a (the current
// array: N owned points between ghost zones of H) at iteration it.
type faultHook func(rank, it int, a []float64, h, n int)

// Run runs PhaseGap on c with p: warmup, the pure-communication pass,
// then the measured iterations. The caller runs it on the rank's master
// thread (locked to its OS thread under MPI).
func Run(c Comm, p Params) (*Result, error) { return RunWith(c, p, RunOptions{}) }

// RunWith is Run with the caller's options: the stall watchdog's handler.
//
// With p.Check, every CheckEvery measured iterations (and after the
// last) each rank compares its owned points, bit for bit, with a serial
// recomputation that no exchange feeds (serialRef) and the ranks sum
// the checksum and the count of failed ranks: a rank whose points differ
// returns a *CheckError, the others ErrPeerFailed. With p.PoisonGhost, a
// NaN in a ghost cell the boundary reads, or in an owned point after an
// iteration, is a *CheckError at once.
func RunWith(c Comm, p Params, o RunOptions) (*Result, error) {
	d, err := p.Validate(c.Size())
	if err != nil {
		return nil, err
	}
	r := &rank{c: c, p: p, d: d, k: kernel{name: p.Kernel, flops: p.Flops, reads: p.Bytes / 8}, fault: o.fault}
	if r.fault == nil {
		r.fault = envFault()
	}
	if err := r.setup(); err != nil {
		return nil, err
	}
	if r.team, err = newTeam(p.Threads, p.BindCPUs); err != nil {
		return nil, err
	}
	defer r.team.close()
	defer r.halo.Free()
	if p.Progress == "progress_thread" {
		r.prog = newProgressThread(r.halo, c.Now)
		defer r.prog.close()
	}
	var ref *serialRef
	if p.Check {
		ref = newSerialRef(p.Kernel, d.Radius, c.Rank(), c.Size(), p.N, (p.Warmup+p.Iters)*p.Timesteps)
	}
	limit, auto := p.StallTimeout, p.StallTimeout == params.StallAuto
	if auto {
		limit = autoLimit(0)
	}
	w := startWatchdog(c.Rank(), limit, auto, o.OnStall)
	defer w.close()
	res := &Result{Derived: d, Rank: report.Rank{Rank: c.Rank(), Samples: make([]report.Sample, p.Iters)}}
	for i := range res.Rank.Samples {
		res.Rank.Samples[i].Threads = make([]report.Span, p.Threads)
	}
	var scratch report.Sample
	scratch.Threads = make([]report.Span, p.Threads)
	var slowest int64
	for it := range p.Warmup {
		w.progress(it, stageWarmup)
		if err := r.iterate(it, &scratch); err != nil {
			return nil, err
		}
		slowest = max(slowest, scratch.Total)
		ref.advance(p.Timesteps)
	}
	if auto {
		w.setLimit(autoLimit(slowest))
	}
	beat := func(s stage) func() { return func() { w.progress(p.Warmup-1, s) } }
	if res.Rank.PureComm, err = r.pureComm(beat(stagePureComm)); err != nil {
		return nil, err
	}
	res.Rank.PureWork = r.pureWork(beat(stagePureWork))
	if p.Sync != "none" {
		if err := c.Barrier(); err != nil {
			return nil, err
		}
	}
	for i := range p.Iters {
		it := p.Warmup + i
		w.progress(it, stageIter)
		if p.Sync == "barrier_each" {
			if err := c.Barrier(); err != nil {
				return nil, err
			}
		}
		if err := r.iterate(it, &res.Rank.Samples[i]); err != nil {
			return nil, err
		}
		// The recomputation steps with the run, outside the timed
		// iteration, so that no check holds the other ranks for long.
		ref.advance(p.Timesteps)
		if p.Check && ((i+1)%p.CheckEvery == 0 || i == p.Iters-1) {
			w.progress(it, stageCheck)
			if err := r.check(ref, it, res); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// check compares the owned points with the recomputation and sums the
// checksum and the failed ranks over every rank.
func (r *rank) check(ref *serialRef, it int, res *Result) error {
	h, n := r.p.Halo, r.p.N
	owned := r.a[r.cur][h : h+n]
	var bad uint64
	var cerr error
	if i := ref.compare(owned); i >= 0 {
		bad = 1
		cerr = &CheckError{Rank: r.c.Rank(), Iter: it, Cell: r.c.Rank()*n + i, Expected: ref.owned(i), Got: owned[i], Kind: "mismatch"}
	}
	failed, err := r.c.SumUint64(bad)
	if err != nil {
		return fmt.Errorf("check after iteration %d: %w", it, err)
	}
	if cerr != nil {
		return cerr
	}
	if failed > 0 {
		return fmt.Errorf("iteration %d: %w", it, ErrPeerFailed)
	}
	sum, err := r.c.SumUint64(r.checksum())
	if err != nil {
		return fmt.Errorf("checksum after iteration %d: %w", it, err)
	}
	res.Checks = append(res.Checks, sum)
	res.Rank.Checksum = sum
	return nil
}

// setup allocates the buffers, fills the owned points and builds the
// halo exchange.
func (r *rank) setup() error {
	n, h := r.p.N, r.p.Halo
	for i := range r.a {
		r.a[i] = make([]float64, n+2*h)
	}
	base := r.c.Rank() * n
	for i := range n {
		r.a[0][h+i] = float64((base+i)*7919%1000) / 1000
	}
	var err error
	for _, b := range []*[]float64{&r.sendL, &r.sendR, &r.recvL, &r.recvR} {
		if *b, err = r.c.Alloc(h); err != nil {
			return fmt.Errorf("halo buffers: %w", err)
		}
	}
	size := r.c.Size()
	left, right := (r.c.Rank()+size-1)%size, (r.c.Rank()+1)%size
	if r.halo, err = r.c.NewHalo(r.sendL, r.sendR, r.recvL, r.recvR, left, right, r.p.Mode == ModePersist); err != nil {
		return err
	}
	r.sinks = make([]sink, r.p.Threads)
	if r.k.reads > 0 {
		for i := range r.sinks {
			r.sinks[i].side = make([]float64, 1<<20) // 8 MiB a thread: more than a core's caches
		}
	}
	r.spans = make([]report.Span, r.p.Threads)
	r.interiorF, r.tasksF = r.interior, r.tasks
	return nil
}

// checksum is the sum of the owned points' bits (wrapping).
func (r *rank) checksum() uint64 {
	var s uint64
	for _, v := range r.a[r.cur][r.p.Halo : r.p.Halo+r.p.N] {
		s += math.Float64bits(v)
	}
	return s
}

// pureComm times exchanges with no computation between start and
// completion.
func (r *rank) pureComm(beat func()) ([]int64, error) {
	out := make([]int64, r.p.PureComm)
	for i := range out {
		beat()
		t := r.c.Now()
		if r.p.Mode == ModeBlk {
			if err := r.halo.Exchange(); err != nil {
				return nil, err
			}
		} else {
			if err := r.halo.Start(); err != nil {
				return nil, err
			}
			if err := r.halo.Wait(); err != nil {
				return nil, err
			}
		}
		out[i] = r.c.Now() - t
	}
	return out, nil
}

// pureWork times the interior computation alone, with no exchange
// pending and no test, as many times as pureComm's exchanges (SMB's
// work_t); the array is restored afterwards.
func (r *rank) pureWork(beat func()) []int64 {
	out := make([]int64, r.p.PureComm)
	if len(out) == 0 {
		return out
	}
	saved := [2][]float64{append([]float64(nil), r.a[0]...), append([]float64(nil), r.a[1]...)}
	polling := r.polling
	r.polling = false
	for i := range out {
		beat()
		t := r.c.Now()
		for step := 1; step <= r.p.Timesteps; step++ {
			r.step = step
			r.team.fork(r.interiorF)
		}
		out[i] = r.c.Now() - t
	}
	r.polling = polling
	copy(r.a[0], saved[0])
	copy(r.a[1], saved[1])
	return out
}

// poison fills the ghost zones with NaN: a read of one before the halo
// arrives spreads NaN into the checksum.
func (r *rank) poison() {
	h, n := r.p.Halo, r.p.N
	for _, b := range r.a {
		for i := range h {
			b[i], b[h+n+i] = math.NaN(), math.NaN()
		}
	}
}
