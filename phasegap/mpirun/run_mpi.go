//go:build mpi

package mpirun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/mpi"
	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/mpicomm"
)

// Built says whether this build runs the MPI benchmark.
const Built = true

// transportBTL maps --transport to OpenMPI's byte-transfer layers (the
// MCA parameter btl); auto leaves OpenMPI's choice.
func transportBTL(t string) (string, bool) {
	switch t {
	case "shm":
		return "self,vader", true
	case "tcp":
		return "self,tcp", true
	}
	return "", false
}

// Run runs one rank: MPI_Init_thread on this goroutine's locked OS thread
// (the master thread), prepare (the caller's checks of o, run once MPI
// runs so that rank 0 alone says what is wrong, before any rank exits),
// the benchmark, the gather to rank 0, which writes the run directory and
// its headline figures to stdout. When the options are refused, rank 0
// writes why to stderr and every rank returns ErrRefused.
func Run(o *Options, prepare func() error, stdout, stderr io.Writer) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Set before MPI_Init_thread, unless the environment says already.
	if btl, ok := transportBTL(o.Transport); ok && os.Getenv("OMPI_MCA_btl") == "" {
		os.Setenv("OMPI_MCA_btl", btl)
	}
	// The level asked for; a value Check refuses below is asked as
	// funneled.
	req := map[string]mpi.ThreadLevel{"serialized": mpi.Serialized, "multiple": mpi.Multiple}[o.MPIThread]
	if req == 0 {
		req = mpi.Funneled
	}
	if o.Params.Progress == "progress_thread" {
		req = mpi.Multiple
	}
	provided, err := mpi.InitThread(req)
	if err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	defer mpi.Finalize()
	c, err := mpicomm.New()
	if err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	defer c.Close()
	// Every rank checks the same options and refuses the same way: rank 0
	// says why, and no rank exits before it did (mpirun ends the job at
	// the first rank that exits with an error).
	refuse := func(err error) error {
		if c.Rank() == 0 {
			fmt.Fprintf(stderr, "chronosync: %v\n", err)
		}
		_ = c.Barrier()
		return ErrRefused
	}
	if err := prepare(); err != nil {
		return refuse(fmt.Errorf("phasegap: %w", err))
	}
	d, err := o.Params.Validate(c.Size())
	if err != nil {
		return refuse(fmt.Errorf("phasegap: %w", err))
	}
	if o.Params.Progress == "progress_thread" && provided < mpi.Multiple {
		return refuse(fmt.Errorf("phasegap: --progress progress_thread needs MPI_THREAD_MULTIPLE, and MPI provided %s", provided))
	}
	var cpus unix.CPUSet
	if unix.SchedGetaffinity(0, &cpus) == nil && cpus.Count() < o.Params.Threads {
		fmt.Fprintf(stderr, "phasegap: rank %d: its %d threads may run on %d CPU(s) only (mpirun binds a rank to a core by default: --bind-to none, or --map-by slot:PE=%d)\n",
			c.Rank(), o.Params.Threads, cpus.Count(), o.Params.Threads)
	}
	if c.Size() == 1 && c.Rank() == 0 {
		fmt.Fprintln(stderr, "phasegap: one rank (launch with mpirun -np P for more): its ring is itself, both halos its own")
	}
	var host hostWatch
	if c.Rank() == 0 {
		host = watchHost()
	}
	cpu0 := CPUSeconds()
	res, err := phasegap.RunWith(c, o.Params, phasegap.RunOptions{OnStall: func(err error) {
		// The master is blocked (a neighbour stopped, say) and MPI is
		// the master's alone (MPI_THREAD_FUNNELED): exit, and mpirun
		// ends the job.
		fmt.Fprintf(stderr, "phasegap: %v: ending the job\n", err)
		os.Exit(ExitStall)
	}})
	if errors.Is(err, phasegap.ErrPeerFailed) {
		// The rank whose check failed says why and aborts every rank;
		// wait here until it does.
		_ = c.Barrier()
		return err
	}
	if err != nil {
		if ce := (*phasegap.CheckError)(nil); errors.As(err, &ce) {
			fmt.Fprintf(stderr, "phasegap: %v: aborting every rank\n", err)
		} else {
			fmt.Fprintf(stderr, "phasegap: rank %d: %v: aborting every rank\n", c.Rank(), err)
		}
		c.Abort(1)
		return err
	}
	// Each rank's binding and CPU time go to rank 0 with its summary.
	res.Rank.CPUs, _ = RankCPUs()
	res.Rank.CPUSeconds = CPUSeconds() - cpu0
	traced := 0
	if o.Trace {
		traced = o.TraceIters
	}
	g, err := phasegap.Gather(c, res, traced)
	if err != nil {
		fmt.Fprintf(stderr, "phasegap: rank %d: %v: aborting every rank\n", c.Rank(), err)
		c.Abort(1)
		return err
	}
	if c.Rank() != 0 {
		return nil
	}
	cfg := config(o, d, provided.String(), mpi.LibraryVersion())
	var own float64
	for _, s := range g.Summaries {
		own += s.CPUSeconds
	}
	row, err := writeRun(o, cfg, g, res.Rank.Checksum, host.end(o.Params.Ranks, o.Params.Threads, own))
	if err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	printRun(stdout, cfg, row, o.OutDir)
	return nil
}
