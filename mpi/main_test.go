//go:build mpi

package mpi

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The tests run as ranks of one MPI job: go test starts this binary, whose
// TestMain (the launcher) runs it again as `mpirun -np 2 <binary> <flags>`.
// Each rank then runs every test, in the same order, so that the tests'
// collective calls and messages meet. Rank 0's output is the test output;
// the other ranks write theirs to a file that the launcher prints when the
// job fails.
const (
	// ranks is the job's size.
	ranks = 2
	// envLogDir, set by the launcher, marks its ranks and names the
	// directory that ranks other than 0 write their output to.
	envLogDir = "CHRONOSYNC_MPI_TEST_LOGDIR"
	// envPretendMissing is ci/needs' list of Debian packages to treat as
	// missing (ci/deps.sh).
	envPretendMissing = "CHRONOSYNC_PRETEND_MISSING"
	// envSkipLog names make test's skip log (ci/deps.sh).
	envSkipLog = "CHRONOSYNC_SKIP_LOG"
)

func TestMain(m *testing.M) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
		os.Exit(launch())
	}
	os.Exit(runRank(m))
}

// launch runs this test binary as a job of ranks processes under mpirun,
// with this process's flags, and returns its exit status. Without mpirun it
// prints a skip line and returns 0.
func launch() int {
	if os.Getenv(envLogDir) != "" {
		fmt.Fprintln(os.Stderr, "mpi test: started by the launcher, but OMPI_COMM_WORLD_SIZE is not set: is mpirun Open MPI's?")
		return 1
	}
	mpirun, err := exec.LookPath("mpirun")
	if slices.Contains(strings.Fields(os.Getenv(envPretendMissing)), "openmpi-bin") {
		err = errors.New(envPretendMissing + " lists it")
	}
	if err != nil {
		skipAll(fmt.Sprintf("needs package openmpi-bin (mpirun: %v): apt-get install openmpi-bin libopenmpi-dev", err))
		return 0
	}
	dir, err := os.MkdirTemp("", "mpi-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpi test:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	// -test.failfast: a rank whose test fails stops and exits without
	// MPI_Finalize, and mpirun then ends the others, rather than letting
	// them run on into tests whose messages no longer meet.
	args := []string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(ranks), "-x", envLogDir, os.Args[0]}
	args = append(append(args, os.Args[1:]...), "-test.failfast")
	cmd := exec.Command(mpirun, args...)
	cmd.Env = append(os.Environ(), envLogDir+"="+dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		code = 1
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			code = exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "mpi test: %s: %v\n", mpirun, err)
		for r := 1; r < ranks; r++ {
			if out, err := os.ReadFile(rankLog(dir, r)); err == nil && len(out) > 0 {
				fmt.Fprintf(os.Stderr, "--- output of rank %d ---\n%s", r, out)
			}
		}
	}
	return code
}

// skipAll prints why no test runs and appends it to make test's skip log,
// in ci/needs' format.
func skipAll(reason string) {
	fmt.Println("SKIP all tests of package mpi:", reason)
	path := os.Getenv(envSkipLog)
	if path == "" {
		return
	}
	wd, _ := os.Getwd()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "SKIP %s TestMain: %s\n", wd, reason)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpi test: recording the skip in %s: %v\n", path, err)
	}
}

// rankLog is the file rank r writes its output to.
func rankLog(dir string, r int) string {
	return filepath.Join(dir, "rank"+strconv.Itoa(r)+".log")
}

// runRank runs the tests as one rank of the job: MPI is initialized on this
// goroutine's locked thread and finalized after the tests if they pass.
// The tests run on goroutines of their own (one at a time), so they ask for
// Serialized: Funneled would promise that only this thread calls MPI.
func runRank(m *testing.M) int {
	rank := os.Getenv("OMPI_COMM_WORLD_RANK")
	if dir := os.Getenv(envLogDir); dir != "" && rank != "0" {
		r, _ := strconv.Atoi(rank)
		if err := redirectOutput(rankLog(dir, r)); err != nil {
			fmt.Fprintf(os.Stderr, "mpi test: rank %s: %v\n", rank, err)
			return 1
		}
	}
	runtime.LockOSThread()
	provided, err := InitThread(Serialized)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpi test: rank %s: %v\n", rank, err)
		return 1
	}
	if provided < Serialized {
		fmt.Fprintf(os.Stderr, "mpi test: rank %s: MPI provides %v, want %v\n", rank, provided, Serialized)
		return 1
	}
	if code := m.Run(); code != 0 {
		return code // without MPI_Finalize, so that mpirun ends the job
	}
	if err := Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "mpi test: rank %s: %v\n", rank, err)
		return 1
	}
	return 0
}

// redirectOutput points this process's stdout and stderr at a new file at
// path.
func redirectOutput(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, fd := range []int{1, 2} {
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			return fmt.Errorf("redirecting fd %d to %s: %w", fd, path, err)
		}
	}
	return nil
}
