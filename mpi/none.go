//go:build !mpi

package mpi

import (
	"fmt"
	"os"
)

// This file is the package without MPI: the API of mpi.go and requests.go,
// every call that would reach MPI returning ErrNotBuilt.

// InitThread returns ErrNotBuilt.
func InitThread(required ThreadLevel) (provided ThreadLevel, err error) { return 0, ErrNotBuilt }

// Finalize returns ErrNotBuilt.
func Finalize() error { return ErrNotBuilt }

// Initialized returns false: MPI is never initialized in this build.
func Initialized() bool { return false }

// LibraryVersion returns "": there is no MPI library in this build.
func LibraryVersion() string { return "" }

// Wtime returns 0: there is no MPI clock in this build.
func Wtime() float64 { return 0 }

// Comm is a communicator; in this build, none works.
type Comm struct{}

// World returns the zero Comm.
func World() Comm { return Comm{} }

// Rank returns ErrNotBuilt.
func (Comm) Rank() (int, error) { return 0, ErrNotBuilt }

// Size returns ErrNotBuilt.
func (Comm) Size() (int, error) { return 0, ErrNotBuilt }

// Barrier returns ErrNotBuilt.
func (Comm) Barrier() error { return ErrNotBuilt }

// Abort ends this process with os.Exit(code): like MPI_Abort, it does not
// return.
func (Comm) Abort(code int) { os.Exit(code) }

// Sendrecv returns ErrNotBuilt.
func (Comm) Sendrecv(send Buf, dest, sendTag int, recv Buf, src, recvTag int) error {
	return ErrNotBuilt
}

// AllreduceFloat64 returns ErrNotBuilt.
func (Comm) AllreduceFloat64(in, out []float64, op Op) error { return ErrNotBuilt }

// AllreduceUint64 returns ErrNotBuilt.
func (Comm) AllreduceUint64(in, out []uint64, op Op) error { return ErrNotBuilt }

// ReduceFloat64 returns ErrNotBuilt.
func (Comm) ReduceFloat64(in, out []float64, op Op, root int) error { return ErrNotBuilt }

// GatherFloat64 returns ErrNotBuilt.
func (Comm) GatherFloat64(send, recv []float64, root int) error { return ErrNotBuilt }

// BcastBytes returns ErrNotBuilt.
func (Comm) BcastBytes(buf []byte, root int) error { return ErrNotBuilt }

// Buf is a float64 buffer in C memory; in this build only the empty Buf
// exists.
type Buf struct{}

// AllocFloat64 returns ErrNotBuilt.
func AllocFloat64(n int) (Buf, error) { return Buf{}, ErrNotBuilt }

// Free does nothing.
func (Buf) Free() {}

// Len returns 0.
func (Buf) Len() int { return 0 }

// Float64s returns nil.
func (Buf) Float64s() []float64 { return nil }

// Slice returns the empty Buf for [0, 0) and panics otherwise, as slicing
// an empty slice does.
func (b Buf) Slice(lo, hi int) Buf {
	if lo != 0 || hi != 0 {
		panic(fmt.Sprintf("mpi: Buf.Slice[%d:%d] out of range with length 0", lo, hi))
	}
	return b
}

// Requests is an array of MPI requests; in this build none exists.
type Requests struct{}

// NewRequests returns ErrNotBuilt.
func NewRequests(n int) (*Requests, error) { return nil, ErrNotBuilt }

// Free does nothing.
func (*Requests) Free() error { return nil }

// Isend returns ErrNotBuilt.
func (*Requests) Isend(i int, buf Buf, dest, tag int, c Comm) error { return ErrNotBuilt }

// Irecv returns ErrNotBuilt.
func (*Requests) Irecv(i int, buf Buf, src, tag int, c Comm) error { return ErrNotBuilt }

// SendInit returns ErrNotBuilt.
func (*Requests) SendInit(i int, buf Buf, dest, tag int, c Comm) error { return ErrNotBuilt }

// RecvInit returns ErrNotBuilt.
func (*Requests) RecvInit(i int, buf Buf, src, tag int, c Comm) error { return ErrNotBuilt }

// Startall returns ErrNotBuilt.
func (*Requests) Startall() error { return ErrNotBuilt }

// Waitall returns ErrNotBuilt.
func (*Requests) Waitall() error { return ErrNotBuilt }

// Testall returns ErrNotBuilt.
func (*Requests) Testall() (done bool, err error) { return false, ErrNotBuilt }

// Testsome returns ErrNotBuilt.
func (*Requests) Testsome() (completed int, err error) { return 0, ErrNotBuilt }

// RequestFree returns ErrNotBuilt.
func (*Requests) RequestFree(i int) error { return ErrNotBuilt }
