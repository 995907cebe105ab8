package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/phasegap"
)

// phasegapOpts are chronosync phasegap's flags beyond phasegap.Params:
// MPI, threading, outputs.
type phasegapOpts struct {
	p           phasegap.Params
	mpiThread   string
	bind        bool
	places      string
	trace       bool
	traceIters  int
	traceDetail string
	transport   string
	outDir      string
	runID       string
	csv         string
	csvMode     string
	manifest    bool
	// The plan's 0/1 flags (--trace 1), read into the fields above.
	checkI, poisonI, traceI, manifestI int
	bindS                              string
}

// check refuses what Params.Validate does not see: the flags of the
// launcher's own.
func (o *phasegapOpts) check() error {
	for _, b := range []struct {
		flag string
		v    int
		to   *bool
	}{{"check", o.checkI, &o.p.Check}, {"poison-ghost", o.poisonI, &o.p.PoisonGhost}, {"trace", o.traceI, &o.trace}, {"manifest", o.manifestI, &o.manifest}} {
		if b.v != 0 && b.v != 1 {
			return fmt.Errorf("--%s %d: expected 0 or 1", b.flag, b.v)
		}
		*b.to = b.v == 1
	}
	switch o.bindS {
	case "true", "false":
		o.bind = o.bindS == "true"
	default:
		return fmt.Errorf("--omp-bind %q: expected true or false", o.bindS)
	}
	for _, c := range []struct {
		flag, v string
		ok      []string
	}{
		{"mpi-thread", o.mpiThread, []string{"funneled", "serialized", "multiple"}},
		{"omp-places", o.places, []string{"cores", "threads"}},
		{"trace-detail", o.traceDetail, []string{"rank", "thread"}},
		{"transport", o.transport, []string{"auto", "shm", "tcp"}},
		{"csv-mode", o.csvMode, []string{"write", "append"}},
	} {
		if !slices.Contains(c.ok, c.v) {
			return fmt.Errorf("--%s %q: expected one of %v", c.flag, c.v, c.ok)
		}
	}
	if o.traceIters < 1 || o.traceIters > phasegap.MaxIters {
		return fmt.Errorf("--trace-iters %d: expected 1 to %d", o.traceIters, phasegap.MaxIters)
	}
	if o.outDir == "" {
		return fmt.Errorf("--out-dir is required: the run directory (results.csv, manifest.json, trace.json)")
	}
	if o.p.Progress == "progress_thread" {
		// A helper thread calling MPI_Test* needs MPI_THREAD_MULTIPLE;
		// the launcher checks what MPI provides.
		o.mpiThread = "multiple"
	}
	if o.bind {
		cpus, err := phasegap.AllowedCPUs(o.places == "cores")
		if err != nil {
			return fmt.Errorf("--omp-bind: %w", err)
		}
		o.p.BindCPUs = cpus
	}
	return nil
}

