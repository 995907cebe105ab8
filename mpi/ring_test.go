//go:build mpi

package mpi

import (
	"testing"
	"time"
)

// world returns MPI_COMM_WORLD, this rank and the size, after a barrier
// that keeps the ranks' tests in step.
func world(tb testing.TB) (c Comm, rank, size int) {
	tb.Helper()
	c = World()
	if err := c.Barrier(); err != nil {
		tb.Fatal(err)
	}
	rank, err := c.Rank()
	if err != nil {
		tb.Fatal(err)
	}
	if size, err = c.Size(); err != nil {
		tb.Fatal(err)
	}
	return c, rank, size
}

// The ring's tags: a halo travelling to the right neighbour, and one to the
// left.
const (
	tagToRight = 1
	tagToLeft  = 2
)

// ring is one rank's halo exchange on a ring: it sends a halo of n
// float64s to each neighbour and receives one from each. Slots 0 and 1
// receive from the left and the right, 2 and 3 send to the left and right.
type ring struct {
	comm                       Comm
	rank, left, right          int
	mem                        Buf // the four halos below, one allocation
	sendL, sendR, recvL, recvR Buf
	reqs                       *Requests
}

func newRing(tb testing.TB, n int) *ring {
	tb.Helper()
	c, rank, size := world(tb)
	mem, err := AllocFloat64(4 * n)
	if err != nil {
		tb.Fatal(err)
	}
	reqs, err := NewRequests(4)
	if err != nil {
		mem.Free()
		tb.Fatal(err)
	}
	r := &ring{
		comm: c, rank: rank, left: (rank + size - 1) % size, right: (rank + 1) % size,
		mem: mem, sendL: mem.Slice(0, n), sendR: mem.Slice(n, 2*n),
		recvL: mem.Slice(2*n, 3*n), recvR: mem.Slice(3*n, 4*n), reqs: reqs,
	}
	tb.Cleanup(func() {
		if err := r.reqs.Free(); err != nil {
			tb.Error(err)
		}
		r.mem.Free()
	})
	return r
}

// post posts the exchange's nonblocking requests (post) or makes them
// persistent (post with RecvInit and SendInit).
func (r *ring) post(recv, send func(i int, buf Buf, peer, tag int, c Comm) error) error {
	if err := recv(0, r.recvL, r.left, tagToRight, r.comm); err != nil {
		return err
	}
	if err := recv(1, r.recvR, r.right, tagToLeft, r.comm); err != nil {
		return err
	}
	if err := send(2, r.sendL, r.left, tagToLeft, r.comm); err != nil {
		return err
	}
	return send(3, r.sendR, r.right, tagToRight, r.comm)
}

// nonblocking posts the exchange with Irecv and Isend.
func (r *ring) nonblocking() error { return r.post(r.reqs.Irecv, r.reqs.Isend) }

// persistent makes the exchange's requests persistent.
func (r *ring) persistent() error { return r.post(r.reqs.RecvInit, r.reqs.SendInit) }

// value is element j of the halo that rank sends to the right in
// iteration it; the halo sent to the left is its negation.
func value(rank, it, j int) float64 { return float64(rank*1_000_000 + it*1_000 + j + 1) }

// fill writes iteration it's halos.
func (r *ring) fill(it int) {
	sl, sr := r.sendL.Float64s(), r.sendR.Float64s()
	for j := range sr {
		sr[j] = value(r.rank, it, j)
		sl[j] = -value(r.rank, it, j)
	}
}

// check verifies the halos received in iteration it.
func (r *ring) check(tb testing.TB, it int) {
	tb.Helper()
	rl, rr := r.recvL.Float64s(), r.recvR.Float64s()
	for j := range rl {
		if want := value(r.left, it, j); rl[j] != want {
			tb.Fatalf("iteration %d: left halo[%d] = %v, want %v", it, j, rl[j], want)
		}
		if want := -value(r.right, it, j); rr[j] != want {
			tb.Fatalf("iteration %d: right halo[%d] = %v, want %v", it, j, rr[j], want)
		}
	}
}

// poll calls done until it reports true, failing tb after a minute.
func poll(tb testing.TB, done func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := done()
		if err != nil {
			tb.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("requests still pending after a minute")
		}
	}
}

func TestRingNonblocking(t *testing.T) {
	r := newRing(t, 100)
	for it := range 5 {
		r.fill(it)
		if err := r.nonblocking(); err != nil {
			t.Fatal(err)
		}
		if err := r.reqs.Waitall(); err != nil {
			t.Fatal(err)
		}
		r.check(t, it)
	}
}

func TestRingPersistent(t *testing.T) {
	r := newRing(t, 100)
	if err := r.persistent(); err != nil {
		t.Fatal(err)
	}
	for it := range 5 {
		r.fill(it)
		if err := r.reqs.Startall(); err != nil {
			t.Fatal(err)
		}
		if err := r.reqs.Waitall(); err != nil {
			t.Fatal(err)
		}
		r.check(t, it)
	}
	// A persistent request keeps its slot until freed; then it takes a new
	// request. The rest are left to Requests.Free (newRing's cleanup).
	if err := r.reqs.RecvInit(0, r.recvL, r.left, tagToRight, r.comm); err == nil {
		t.Fatal("RecvInit into a slot holding a persistent request succeeded")
	}
	if err := r.reqs.RequestFree(0); err != nil {
		t.Fatal(err)
	}
	if err := r.reqs.RecvInit(0, r.recvL, r.left, tagToRight, r.comm); err != nil {
		t.Fatal(err)
	}
	r.fill(5)
	if err := r.reqs.Startall(); err != nil {
		t.Fatal(err)
	}
	if err := r.reqs.Waitall(); err != nil {
		t.Fatal(err)
	}
	r.check(t, 5)
}

func TestRingPolling(t *testing.T) {
	r := newRing(t, 1000)
	for it := range 3 {
		r.fill(it)
		if err := r.nonblocking(); err != nil {
			t.Fatal(err)
		}
		poll(t, r.reqs.Testall)
		r.check(t, it)
	}
	for it := 3; it < 6; it++ {
		r.fill(it)
		if err := r.nonblocking(); err != nil {
			t.Fatal(err)
		}
		total := 0
		poll(t, func() (bool, error) {
			k, err := r.reqs.Testsome()
			total += k
			return total >= 4, err
		})
		if total != 4 {
			t.Fatalf("Testsome completed %d requests, want 4", total)
		}
		r.check(t, it)
	}
	// Nothing is active now.
	if k, err := r.reqs.Testsome(); k != 0 || err != nil {
		t.Errorf("Testsome with no active request = %d, %v; want 0, nil", k, err)
	}
	if done, err := r.reqs.Testall(); !done || err != nil {
		t.Errorf("Testall with no active request = %v, %v; want true, nil", done, err)
	}
}

func TestSendrecvRing(t *testing.T) {
	r := newRing(t, 10)
	for it := range 3 {
		r.fill(it)
		if err := r.comm.Sendrecv(r.sendR, r.right, tagToRight, r.recvL, r.left, tagToRight); err != nil {
			t.Fatal(err)
		}
		if err := r.comm.Sendrecv(r.sendL, r.left, tagToLeft, r.recvR, r.right, tagToLeft); err != nil {
			t.Fatal(err)
		}
		r.check(t, it)
	}
}
