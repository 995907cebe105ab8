//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdint.h>
#include <mpi.h>

// Open MPI's handles (MPI_Comm, MPI_Op, MPI_Datatype, ...) are pointers to
// its predefined objects, and its predefined handles are macros that take
// their addresses: these helpers hand them to Go.

static MPI_Comm cs_world(void) { return MPI_COMM_WORLD; }

static int cs_thread_level(int l) {
	switch (l) {
	case 0: return MPI_THREAD_SINGLE;
	case 1: return MPI_THREAD_FUNNELED;
	case 2: return MPI_THREAD_SERIALIZED;
	default: return MPI_THREAD_MULTIPLE;
	}
}

static int cs_thread_level_go(int l) {
	if (l == MPI_THREAD_SINGLE) return 0;
	if (l == MPI_THREAD_FUNNELED) return 1;
	if (l == MPI_THREAD_SERIALIZED) return 2;
	return 3;
}

// cs_state is 0 before MPI_Init_thread, 1 between it and MPI_Finalize, 2
// after MPI_Finalize (the two queries are legal at any time).
static int cs_state(void) {
	int init = 0, fini = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fini);
	return fini ? 2 : (init ? 1 : 0);
}

static int cs_init_thread(int required, int *provided) {
	return MPI_Init_thread(NULL, NULL, cs_thread_level(required), provided);
}

static int cs_errors_return(void) {
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static void cs_error_string(int code, char *buf) {
	int len = 0;
	if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS || len < 0 || len >= MPI_MAX_ERROR_STRING)
		len = 0;
	buf[len] = 0;
}

static void cs_library_version(char *buf) {
	int len = 0;
	if (MPI_Get_library_version(buf, &len) != MPI_SUCCESS || len < 0 || len >= MPI_MAX_LIBRARY_VERSION_STRING)
		len = 0;
	buf[len] = 0;
}

static double cs_wtime(void) { return MPI_Wtime(); }

// cs_comm_rank and cs_comm_size return the rank or size, or -rc when the
// call fails (MPI error codes are positive).
static int cs_comm_rank(MPI_Comm c) {
	int r = 0, rc = MPI_Comm_rank(c, &r);
	return rc == MPI_SUCCESS ? r : -rc;
}

static int cs_comm_size(MPI_Comm c) {
	int s = 0, rc = MPI_Comm_size(c, &s);
	return rc == MPI_SUCCESS ? s : -rc;
}

static MPI_Op cs_op(int op) {
	switch (op) {
	case 1: return MPI_SUM;
	case 2: return MPI_MAX;
	case 3: return MPI_MIN;
	case 4: return MPI_BXOR;
	}
	return MPI_OP_NULL;
}

enum { CS_DOUBLE, CS_UINT64, CS_BYTE };

static MPI_Datatype cs_type(int t) {
	switch (t) {
	case CS_DOUBLE: return MPI_DOUBLE;
	case CS_UINT64: return MPI_UINT64_T;
	}
	return MPI_BYTE;
}

static int cs_sendrecv(void *sbuf, int scount, int dest, int stag,
		void *rbuf, int rcount, int src, int rtag, MPI_Comm c) {
	return MPI_Sendrecv(sbuf, scount, MPI_DOUBLE, dest, stag,
		rbuf, rcount, MPI_DOUBLE, src, rtag, c, MPI_STATUS_IGNORE);
}

static int cs_allreduce(void *in, void *out, int n, int type, int op, MPI_Comm c) {
	return MPI_Allreduce(in, out, n, cs_type(type), cs_op(op), c);
}

static int cs_reduce(void *in, void *out, int n, int op, int root, MPI_Comm c) {
	return MPI_Reduce(in, out, n, MPI_DOUBLE, cs_op(op), root, c);
}

static int cs_gather(void *send, void *recv, int n, int root, MPI_Comm c) {
	return MPI_Gather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, root, c);
}

static int cs_bcast(void *buf, int n, int root, MPI_Comm c) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, c);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"
)

