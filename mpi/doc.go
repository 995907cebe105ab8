// Package mpi is a minimal cgo binding to Open MPI: exactly the calls that
// the PhaseGap halo-exchange benchmark needs, and nothing more.
//
// # Building
//
// The binding needs cgo, Debian's libopenmpi-dev (mpi.h, libmpi, found with
// pkg-config ompi-c) and the build tag mpi. Without the tag the package
// still builds, with the same API: every call that would reach MPI returns
// ErrNotBuilt, so code that uses the package builds either way.
//
// # Memory
//
// A nonblocking or persistent request keeps its buffer's address after the
// call that posts it returns, and Go's garbage collector may move or free Go
// memory by then. So those calls (Requests' methods) take a Buf, a float64
// buffer in C memory that Go never moves or collects, and never a Go slice;
// the requests themselves live in a C array. The blocking collectives take
// Go slices, which cgo keeps in place for the duration of the call; MPI
// keeps no pointer to them afterwards. Those slices escape to the heap, so
// make them once, outside a timed loop. Sendrecv, blocking too, takes Bufs.
//
// No method of Buf, Requests or Comm allocates Go memory unless it fails: a
// timed loop of Irecv, Isend, Startall, Waitall, Testall and Testsome
// allocates nothing.
//
// # Errors
//
// InitThread sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, so that a failing call
// returns an error rather than aborting the job. Every error names the call
// that failed and carries MPI_Error_string's text, as in
// "MPI_Isend: MPI_ERR_RANK: invalid rank"; errors found before reaching MPI
// (a length mismatch, a request slot in use) start with "mpi: " and the
// method's name.
//
// # Threads
//
// With Funneled (MPI_THREAD_FUNNELED), every MPI call must come from the OS
// thread that called InitThread, but the Go scheduler moves goroutines
// between threads. So the caller must call runtime.LockOSThread before
// InitThread, keep that goroutine locked until after Finalize, and make
// every call of this package from it:
//
//	func main() {
//		runtime.LockOSThread()
//		provided, err := mpi.InitThread(mpi.Funneled)
//		if err != nil {
//			log.Fatal(err)
//		}
//		if provided < mpi.Funneled {
//			log.Fatalf("MPI provides only %v", provided)
//		}
//		defer mpi.Finalize()
//		// ... mpi.World().Rank(), AllocFloat64, NewRequests, ...
//	}
//
// The package starts no goroutines and keeps no state of its own.
//
// # Testing
//
// The tests (go test -tags mpi ./mpi/) run their own binary again under
// mpirun -np 2, and skip when mpirun is missing. BenchmarkRingExchange
// needs both ranks to run the same number of iterations, so it runs only
// with an iteration count:
//
//	go test -tags mpi -run '^$' -bench RingExchange -benchtime 100000x ./mpi/
package mpi

import (
	"errors"
	"strconv"
)

// ErrNotBuilt is returned by every call that would reach MPI in a binary
// built without the mpi tag.
var ErrNotBuilt = errors.New("mpi: built without MPI: rebuild with `go build -tags mpi` after `apt-get install libopenmpi-dev openmpi-bin`")

// ThreadLevel is an MPI thread support level (MPI_THREAD_*), in increasing
// order of support.
type ThreadLevel int

// The thread levels.
const (
	// Single is MPI_THREAD_SINGLE: only one thread will execute.
	Single ThreadLevel = iota
	// Funneled is MPI_THREAD_FUNNELED: only the thread that called
	// InitThread makes MPI calls.
	Funneled
	// Serialized is MPI_THREAD_SERIALIZED: any thread may call, one at a
	// time.
	Serialized
	// Multiple is MPI_THREAD_MULTIPLE: any thread may call at any time.
	Multiple
)

// String returns the level's MPI name, such as "MPI_THREAD_FUNNELED".
func (l ThreadLevel) String() string {
	switch l {
	case Single:
		return "MPI_THREAD_SINGLE"
	case Funneled:
		return "MPI_THREAD_FUNNELED"
	case Serialized:
		return "MPI_THREAD_SERIALIZED"
	case Multiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return "ThreadLevel(" + strconv.Itoa(int(l)) + ")"
}

// Op is a reduction operation (MPI_Op). The zero Op is invalid.
type Op int

// The reduction operations.
const (
	// Sum is MPI_SUM.
	Sum Op = iota + 1
	// Max is MPI_MAX.
	Max
	// Min is MPI_MIN.
	Min
	// BXor is MPI_BXOR, bitwise exclusive or: integers only.
	BXor
)
