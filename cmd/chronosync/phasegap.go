package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/phasegap/mpirun"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/scenario"
)

// phasegapOpts are chronosync phasegap's flags: mpirun's Options, and
// the plan's 0/1 and true/false spellings read into them by check.
type phasegapOpts struct {
	mpirun.Options
	checkI, poisonI, traceI, manifestI int
	bindS                              string
	stallS                             string
}

// check reads the 0/1 and true/false flags into the options, then
// refuses what Params.Validate does not see: the flags of the launcher's
// own (mpirun.Options.Check).
func (o *phasegapOpts) check() error {
	for _, b := range []struct {
		flag string
		v    int
		to   *bool
	}{{"check", o.checkI, &o.Params.Check}, {"poison-ghost", o.poisonI, &o.Params.PoisonGhost}, {"trace", o.traceI, &o.Trace}, {"manifest", o.manifestI, &o.Manifest}} {
		if b.v != 0 && b.v != 1 {
			return fmt.Errorf("--%s %d: expected 0 or 1", b.flag, b.v)
		}
		*b.to = b.v == 1
	}
	stall, err := parseStall(o.stallS)
	if err != nil {
		return err
	}
	o.Params.StallTimeout = stall
	switch o.bindS {
	case "true", "false":
		o.Bind = o.bindS == "true"
	default:
		return fmt.Errorf("--omp-bind %q: expected true or false", o.bindS)
	}
	if !slices.Contains(scenario.LinkPresets(), o.Impairment) {
		return fmt.Errorf("--impairment %q: expected one of %s", o.Impairment, strings.Join(scenario.LinkPresets(), ", "))
	}
	return o.Options.Check()
}

// parseStall reads --stall-timeout: auto, 0 (off), a duration (5s,
// 500ms) or a number of seconds.
func parseStall(v string) (time.Duration, error) {
	if v == "auto" {
		return params.StallAuto, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > 1e9 {
			return 0, fmt.Errorf("--stall-timeout %q: expected auto, 0 (off), a duration (30s) or seconds", v)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("--stall-timeout %q: expected auto, 0 (off) or a positive duration", v)
	}
	return d, nil
}

// runPhasegap runs one rank of the MPI benchmark (package mpirun); a
// refusal rank 0 already reported exits 1 without a word.
func runPhasegap(cmd *cobra.Command, o *phasegapOpts) error {
	o.MPIThreadSet = cmd.Flags().Changed("mpi-thread")
	err := mpirun.Run(&o.Options, o.check, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if errors.Is(err, mpirun.ErrRefused) {
		return &codedError{code: 1, err: errSilent}
	}
	return err
}

func newPhasegapCmd() *cobra.Command {
	o := phasegapOpts{Options: mpirun.Options{Params: params.DefaultParams()}}
	p := &o.Params
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
	// The parameters: package params's table, one flag a field.
	for _, fd := range params.Fields() {
		switch {
		case fd.Int != nil:
			f.IntVar(fd.Int(p), fd.Flag(), *fd.Int(p), fd.Doc)
		case fd.Str != nil:
			f.StringVar(fd.Str(p), fd.Flag(), *fd.Str(p), fd.Doc)
		}
	}
	f.IntVar(&o.checkI, "check", 1, "1: compare every rank's points with a serial recomputation every --check-every iterations and fail the run on a mismatch; 0: no check, no checksum")
	f.IntVar(&o.poisonI, "poison-ghost", 0, "1: fill the ghost zones with NaN between iterations and fail the run on any NaN read (rank, iteration, cell)")
	f.StringVar(&o.stallS, "stall-timeout", "auto", "stall watchdog: end the job when an iteration runs longer (auto: 20× the slowest warmup iteration, at least 1s; 0: off; 30s)")
	f.StringVar(&o.MPIThread, "mpi-thread", "funneled", "thread level requested: funneled, serialized or multiple (provided is recorded); --progress progress_thread asks for multiple, and refuses another level given here")
	f.StringVar(&o.bindS, "omp-bind", "false", "true: pin thread t to the t-th of the rank's places (OMP_PROC_BIND)")
	f.StringVar(&o.Places, "omp-places", "cores", "places for --omp-bind: cores (one CPU per physical core) or threads (every CPU the rank may use)")
	f.IntVar(&o.traceI, "trace", 0, "1: write trace.json (Chrome trace format)")
	f.IntVar(&o.TraceIters, "trace-iters", 50, "M: trace the last M measured iterations")
	f.StringVar(&o.TraceDetail, "trace-detail", "rank", "rank, or thread for per-thread interior spans")
	f.StringVar(&o.Transport, "transport", "auto", "auto, shm or tcp (OpenMPI's btl; recorded)")
	f.StringVar(&o.Impairment, "impairment", "none", "the link preset that whoever launched the ranks applied to their network (phasegap sweep's mpi-net transport); recorded, not applied")
	f.StringVar(&o.OutDir, "out-dir", "", "the run directory")
	f.StringVar(&o.RunID, "run-id", "", "run id (default: time and a hash of the arguments)")
	f.StringVar(&o.CSV, "csv", "", "results CSV (default <out-dir>/results.csv)")
	f.StringVar(&o.CSVMode, "csv-mode", "write", "write, or append to --csv as an index")
	f.IntVar(&o.manifestI, "manifest", 1, "1: write manifest.json")
	cmd.AddCommand(newPhasegapPlotCmd())
	cmd.AddCommand(newPhasegapSweepCmd())
	cmd.AddCommand(newPhasegapCompareCmd())
	cmd.AddCommand(newPhasegapCalibrateCmd())
	return cmd
}
