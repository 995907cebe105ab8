package phasegap

import (
	"errors"
	"fmt"
	"slices"
)

// Modes returns the orchestrations PhaseGap compares (--mode).
func Modes() []string { return []string{ModeNB, ModeBlk, ModeNBTest, ModePersist, ModeTasks} }

// Kernels returns the kernels (--kernel).
func Kernels() []string { return []string{KernelStencil3, KernelStencil5, KernelAxpy} }

// The modes.
const (
	// ModeNB posts Irecv/Isend, computes the interior, waits, then
	// computes the boundary.
	ModeNB = "phase_nb"
	// ModeBlk exchanges with blocking Sendrecv after the interior: no
	// overlap is possible.
	ModeBlk = "phase_blk"
	// ModeNBTest is ModeNB with the master's interior share chunked,
	// testing the requests every PollEvery points.
	ModeNBTest = "nb_test"
	// ModePersist is ModeNB with persistent requests (Send_init,
	// Recv_init, Startall).
	ModePersist = "phase_persist"
	// ModeTasks runs the interior as tasks every team member takes in
	// turn; the master tests the requests between its tasks.
	ModeTasks = "omp_tasks"
)

// Kernels (--kernel).
const (
	KernelStencil3 = "stencil3"
	KernelStencil5 = "stencil5"
	KernelAxpy     = "axpy"
)

// Limits of the parameters: beyond them a run is refused.
const (
	MaxN       = 1 << 30 // local elements per rank
	MaxThreads = 1024
	MaxIters   = 1 << 30
	MaxRadius  = 64
	MaxSteps   = 1 << 16
	MaxIntense = 1 << 20 // flops_per_point, bytes_per_point
)

// Params are a run's parameters, as the CLI takes them (the plan's names
// in comments).
type Params struct {
	Mode      string // --mode
	Ranks     int    // --ranks P: must equal the communicator's size
	Threads   int    // --threads T
	N         int    // --N: owned elements per rank
	Halo      int    // --halo H, in elements
	Kernel    string // --kernel
	Radius    int    // --radius R (0: the kernel's)
	Timesteps int    // --timesteps S
	PollEvery int    // --poll_every q, points between tests (nb_test, omp_tasks)
	Flops     int    // --flops_per_point
	Bytes     int    // --bytes_per_point
	Iters     int    // --iters K (measured)
	Warmup    int    // --warmup W
	Check     bool   // --check
	// CheckEvery is --check_every E: the checksum Allreduce every E
	// iterations (and at the end).
	CheckEvery  int
	PoisonGhost bool   // --poison_ghost: NaN in the ghost zones between iterations
	Sync        string // --sync none|barrier_start|barrier_each
	// PureComm is how many exchanges without computation run after the
	// warmup, for the OSU/IMB/SMB figures (0: none).
	PureComm int
	// Schedule is --omp_schedule: how the interior is shared among the
	// threads: static (equal shares), dynamic (chunks of Chunk points
	// taken in turn) or guided (chunks of the remaining points over T,
	// at least Chunk).
	Schedule string
	// Chunk is --omp_chunk (0: 1024 points for dynamic and guided).
	Chunk int
	// Progress is --progress: inline_poll (the master tests, in nb_test
	// and omp_tasks) or progress_thread (a helper thread tests the
	// exchange from its start to its completion, in every nonblocking
	// mode; MPI_THREAD_MULTIPLE).
	Progress string
	// BindCPUs, when not empty, pins thread t to CPU BindCPUs[t mod len]
	// (--omp_bind true; the list is the places, AllowedCPUs).
	BindCPUs []int
}

// Derived are the parameters that follow from Params.
type Derived struct {
	Radius   int // R
	B        int // R × S: owned points at each end that depend on the halo
	Interior int // N − 2B (0 when N < 2B)
}

// kernelRadius is each kernel's own radius.
func kernelRadius(k string) int {
	switch k {
	case KernelStencil5:
		return 2
	case KernelAxpy:
		return 0
	}
	return 1
}

// Validate checks p, with the communicator's size, and returns the
// derived parameters. Every refusal names the flag, the value and what
// was expected.
func (p *Params) Validate(size int) (Derived, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !slices.Contains(Modes(), p.Mode) {
		bad("--mode %q: expected one of %v", p.Mode, Modes())
	}
	if !slices.Contains(Kernels(), p.Kernel) {
		bad("--kernel %q: expected one of %v", p.Kernel, Kernels())
	}
	inRange := func(flag string, v, lo, hi int) {
		if v < lo || v > hi {
			bad("--%s %d: expected %d to %d", flag, v, lo, hi)
		}
	}
	inRange("threads", p.Threads, 1, MaxThreads)
	inRange("N", p.N, 1, MaxN)
	inRange("halo", p.Halo, 0, MaxN)
	inRange("radius", p.Radius, 0, MaxRadius)
	inRange("timesteps", p.Timesteps, 1, MaxSteps)
	inRange("poll_every", p.PollEvery, 1, MaxN)
	inRange("flops_per_point", p.Flops, 0, MaxIntense)
	inRange("bytes_per_point", p.Bytes, 0, MaxIntense)
	inRange("iters", p.Iters, 1, MaxIters)
	inRange("warmup", p.Warmup, 0, MaxIters)
	inRange("check_every", p.CheckEvery, 1, MaxIters)
	inRange("pure_comm", p.PureComm, 0, MaxIters)
	inRange("omp_chunk", p.Chunk, 0, MaxN)
	if !slices.Contains([]string{"static", "dynamic", "guided"}, p.Schedule) {
		bad("--omp_schedule %q: expected static, dynamic or guided", p.Schedule)
	}
	if !slices.Contains([]string{"inline_poll", "progress_thread"}, p.Progress) {
		bad("--progress %q: expected inline_poll or progress_thread", p.Progress)
	}
	if !slices.Contains([]string{"none", "barrier_start", "barrier_each"}, p.Sync) {
		bad("--sync %q: expected none, barrier_start or barrier_each", p.Sync)
	}
	if p.Ranks != size {
		bad("--ranks %d, but the communicator has %d ranks (mpirun -np %d): they must agree", p.Ranks, size, p.Ranks)
	}
	if len(errs) > 0 {
		return Derived{}, errors.Join(errs...)
	}
	d := Derived{Radius: p.Radius}
	if own := kernelRadius(p.Kernel); d.Radius == 0 {
		d.Radius = own
	} else if d.Radius < own {
		return Derived{}, fmt.Errorf("--radius %d is smaller than kernel %s's own radius %d: its updates would read past the halo", p.Radius, p.Kernel, own)
	}
	d.B = d.Radius * p.Timesteps
	if p.Halo < d.B {
		return Derived{}, fmt.Errorf("--halo %d is smaller than B = radius × timesteps = %d × %d = %d, the boundary points that depend on the halo: a halo must be at least B wide", p.Halo, d.Radius, p.Timesteps, d.B)
	}
	if p.Halo > p.N {
		return Derived{}, fmt.Errorf("--halo %d is wider than the %d points a rank owns (--N): a neighbour cannot send more than it owns", p.Halo, p.N)
	}
	d.Interior = max(0, p.N-2*d.B)
	return d, nil
}

// DefaultParams are the plan's defaults.
func DefaultParams() Params {
	return Params{
		Mode: ModeNB, Ranks: 1, Threads: 1, N: 100_000, Halo: 16, Kernel: KernelStencil3,
		Timesteps: 1, PollEvery: 1024, Iters: 200, Warmup: 20, Check: true, CheckEvery: 50,
		Sync: "none", PureComm: 50, Schedule: "static", Progress: "inline_poll",
	}
}
