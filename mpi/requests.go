//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <mpi.h>

static MPI_Request *cs_requests_new(int n) {
	MPI_Request *r = calloc(n > 0 ? n : 1, sizeof *r);
	if (r != NULL)
		for (int i = 0; i < n; i++)
			r[i] = MPI_REQUEST_NULL;
	return r;
}

// cs_requests_free frees every request left in r, returning the first
// error code, then r itself.
static int cs_requests_free(MPI_Request *r, int n) {
	int first = MPI_SUCCESS;
	for (int i = 0; i < n; i++) {
		if (r[i] == MPI_REQUEST_NULL)
			continue;
		int rc = MPI_Request_free(&r[i]);
		if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
			first = rc;
	}
	free(r);
	return first;
}

static int cs_request_free(MPI_Request *r, int i) {
	return r[i] == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_Request_free(&r[i]);
}

// The posting helpers return MPI's code, or CS_IN_USE (negative, unlike
// MPI's codes) without calling MPI when slot i still holds a request.
enum { CS_IN_USE = -1 };

static int cs_isend(double *buf, int n, int dest, int tag, MPI_Comm c, MPI_Request *r, int i) {
	if (r[i] != MPI_REQUEST_NULL) return CS_IN_USE;
	return MPI_Isend(buf, n, MPI_DOUBLE, dest, tag, c, &r[i]);
}

static int cs_irecv(double *buf, int n, int src, int tag, MPI_Comm c, MPI_Request *r, int i) {
	if (r[i] != MPI_REQUEST_NULL) return CS_IN_USE;
	return MPI_Irecv(buf, n, MPI_DOUBLE, src, tag, c, &r[i]);
}

static int cs_send_init(double *buf, int n, int dest, int tag, MPI_Comm c, MPI_Request *r, int i) {
	if (r[i] != MPI_REQUEST_NULL) return CS_IN_USE;
	return MPI_Send_init(buf, n, MPI_DOUBLE, dest, tag, c, &r[i]);
}

static int cs_recv_init(double *buf, int n, int src, int tag, MPI_Comm c, MPI_Request *r, int i) {
	if (r[i] != MPI_REQUEST_NULL) return CS_IN_USE;
	return MPI_Recv_init(buf, n, MPI_DOUBLE, src, tag, c, &r[i]);
}

static int cs_waitall(int n, MPI_Request *r) {
	return MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
}

// cs_testall returns 1 when every request is complete, 0 when not, or -rc
// when MPI_Testall fails.
static int cs_testall(int n, MPI_Request *r) {
	int flag = 0, rc = MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
	return rc == MPI_SUCCESS ? (flag != 0) : -rc;
}

// cs_testsome returns how many requests completed (0 when none is active),
// or -rc when MPI_Testsome fails.
static int cs_testsome(int n, MPI_Request *r, int *indices) {
	int out = 0, rc = MPI_Testsome(n, r, &out, indices, MPI_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS) return -rc;
	return out == MPI_UNDEFINED ? 0 : out;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Buf is a float64 buffer in C memory, which Go never moves or collects, so
// that MPI may keep its address while a request is pending. A Buf is a
// small value: copies and Slices share the same memory. The zero Buf is
// empty.
type Buf struct {
	base unsafe.Pointer // the allocation, for Free
	p    *C.double      // the first element of this range
	n    int
}

// AllocFloat64 allocates a Buf of n float64s in C memory, zeroed. Free it
// when done.
func AllocFloat64(n int) (Buf, error) {
	if n < 0 || n > math.MaxInt32 {
		return Buf{}, fmt.Errorf("mpi: AllocFloat64: length %d out of range [0, %d]", n, math.MaxInt32)
	}
	p := C.calloc(C.size_t(max(n, 1)), C.sizeof_double)
	if p == nil {
		return Buf{}, fmt.Errorf("mpi: AllocFloat64: calloc of %d float64s failed", n)
	}
	return Buf{base: p, p: (*C.double)(p), n: n}, nil
}

// Free releases the allocation b belongs to: b, and every Buf sliced from
// the same allocation, must not be used again. Call it once per
// AllocFloat64, after every request that uses the memory is complete.
// Freeing the zero Buf does nothing.
func (b Buf) Free() {
	if b.base != nil {
		C.free(b.base)
	}
}

// Len returns the number of float64s in b.
func (b Buf) Len() int { return b.n }

// Float64s returns b's memory as a slice for Go code to read and write. The
// slice is valid until Free; do not write a range that a pending request
// sends or receives.
func (b Buf) Float64s() []float64 {
	if b.p == nil {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(b.p)), b.n)
}

