//go:build mpi

// Package mpicomm runs PhaseGap on MPI: a phasegap.Comm over package mpi's
// communicator, its halo buffers in C memory and its requests in a C
// array, so that nothing the transport reads or writes while a request is
// pending is Go memory, and nothing allocates per iteration.
package mpicomm

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/chronosync/chronosync/mpi"
	"github.com/chronosync/chronosync/phasegap"
)

// Comm is MPI_COMM_WORLD as a phasegap.Comm. MPI must be initialised, on
// the calling goroutine's locked OS thread, before New.
type Comm struct {
	world      mpi.Comm
	rank, size int
	start      time.Time
	bufs       []mpi.Buf
	halos      []*halo
	one, sum   []uint64 // SumUint64's operands, made once
}

var _ phasegap.Comm = (*Comm)(nil)

// New returns the world communicator.
func New() (*Comm, error) {
	w := mpi.World()
	rank, err := w.Rank()
	if err != nil {
		return nil, err
	}
	size, err := w.Size()
	if err != nil {
		return nil, err
	}
	return &Comm{world: w, rank: rank, size: size, start: time.Now(), one: make([]uint64, 1), sum: make([]uint64, 1)}, nil
}

// Rank is the rank in MPI_COMM_WORLD.
func (c *Comm) Rank() int { return c.rank }

// Size is MPI_COMM_WORLD's size.
func (c *Comm) Size() int { return c.size }

// Now is the monotonic clock, in ns since New.
func (c *Comm) Now() int64 { return int64(time.Since(c.start)) }

// Alloc returns n float64s of C memory.
func (c *Comm) Alloc(n int) ([]float64, error) {
	b, err := mpi.AllocFloat64(max(n, 1))
	if err != nil {
		return nil, err
	}
	c.bufs = append(c.bufs, b)
	return b.Float64s()[:n], nil
}

// buf finds the C buffer behind s (one of Alloc's).
func (c *Comm) buf(s []float64) (mpi.Buf, error) {
	p := unsafe.Pointer(unsafe.SliceData(s))
	for _, b := range c.bufs {
		if f := b.Float64s(); unsafe.Pointer(unsafe.SliceData(f)) == p {
			return b.Slice(0, len(s)), nil
		}
	}
	return mpi.Buf{}, fmt.Errorf("mpicomm: a halo buffer that Alloc did not make")
}

// Barrier is MPI_Barrier.
func (c *Comm) Barrier() error { return c.world.Barrier() }

// SumUint64 is MPI_Allreduce with MPI_SUM.
func (c *Comm) SumUint64(v uint64) (uint64, error) {
	c.one[0] = v
	if err := c.world.AllreduceUint64(c.one, c.sum, mpi.Sum); err != nil {
		return 0, err
	}
	return c.sum[0], nil
}

// Gather is MPI_Gather to rank 0.
func (c *Comm) Gather(send, recv []float64) error { return c.world.GatherFloat64(send, recv, 0) }

// Abort is MPI_Abort on the world.
func (c *Comm) Abort(code int) { c.world.Abort(code) }

// Close frees the halos' requests and the buffers.
func (c *Comm) Close() error {
	for _, h := range c.halos {
		h.Free()
	}
	for _, b := range c.bufs {
		b.Free()
	}
	c.halos, c.bufs = nil, nil
	return nil
}

// Tags: a halo travelling left (received as the right neighbour's... the
// left neighbour's right halo) and one travelling right.
const (
	tagLeft  = 0
	tagRight = 1
)

// NewHalo builds the exchange; persistent requests are initialised here
// (MPI_Send_init, MPI_Recv_init) and started by Start (MPI_Startall).
func (c *Comm) NewHalo(sendL, sendR, recvL, recvR []float64, left, right int, persistent bool) (phasegap.Halo, error) {
	h := &halo{c: c, left: left, right: right, persistent: persistent}
	var err error
	for _, x := range []struct {
		s []float64
		b *mpi.Buf
	}{{sendL, &h.sendL}, {sendR, &h.sendR}, {recvL, &h.recvL}, {recvR, &h.recvR}} {
		if *x.b, err = c.buf(x.s); err != nil {
			return nil, err
		}
	}
	if h.reqs, err = mpi.NewRequests(4); err != nil {
		return nil, err
	}
	c.halos = append(c.halos, h)
	if persistent {
		if err := h.post(h.reqs.RecvInit, h.reqs.SendInit); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// halo is one rank's exchange: requests 0, 1 receive from the left and
// right, 2, 3 send to the left and right.
type halo struct {
	c                          *Comm
	left, right                int
	persistent                 bool
	sendL, sendR, recvL, recvR mpi.Buf
	reqs                       *mpi.Requests
}

type postFn func(i int, buf mpi.Buf, peer, tag int, c mpi.Comm) error

func (h *halo) post(recv, send postFn) error {
	w := h.c.world
	if err := recv(0, h.recvL, h.left, tagRight, w); err != nil {
		return err
	}
	if err := recv(1, h.recvR, h.right, tagLeft, w); err != nil {
		return err
	}
	if err := send(2, h.sendL, h.left, tagLeft, w); err != nil {
		return err
	}
	return send(3, h.sendR, h.right, tagRight, w)
}

// Start posts the receives and sends (MPI_Irecv, MPI_Isend), or starts
// the persistent requests (MPI_Startall).
func (h *halo) Start() error {
	if h.persistent {
		return h.reqs.Startall()
	}
	return h.post(h.reqs.Irecv, h.reqs.Isend)
}

// Test is MPI_Testall.
func (h *halo) Test() (bool, error) { return h.reqs.Testall() }

// Wait is MPI_Waitall.
func (h *halo) Wait() error { return h.reqs.Waitall() }

// Exchange is two MPI_Sendrecv: the left halo leaves for the left
// neighbour as the right one arrives, then the other way.
func (h *halo) Exchange() error {
	w := h.c.world
	if err := w.Sendrecv(h.sendL, h.left, tagLeft, h.recvR, h.right, tagLeft); err != nil {
		return err
	}
	return w.Sendrecv(h.sendR, h.right, tagRight, h.recvL, h.left, tagRight)
}

// Free frees the requests (MPI_Request_free for persistent ones).
func (h *halo) Free() error {
	if h.reqs != nil {
		h.reqs.Free()
		h.reqs = nil
	}
	return nil
}