// InitThread initializes MPI (MPI_Init_thread) asking for the thread level
// required, and sets MPI_ERRORS_RETURN on MPI_COMM_WORLD. It returns the
// level MPI provides, which may be lower than required: check it. Call it
// once per process, from a goroutine locked to its OS thread (see the
// package documentation).
func InitThread(required ThreadLevel) (provided ThreadLevel, err error) {
	if required < Single || required > Multiple {
		return 0, fmt.Errorf("mpi: InitThread: invalid thread level %d", int(required))
	}
	switch C.cs_state() {
	case 1:
		return 0, errors.New("mpi: InitThread: MPI is already initialized")
	case 2:
		return 0, errors.New("mpi: InitThread: MPI was finalized and cannot be initialized again")
	}
	var p C.int
	if rc := C.cs_init_thread(C.int(required), &p); rc != C.MPI_SUCCESS {
		return 0, mpiError("MPI_Init_thread", rc)
	}
	if rc := C.cs_errors_return(); rc != C.MPI_SUCCESS {
		return 0, mpiError("MPI_Comm_set_errhandler", rc)
	}
	return ThreadLevel(C.cs_thread_level_go(p)), nil
}

// Finalize shuts MPI down (MPI_Finalize). Free every Requests first. Call it
// from the goroutine that called InitThread.
func Finalize() error {
	if C.cs_state() != 1 {
		return errors.New("mpi: Finalize: MPI is not initialized, or already finalized")
	}
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Finalize", rc)
	}
	return nil
}

// Initialized reports whether InitThread has succeeded and Finalize has not
// yet been called (MPI_Initialized and not MPI_Finalized).
func Initialized() bool { return C.cs_state() == 1 }

// LibraryVersion returns the MPI library's version text
// (MPI_Get_library_version), such as "Open MPI v4.1.4, package: ...". It
// may be called before InitThread.
func LibraryVersion() string {
	var buf [C.MPI_MAX_LIBRARY_VERSION_STRING]C.char
	C.cs_library_version(&buf[0])
	return strings.TrimSpace(C.GoString(&buf[0]))
}

// Wtime returns MPI's wall clock (MPI_Wtime), in seconds since an arbitrary
// time in the past.
func Wtime() float64 { return float64(C.cs_wtime()) }

// mpiError is the error of the MPI call named call that returned the error
// code rc: "MPI_Isend: MPI_ERR_RANK: invalid rank".
func mpiError(call string, rc C.int) error {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	C.cs_error_string(rc, &buf[0])
	msg := strings.TrimSpace(C.GoString(&buf[0]))
	if msg == "" {
		msg = fmt.Sprintf("MPI error %d", int(rc))
	}
	return fmt.Errorf("%s: %s", call, msg)
}

// fitsCInt reports whether v fits a C int (a count, rank or tag).
func fitsCInt(v int) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// Comm is a communicator (MPI_Comm). The zero Comm is invalid: use World.
type Comm struct {
	c C.MPI_Comm
}

// World returns MPI_COMM_WORLD.
func World() Comm { return Comm{c: C.cs_world()} }

// Rank returns the calling process's rank in c (MPI_Comm_rank).
func (c Comm) Rank() (int, error) {
	r := C.cs_comm_rank(c.c)
	if r < 0 {
		return 0, mpiError("MPI_Comm_rank", -r)
	}
	return int(r), nil
}

// Size returns the number of processes in c (MPI_Comm_size).
func (c Comm) Size() (int, error) {
	s := C.cs_comm_size(c.c)
	if s < 0 {
		return 0, mpiError("MPI_Comm_size", -s)
	}
	return int(s), nil
}

// Barrier blocks until every process of c has called it (MPI_Barrier).
func (c Comm) Barrier() error {
	if rc := C.MPI_Barrier(c.c); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Barrier", rc)
	}
	return nil
}

// Abort ends every process of c with the exit code code (MPI_Abort). It
// does not return: where MPI is not running, or MPI_Abort returns, it ends
// this process with os.Exit(code).
func (c Comm) Abort(code int) {
	if C.cs_state() == 1 && fitsCInt(code) {
		C.MPI_Abort(c.c, C.int(code))
	}
	os.Exit(code)
}

// Sendrecv sends send to rank dest with tag sendTag and receives into recv
// from rank src with tag recvTag, blocking until both are done
// (MPI_Sendrecv of MPI_DOUBLE). The message received must fit in recv.
func (c Comm) Sendrecv(send Buf, dest, sendTag int, recv Buf, src, recvTag int) error {
	if !fitsCInt(dest) || !fitsCInt(sendTag) || !fitsCInt(src) || !fitsCInt(recvTag) {
		return errors.New("mpi: Sendrecv: a rank or tag does not fit a C int")
	}
	rc := C.cs_sendrecv(unsafe.Pointer(send.p), C.int(send.n), C.int(dest), C.int(sendTag),
		unsafe.Pointer(recv.p), C.int(recv.n), C.int(src), C.int(recvTag), c.c)
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Sendrecv", rc)
	}
	return nil
}