// Slice returns the elements [lo, hi) of b, sharing b's memory. It panics,
// as slicing does, unless 0 <= lo <= hi <= b.Len().
func (b Buf) Slice(lo, hi int) Buf {
	if lo < 0 || hi < lo || hi > b.n {
		panic(fmt.Sprintf("mpi: Buf.Slice[%d:%d] out of range with length %d", lo, hi, b.n))
	}
	if b.p == nil {
		return b
	}
	return Buf{base: b.base, p: (*C.double)(unsafe.Add(unsafe.Pointer(b.p), lo*C.sizeof_double)), n: hi - lo}
}

// Requests is a fixed array of MPI requests (MPI_Request) in C memory,
// addressed by slot index. A slot is empty (MPI_REQUEST_NULL) until a
// request is posted in it; a nonblocking request empties its slot when it
// completes, a persistent one stays until RequestFree or Free. A method
// given an index out of range panics, as indexing does.
type Requests struct {
	reqs *C.MPI_Request
	idx  *C.int // MPI_Testsome's array of indices, n long
	n    int
}

// NewRequests returns n empty request slots. Free them when done.
func NewRequests(n int) (*Requests, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("mpi: NewRequests: length %d out of range [0, %d]", n, math.MaxInt32)
	}
	reqs := C.cs_requests_new(C.int(n))
	if reqs == nil {
		return nil, fmt.Errorf("mpi: NewRequests: calloc of %d requests failed", n)
	}
	idx := (*C.int)(C.calloc(C.size_t(max(n, 1)), C.sizeof_int))
	if idx == nil {
		C.free(unsafe.Pointer(reqs))
		return nil, fmt.Errorf("mpi: NewRequests: calloc of %d indices failed", n)
	}
	return &Requests{reqs: reqs, idx: idx, n: n}, nil
}

// Free frees every request left in r (MPI_Request_free), persistent ones
// included, then r's C memory; r is then empty, and freeing it again does
// nothing. Complete nonblocking requests (Waitall) first.
func (r *Requests) Free() error {
	if r.reqs == nil {
		return nil
	}
	rc := C.cs_requests_free(r.reqs, C.int(r.n))
	C.free(unsafe.Pointer(r.idx))
	r.reqs, r.idx, r.n = nil, nil, 0
	if rc != C.MPI_SUCCESS {
		return mpiError("MPI_Request_free", rc)
	}
	return nil
}

// check panics unless i is a slot of r.
func (r *Requests) check(i int) {
	if i < 0 || i >= r.n {
		panic(fmt.Sprintf("mpi: request index %d out of range with length %d", i, r.n))
	}
}

// postError is the error of the posting helper of method (which calls
// call) that returned rc for slot i.
func postError(method, call string, rc C.int, i int) error {
	if rc == C.CS_IN_USE {
		return fmt.Errorf("mpi: %s: request slot %d is in use", method, i)
	}
	return mpiError(call, rc)
}

// Isend starts sending buf to rank dest with tag in slot i (MPI_Isend of
// MPI_DOUBLE). Slot i must be empty, and buf must not be written until the
// request completes.
func (r *Requests) Isend(i int, buf Buf, dest, tag int, c Comm) error {
	r.check(i)
	if !fitsCInt(dest) || !fitsCInt(tag) {
		return errors.New("mpi: Isend: the rank or tag does not fit a C int")
	}
	if rc := C.cs_isend(buf.p, C.int(buf.n), C.int(dest), C.int(tag), c.c, r.reqs, C.int(i)); rc != C.MPI_SUCCESS {
		return postError("Isend", "MPI_Isend", rc, i)
	}
	return nil
}

