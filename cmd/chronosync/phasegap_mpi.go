//go:build mpi

package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/mpi"
	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/mpicomm"
)

// mpiBuilt says whether this chronosync runs the MPI benchmark.
const mpiBuilt = true

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

// runPhasegap runs one rank: MPI_Init_thread on this goroutine's locked
// OS thread (the master thread), the benchmark, the gather to rank 0,
// which writes the run directory.
func runPhasegap(cmd *cobra.Command, o *phasegapOpts) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Set before MPI_Init_thread, unless the environment says already.
	if btl, ok := transportBTL(o.transport); ok && os.Getenv("OMPI_MCA_btl") == "" {
		os.Setenv("OMPI_MCA_btl", btl)
	}
	// The level asked for; a value check refuses below is asked as
	// funneled.
	req := map[string]mpi.ThreadLevel{"serialized": mpi.Serialized, "multiple": mpi.Multiple}[o.mpiThread]
	if req == 0 {
		req = mpi.Funneled
	}
	if o.p.Progress == "progress_thread" {
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
	stderr := cmd.ErrOrStderr()
	// Every rank checks the same flags and refuses the same way: rank 0
	// says why, and no rank exits before it did (mpirun ends the job at
	// the first rank that exits with an error).
	refuse := func(err error) error {
		if c.Rank() == 0 {
			fmt.Fprintf(stderr, "chronosync: %v\n", err)
		}
		_ = c.Barrier()
		return &codedError{code: 1, err: errSilent}
	}
	if err := o.check(); err != nil {
		return refuse(fmt.Errorf("phasegap: %w", err))
	}
	d, err := o.p.Validate(c.Size())
	if err != nil {
		return refuse(fmt.Errorf("phasegap: %w", err))
	}
	if o.p.Progress == "progress_thread" && provided < mpi.Multiple {
		return refuse(fmt.Errorf("phasegap: --progress progress_thread needs MPI_THREAD_MULTIPLE, and MPI provided %s", provided))
	}
	var cpus unix.CPUSet
	if unix.SchedGetaffinity(0, &cpus) == nil && cpus.Count() < o.p.Threads {
		fmt.Fprintf(stderr, "phasegap: rank %d: its %d threads may run on %d CPU(s) only (mpirun binds a rank to a core by default: --bind-to none, or --map-by slot:PE=%d)\n",
			c.Rank(), o.p.Threads, cpus.Count(), o.p.Threads)
	}
	if c.Size() == 1 && c.Rank() == 0 {
		fmt.Fprintln(stderr, "phasegap: one rank (launch with mpirun -np P for more): its ring is itself, both halos its own")
	}
	res, err := phasegap.Run(c, o.p)
	if err != nil {
		fmt.Fprintf(stderr, "phasegap: rank %d: %v: aborting every rank\n", c.Rank(), err)
		c.Abort(1)
		return err
	}
	traced := 0
	if o.trace {
		traced = o.traceIters
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
	cfg := phasegapConfig(o, d, provided.String(), mpi.LibraryVersion())
	row, err := writePhasegapRun(o, cfg, g, res.Rank.Checksum)
	if err != nil {
		return fmt.Errorf("phasegap: %w", err)
	}
	printPhasegap(cmd.OutOrStdout(), cfg, row, o.outDir)
	return nil
}
