package phasegap

// Comm is the communicator a PhaseGap rank runs on: MPI (package
// phasegap/mpicomm, built with -tags mpi) or a model of it. Every call
// comes from the goroutine that runs the rank (the master thread, locked
// to its OS thread under MPI: MPI_THREAD_FUNNELED).
type Comm interface {
	// Rank and Size are the rank's place in the ring and the ring's size.
	Rank() int
	Size() int
	// Now is the rank's clock, in ns from an arbitrary origin.
	Now() int64
	// Alloc returns n zeroed float64s that the transport may read and
	// write while a request is pending (C memory under MPI: never moved
	// or collected). They stay valid until Close.
	Alloc(n int) ([]float64, error)
	// NewHalo returns the exchange of the four halo buffers (each from
	// Alloc) with the ring neighbours left and right: sendL goes to left,
	// which receives it in its recvR; sendR goes to right, which receives
	// it in its recvL. Persistent requests when persistent.
	NewHalo(sendL, sendR, recvL, recvR []float64, left, right int, persistent bool) (Halo, error)
	Barrier() error
	// SumUint64 is an Allreduce of v, summed with wraparound.
	SumUint64(v uint64) (uint64, error)
	// Gather gathers every rank's send (each the same length) into recv
	// at rank 0, in rank order; recv is ignored elsewhere.
	Gather(send, recv []float64) error
	// Abort ends every rank with code (MPI_Abort).
	Abort(code int)
	// Close frees what Alloc and NewHalo made.
	Close() error
}

// Halo is one rank's halo exchange. Start, Test and Wait are the
// nonblocking exchange (Irecv×2 and Isend×2, or Startall); Exchange is the
// blocking one (two Sendrecv). None allocates.
type Halo interface {
	Start() error
	// Test reports whether all four requests completed (Testall).
	Test() (bool, error)
	Wait() error
	Exchange() error
	Free() error
}