// AllreduceFloat64 combines in over every process of c with op and leaves
// the result in out on each (MPI_Allreduce of MPI_DOUBLE). in and out must
// have the same length and must not overlap.
func (c Comm) AllreduceFloat64(in, out []float64, op Op) error {
	if err := reduceArgs("AllreduceFloat64", len(in), len(out), op); err != nil {
		return err
	}
	return c.allreduce(unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(out)), len(in), C.CS_DOUBLE, op)
}

// AllreduceUint64 combines in over every process of c with op and leaves
// the result in out on each (MPI_Allreduce of MPI_UINT64_T). in and out must
// have the same length and must not overlap.
func (c Comm) AllreduceUint64(in, out []uint64, op Op) error {
	if err := reduceArgs("AllreduceUint64", len(in), len(out), op); err != nil {
		return err
	}
	return c.allreduce(unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(out)), len(in), C.CS_UINT64, op)
}

func (c Comm) allreduce(in, out unsafe.Pointer, n int, typ C.int, op Op) error {
	if rc := C.cs_allreduce(in, out, C.int(n), typ, C.int(op), c.c); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Allreduce", rc)
	}
	return nil
}

// reduceArgs checks the arguments of a reduction named name.
func reduceArgs(name string, in, out int, op Op) error {
	if op < Sum || op > BXor {
		return fmt.Errorf("mpi: %s: invalid Op %d", name, int(op))
	}
	if in != out {
		return fmt.Errorf("mpi: %s: len(in) = %d but len(out) = %d", name, in, out)
	}
	if !fitsCInt(in) {
		return fmt.Errorf("mpi: %s: %d elements do not fit a C int", name, in)
	}
	return nil
}

// ReduceFloat64 combines in over every process of c with op and leaves the
// result in out on rank root (MPI_Reduce of MPI_DOUBLE). At root, out must
// have in's length and must not overlap it; elsewhere out is not used and
// may be nil.
func (c Comm) ReduceFloat64(in, out []float64, op Op, root int) error {
	rank, err := c.Rank()
	if err != nil {
		return err
	}
	outLen := len(in) // out is checked at root only
	if rank == root {
		outLen = len(out)
	}
	if err := reduceArgs("ReduceFloat64", len(in), outLen, op); err != nil {
		return err
	}
	if !fitsCInt(root) {
		return fmt.Errorf("mpi: ReduceFloat64: root %d does not fit a C int", root)
	}
	rc := C.cs_reduce(unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(out)),
		C.int(len(in)), C.int(op), C.int(root), c.c)
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Reduce", rc)
	}
	return nil
}

// GatherFloat64 collects every process's send, in rank order, into recv on
// rank root (MPI_Gather of MPI_DOUBLE). Every process sends the same number
// of elements; at root, recv must hold len(send) times c's size, elsewhere
// recv is not used and may be nil.
func (c Comm) GatherFloat64(send, recv []float64, root int) error {
	rank, err := c.Rank()
	if err != nil {
		return err
	}
	if !fitsCInt(len(send)) || !fitsCInt(root) {
		return errors.New("mpi: GatherFloat64: the count or root does not fit a C int")
	}
	if rank == root {
		size, err := c.Size()
		if err != nil {
			return err
		}
		if len(recv) != len(send)*size {
			return fmt.Errorf("mpi: GatherFloat64: len(recv) = %d, want len(send) * size = %d * %d", len(recv), len(send), size)
		}
	}
	rc := C.cs_gather(unsafe.Pointer(unsafe.SliceData(send)), unsafe.Pointer(unsafe.SliceData(recv)),
		C.int(len(send)), C.int(root), c.c)
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Gather", rc)
	}
	return nil
}

// BcastBytes copies buf on rank root into buf on every other process of c
// (MPI_Bcast of MPI_BYTE). Every process passes a buf of the same length.
func (c Comm) BcastBytes(buf []byte, root int) error {
	if !fitsCInt(len(buf)) || !fitsCInt(root) {
		return errors.New("mpi: BcastBytes: the length or root does not fit a C int")
	}
	if rc := C.cs_bcast(unsafe.Pointer(unsafe.SliceData(buf)), C.int(len(buf)), C.int(root), c.c); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Bcast", rc)
	}
	return nil
}
