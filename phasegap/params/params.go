package params

import "time"

// StallAuto is Params.StallTimeout's automatic value: 20× the slowest
// warmup iteration, at least 1 s (package phasegap applies it).
const StallAuto time.Duration = -1

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

// Settings are the parameters a scenario's phasegap workload sets: the
// benchmark's shape, without the run's rank count and the launcher's
// diagnostics. Settings are comparable. The keys and flags are in
// Fields.
type Settings struct {
	Mode      string // mode: phase_nb | phase_blk | nb_test | phase_persist | omp_tasks
	Threads   int    // threads T
	N         int    // N: owned elements per rank
	Halo      int    // halo H, in elements
	Kernel    string // kernel: stencil3 | stencil5 | axpy
	Radius    int    // radius R (0: the kernel's)
	Timesteps int    // timesteps S
	Flops     int    // flops_per_point
	Bytes     int    // bytes_per_point
	Iters     int    // iters K (measured)
	Warmup    int    // warmup W
	PollEvery int    // q: points between tests (nb_test, omp_tasks)
	// Schedule is omp_schedule: how the interior is shared among the
	// threads: static (equal shares), dynamic (chunks of Chunk points
	// taken in turn) or guided (chunks of the remaining points over T,
	// at least Chunk).
	Schedule string
	// Chunk is omp_chunk (0: 1024 points for dynamic and guided).
	Chunk int
	// Progress is progress: inline_poll (the master tests, in nb_test
	// and omp_tasks) or progress_thread (a helper thread tests the
	// exchange from its start to its completion, in every nonblocking
	// mode; MPI_THREAD_MULTIPLE).
	Progress string
}

// Params are a run's parameters, as the CLI takes them: the Settings, and
// what a run of the MPI benchmark adds.
type Params struct {
	Settings
	Ranks int  // ranks P: must equal the communicator's size
	Check bool // --check
	// CheckEvery is check_every E: the checksum Allreduce every E
	// iterations (and at the end).
	CheckEvery  int
	PoisonGhost bool   // --poison_ghost: NaN in the ghost zones between iterations
	Sync        string // sync none|barrier_start|barrier_each
	// PureComm is how many exchanges without computation run after the
	// warmup, for the OSU/IMB/SMB figures (0: none).
	PureComm int
	// StallTimeout is the stall watchdog's limit on one iteration
	// (--stall_timeout): 0 turns it off, StallAuto (the default) is 20×
	// the slowest warmup iteration, at least 1 s.
	StallTimeout time.Duration
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

// KernelRadius is a kernel's own radius.
func KernelRadius(k string) int {
	switch k {
	case KernelStencil5:
		return 2
	case KernelAxpy:
		return 0
	}
	return 1
}

// DefaultSettings are the plan's defaults of the Settings.
func DefaultSettings() Settings {
	return Settings{
		Mode: ModeNB, Threads: 1, N: 100_000, Halo: 16, Kernel: KernelStencil3,
		Timesteps: 1, PollEvery: 1024, Iters: 200, Warmup: 20,
		Schedule: "static", Progress: "inline_poll",
	}
}

// DefaultParams are the plan's defaults.
func DefaultParams() Params {
	return Params{
		Settings: DefaultSettings(),
		Ranks:    1, Check: true, CheckEvery: 50, Sync: "none", PureComm: 50,
		StallTimeout: StallAuto,
	}
}