func newPhasegapCmd() *cobra.Command {
	o := phasegapOpts{p: phasegap.DefaultParams()}
	p := &o.p
	cmd := &cobra.Command{
		Use:   "phasegap --out-dir DIR [flags]",
		Short: "PhaseGap: how much halo exchange hides behind computation, on MPI (mpirun -np P)",
		Long: `PhaseGap runs a 1-D ring halo exchange with ghost zones on P MPI ranks of
T threads each and measures how much of the communication hides behind the
interior computation and how much is exposed as waiting, in five
orchestration modes (phase_nb, phase_blk, nb_test, phase_persist,
omp_tasks). Launch it with mpirun:

    mpirun -np 4 chronosync phasegap --mode phase_nb --ranks 4 --threads 2 \
        --N 200000 --halo 256 --iters 400 --warmup 50 --trace 1 --out-dir runs/demo

It writes results.csv, manifest.json and (with --trace 1) trace.json into
--out-dir. It needs a chronosync built with -tags mpi (OpenMPI:
apt-get install libopenmpi-dev openmpi-bin). See docs/phasegap.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The flags are checked by runPhasegap: under mpirun, once MPI
			// runs, so that rank 0 alone says what is wrong, before any
			// rank exits.
			return runPhasegap(cmd, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Mode, "mode", p.Mode, "orchestration: phase_nb, phase_blk, nb_test, phase_persist or omp_tasks")
	f.IntVar(&p.Ranks, "ranks", p.Ranks, "P: MPI ranks (must equal mpirun -np)")
	f.IntVar(&p.Threads, "threads", p.Threads, "T: threads per rank")
	f.IntVar(&p.N, "N", p.N, "owned elements per rank")
	f.IntVar(&p.Halo, "halo", p.Halo, "H: halo width in elements (at least B = radius × timesteps)")
	f.StringVar(&p.Kernel, "kernel", p.Kernel, "stencil3, stencil5 or axpy")
	f.IntVar(&p.Radius, "radius", 0, "R: stencil radius (0: the kernel's)")
	f.IntVar(&p.Timesteps, "timesteps", p.Timesteps, "S: stencil steps per halo exchange")
	f.IntVar(&p.PollEvery, "poll-every", p.PollEvery, "points computed between two MPI_Testall (nb_test; the task size of omp_tasks)")
	f.IntVar(&p.Flops, "flops-per-point", 0, "extra arithmetic per point")
	f.IntVar(&p.Bytes, "bytes-per-point", 0, "extra bytes streamed per point from a side buffer")
	f.IntVar(&p.Iters, "iters", p.Iters, "K: measured iterations")
	f.IntVar(&p.Warmup, "warmup", p.Warmup, "W: iterations before measuring")
	f.IntVar(&p.PureComm, "pure-comm", p.PureComm, "exchanges timed with no computation after the warmup (for the OSU, IMB and SMB overlap figures)")
	f.IntVar(&o.checkI, "check", 1, "checksum Allreduce: 0 or 1")
	f.IntVar(&p.CheckEvery, "check-every", p.CheckEvery, "E: iterations between checksums")
	f.IntVar(&o.poisonI, "poison-ghost", 0, "1: fill the ghost zones with NaN between iterations (debug)")
	f.StringVar(&p.Sync, "sync", p.Sync, "none, barrier_start or barrier_each (diagnostic)")
	f.StringVar(&o.mpiThread, "mpi-thread", "funneled", "thread level requested: funneled, serialized or multiple (provided is recorded)")
	f.StringVar(&p.Progress, "progress", p.Progress, "inline_poll (the master tests) or progress_thread (a helper thread tests; needs MPI_THREAD_MULTIPLE)")
	f.StringVar(&p.Schedule, "omp-schedule", p.Schedule, "interior schedule: static, dynamic or guided")
	f.IntVar(&p.Chunk, "omp-chunk", 0, "dynamic and guided chunk, in points (0: 1024)")
	f.StringVar(&o.bindS, "omp-bind", "false", "true: pin thread t to the t-th of the rank's places (OMP_PROC_BIND)")
	f.StringVar(&o.places, "omp-places", "cores", "places for --omp-bind: cores (one CPU per physical core) or threads (every CPU the rank may use)")
	f.IntVar(&o.traceI, "trace", 0, "1: write trace.json (Chrome trace format)")
	f.IntVar(&o.traceIters, "trace-iters", 50, "M: trace the last M measured iterations")
	f.StringVar(&o.traceDetail, "trace-detail", "rank", "rank, or thread for per-thread interior spans")
	f.StringVar(&o.transport, "transport", "auto", "auto, shm or tcp (OpenMPI's btl; recorded)")
	f.StringVar(&o.outDir, "out-dir", "", "the run directory")
	f.StringVar(&o.runID, "run-id", "", "run id (default: time and a hash of the arguments)")
	f.StringVar(&o.csv, "csv", "", "results CSV (default <out-dir>/results.csv)")
	f.StringVar(&o.csvMode, "csv-mode", "write", "write, or append to --csv as an index")
	f.IntVar(&o.manifestI, "manifest", 1, "1: write manifest.json")
	cmd.AddCommand(newPhasegapPlotCmd())
	cmd.AddCommand(newPhasegapSweepCmd())
	cmd.AddCommand(newPhasegapCompareCmd())
	cmd.AddCommand(newPhasegapCalibrateCmd())
	return cmd
}