// Irecv starts receiving into buf from rank src with tag in slot i
// (MPI_Irecv of MPI_DOUBLE). Slot i must be empty, and buf must not be read
// or written until the request completes.
func (r *Requests) Irecv(i int, buf Buf, src, tag int, c Comm) error {
	r.check(i)
	if !fitsCInt(src) || !fitsCInt(tag) {
		return errors.New("mpi: Irecv: the rank or tag does not fit a C int")
	}
	if rc := C.cs_irecv(buf.p, C.int(buf.n), C.int(src), C.int(tag), c.c, r.reqs, C.int(i)); rc != C.MPI_SUCCESS {
		return postError("Irecv", "MPI_Irecv", rc, i)
	}
	return nil
}

// SendInit makes slot i a persistent request that sends buf to rank dest
// with tag each time Startall starts it (MPI_Send_init of MPI_DOUBLE). Slot
// i must be empty; it stays in use until RequestFree or Free.
func (r *Requests) SendInit(i int, buf Buf, dest, tag int, c Comm) error {
	r.check(i)
	if !fitsCInt(dest) || !fitsCInt(tag) {
		return errors.New("mpi: SendInit: the rank or tag does not fit a C int")
	}
	if rc := C.cs_send_init(buf.p, C.int(buf.n), C.int(dest), C.int(tag), c.c, r.reqs, C.int(i)); rc != C.MPI_SUCCESS {
		return postError("SendInit", "MPI_Send_init", rc, i)
	}
	return nil
}

// RecvInit makes slot i a persistent request that receives into buf from
// rank src with tag each time Startall starts it (MPI_Recv_init of
// MPI_DOUBLE). Slot i must be empty; it stays in use until RequestFree or
// Free.
func (r *Requests) RecvInit(i int, buf Buf, src, tag int, c Comm) error {
	r.check(i)
	if !fitsCInt(src) || !fitsCInt(tag) {
		return errors.New("mpi: RecvInit: the rank or tag does not fit a C int")
	}
	if rc := C.cs_recv_init(buf.p, C.int(buf.n), C.int(src), C.int(tag), c.c, r.reqs, C.int(i)); rc != C.MPI_SUCCESS {
		return postError("RecvInit", "MPI_Recv_init", rc, i)
	}
	return nil
}

// Startall starts every slot's persistent request (MPI_Startall). Every
// slot must hold an inactive persistent request.
func (r *Requests) Startall() error {
	if rc := C.MPI_Startall(C.int(r.n), r.reqs); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Startall", rc)
	}
	return nil
}

// Waitall blocks until every request of r is complete (MPI_Waitall). Empty
// slots and inactive persistent requests count as complete.
func (r *Requests) Waitall() error {
	if rc := C.cs_waitall(C.int(r.n), r.reqs); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Waitall", rc)
	}
	return nil
}

// Testall reports whether every request of r is complete, without blocking
// (MPI_Testall). When it is, the requests are completed as by Waitall;
// when not, none is.
func (r *Requests) Testall() (done bool, err error) {
	f := C.cs_testall(C.int(r.n), r.reqs)
	if f < 0 {
		return false, mpiError("MPI_Testall", -f)
	}
	return f == 1, nil
}

// Testsome completes the requests of r that have finished since the last
// call, without blocking (MPI_Testsome), and returns how many it completed.
// It returns 0 when none has, and also when no slot holds an active
// request: count completions, or use Testall, to know when all are done.
func (r *Requests) Testsome() (completed int, err error) {
	k := C.cs_testsome(C.int(r.n), r.reqs, r.idx)
	if k < 0 {
		return 0, mpiError("MPI_Testsome", -k)
	}
	return int(k), nil
}

// RequestFree frees the request in slot i (MPI_Request_free), emptying the
// slot; a persistent request must be inactive. An empty slot is left as it
// is.
func (r *Requests) RequestFree(i int) error {
	r.check(i)
	if rc := C.cs_request_free(r.reqs, C.int(i)); rc != C.MPI_SUCCESS {
		return mpiError("MPI_Request_free", rc)
	}
	return nil
}
