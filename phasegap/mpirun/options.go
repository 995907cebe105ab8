package mpirun

import (
	"errors"
	"fmt"
	"slices"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/params"
)

// ExitStall is a rank's exit status when the stall watchdog ends the
// job.
const ExitStall = 3

// ErrRefused is Run's error when every rank refused the options and rank
// 0 already said why on stderr: the caller exits 1 without a word.
var ErrRefused = errors.New("refused; rank 0 said why")

// Options are a run's settings: the benchmark's parameters and the
// launcher's own (MPI threading, binding, outputs).
type Options struct {
	Params    params.Params
	MPIThread string // funneled | serialized | multiple
	// MPIThreadSet says --mpi-thread was given: a level given with
	// --progress progress_thread must be multiple, never silently
	// raised (without it, a progress thread asks for multiple).
	MPIThreadSet bool
	Bind         bool   // --omp-bind
	Places       string // cores | threads
	Trace        bool
	TraceIters   int
	TraceDetail  string // rank | thread
	Transport    string // auto | shm | tcp
	// Impairment is the link preset the launcher applied to the ranks'
	// network ("none" on one machine's shared memory); recorded only.
	Impairment string
	OutDir     string
	RunID      string // "": time and a hash of the configuration
	CSV        string // an index CSV beside the run directory's
	CSVMode    string // write | append
	Manifest   bool
}

// Check refuses what params.Params.Validate does not see: the launcher's
// own options. It also settles what follows from them: a progress thread
// asks for MPI_THREAD_MULTIPLE, and binding lists the places.
func (o *Options) Check() error {
	for _, c := range []struct {
		flag, v string
		ok      []string
	}{
		{"mpi-thread", o.MPIThread, []string{"funneled", "serialized", "multiple"}},
		{"omp-places", o.Places, []string{"cores", "threads"}},
		{"trace-detail", o.TraceDetail, []string{"rank", "thread"}},
		{"transport", o.Transport, []string{"auto", "shm", "tcp"}},
		{"csv-mode", o.CSVMode, []string{"write", "append"}},
	} {
		if !slices.Contains(c.ok, c.v) {
			return fmt.Errorf("--%s %q: expected one of %v", c.flag, c.v, c.ok)
		}
	}
	if o.TraceIters < 1 || o.TraceIters > params.MaxIters {
		return fmt.Errorf("--trace-iters %d: expected 1 to %d", o.TraceIters, params.MaxIters)
	}
	if o.OutDir == "" {
		return fmt.Errorf("--out-dir is required: the run directory (results.csv, manifest.json, trace.json)")
	}
	if o.Params.Progress == "progress_thread" {
		// A helper thread calling MPI_Test* needs MPI_THREAD_MULTIPLE;
		// the launcher checks what MPI provides. A level given
		// explicitly is what the user asked: refuse it rather than
		// record another.
		if o.MPIThreadSet && o.MPIThread != "multiple" {
			return fmt.Errorf("--mpi-thread %s with --progress progress_thread: the progress thread calls MPI from a second thread, which needs multiple (give --mpi-thread multiple, or leave it out: a progress thread then asks for multiple)", o.MPIThread)
		}
		o.MPIThread = "multiple"
	}
	if o.Bind {
		cpus, err := phasegap.AllowedCPUs(o.Places == "cores")
		if err != nil {
			return fmt.Errorf("--omp-bind: %w", err)
		}
		o.Params.BindCPUs = cpus
	}
	return nil
}
