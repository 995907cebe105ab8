//go:build mpi

package mpi

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestRankSize(t *testing.T) {
	_, rank, size := world(t)
	if size < 2 {
		t.Errorf("size = %d, want at least 2", size)
	}
	if rank < 0 || rank >= size {
		t.Errorf("rank = %d, want in [0, %d)", rank, size)
	}
	if !Initialized() {
		t.Error("Initialized() = false between InitThread and Finalize")
	}
}

func TestLibraryVersion(t *testing.T) {
	if v := LibraryVersion(); !strings.Contains(v, "Open MPI") {
		t.Errorf("LibraryVersion() = %q, want it to contain \"Open MPI\"", v)
	}
}

func TestWtime(t *testing.T) {
	t0 := Wtime()
	t1 := Wtime()
	if t1 < t0 {
		t.Errorf("Wtime went back: %v then %v", t0, t1)
	}
}

func TestAllreduce(t *testing.T) {
	c, rank, size := world(t)
	in, out := []float64{float64(rank + 1), -float64(rank)}, make([]float64, 2)
	for _, tt := range []struct {
		op   Op
		want []float64
	}{
		{Sum, []float64{float64(size * (size + 1) / 2), -float64(size * (size - 1) / 2)}},
		{Max, []float64{float64(size), 0}},
		{Min, []float64{1, -float64(size - 1)}},
	} {
		if err := c.AllreduceFloat64(in, out, tt.op); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, tt.want) {
			t.Errorf("AllreduceFloat64 op %d = %v, want %v", tt.op, out, tt.want)
		}
	}

	uin, uout := []uint64{1 << rank, 0xff << (8 * rank), uint64(rank)}, make([]uint64, 3)
	want := make([]uint64, 3)
	for r := range size {
		want[0] ^= 1 << r
		want[1] ^= 0xff << (8 * r)
		want[2] ^= uint64(r)
	}
	if err := c.AllreduceUint64(uin, uout, BXor); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(uout, want) {
		t.Errorf("AllreduceUint64 BXor = %#x, want %#x", uout, want)
	}
	if err := c.AllreduceUint64(uin[2:], uout[:1], Sum); err != nil {
		t.Fatal(err)
	}
	if want := uint64(size * (size - 1) / 2); uout[0] != want {
		t.Errorf("AllreduceUint64 Sum = %d, want %d", uout[0], want)
	}
}

func TestReduce(t *testing.T) {
	c, rank, size := world(t)
	root := size - 1
	var out []float64 // not used but at root
	if rank == root {
		out = make([]float64, 1)
	}
	if err := c.ReduceFloat64([]float64{float64(rank)}, out, Sum, root); err != nil {
		t.Fatal(err)
	}
	if want := float64(size * (size - 1) / 2); rank == root && out[0] != want {
		t.Errorf("ReduceFloat64 Sum at root = %v, want %v", out[0], want)
	}
}

func TestGather(t *testing.T) {
	c, rank, size := world(t)
	var recv []float64 // not used but at root
	if rank == 0 {
		recv = make([]float64, 2*size)
	}
	if err := c.GatherFloat64([]float64{float64(rank), float64(10 * rank)}, recv, 0); err != nil {
		t.Fatal(err)
	}
	if rank != 0 {
		return
	}
	for r := range size {
		if got := recv[2*r : 2*r+2]; got[0] != float64(r) || got[1] != float64(10*r) {
			t.Errorf("gathered from rank %d: %v, want [%d %d]", r, got, r, 10*r)
		}
	}
}

func TestBcast(t *testing.T) {
	c, rank, size := world(t)
	root := size - 1
	want := []byte("halo from the last rank")
	buf := make([]byte, len(want))
	if rank == root {
		copy(buf, want)
	}
	if err := c.BcastBytes(buf, root); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, want) {
		t.Errorf("BcastBytes: rank %d has %q, want %q", rank, buf, want)
	}
}

func TestBuf(t *testing.T) {
	if _, err := AllocFloat64(-1); err == nil {
		t.Error("AllocFloat64(-1) succeeded")
	}
	empty, err := AllocFloat64(0)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Len() != 0 || len(empty.Float64s()) != 0 {
		t.Errorf("AllocFloat64(0): Len %d, %d Float64s", empty.Len(), len(empty.Float64s()))
	}
	empty.Free()

	b, err := AllocFloat64(10)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if !slices.Equal(b.Float64s(), make([]float64, 10)) {
		t.Errorf("AllocFloat64 is not zeroed: %v", b.Float64s())
	}
	s := b.Slice(3, 7)
	if s.Len() != 4 {
		t.Errorf("Slice(3, 7).Len() = %d, want 4", s.Len())
	}
	s.Float64s()[0] = 42
	if got := b.Float64s()[3]; got != 42 {
		t.Errorf("a write through Slice(3, 7)[0] reads %v at [3], want 42", got)
	}
	if got := s.Slice(1, 4).Slice(3, 3).Len(); got != 0 {
		t.Errorf("empty sub-slice Len = %d", got)
	}
	for _, r := range [][2]int{{-1, 2}, {5, 4}, {0, 11}, {11, 11}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Slice(%d, %d) of 10 did not panic", r[0], r[1])
				}
			}()
			b.Slice(r[0], r[1])
		}()
	}
}

// TestErrors checks that failures come back as errors naming the call, and
// that the job goes on after them (MPI_ERRORS_RETURN).
func TestErrors(t *testing.T) {
	c, rank, _ := world(t)
	b, err := AllocFloat64(4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	reqs, err := NewRequests(2)
	if err != nil {
		t.Fatal(err)
	}
	defer reqs.Free()

	wantErr := func(err error, prefix string) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("error %v, want one starting %q", err, prefix)
			return
		}
		t.Log(err)
	}
	wantErr(reqs.Isend(0, b, 99, 0, c), "MPI_Isend: ")
	wantErr(reqs.Irecv(0, b, 99, 0, c), "MPI_Irecv: ")
	wantErr(reqs.Isend(0, b, 0, -5, c), "MPI_Isend: ") // a negative tag
	wantErr(reqs.Startall(), "MPI_Startall: ")         // no persistent request
	wantErr(c.AllreduceFloat64([]float64{1}, []float64{0}, BXor), "MPI_Allreduce: ")
	wantErr(c.AllreduceFloat64([]float64{1}, []float64{0, 0}, Sum), "mpi: AllreduceFloat64: ")
	wantErr(c.AllreduceUint64([]uint64{1}, []uint64{0}, 0), "mpi: AllreduceUint64: ")
	wantErr(reqs.Isend(0, b, 1<<40, 0, c), "mpi: Isend: ")
	if _, err := InitThread(Funneled); err == nil {
		t.Error("a second InitThread succeeded")
	}
	if err := c.Barrier(); err != nil {
		t.Fatalf("the job did not survive the errors: %v", err)
	}

	// A slot in use: a receive from this rank itself, then a send into the
	// same slot; the send, in the other slot, then completes the receive.
	if err := reqs.Irecv(0, b.Slice(0, 2), rank, 7, c); err != nil {
		t.Fatal(err)
	}
	wantErr(reqs.Isend(0, b.Slice(2, 4), rank, 7, c), "mpi: Isend: request slot 0 is in use")
	if err := reqs.Isend(1, b.Slice(2, 4), rank, 7, c); err != nil {
		t.Fatal(err)
	}
	if err := reqs.Waitall(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Isend into slot 2 of 2 did not panic")
		}
	}()
	_ = reqs.Isend(2, b, rank, 0, c)
}

// TestZeroAllocs checks that the calls of a timed loop allocate no Go
// memory.
func TestZeroAllocs(t *testing.T) {
	r := newRing(t, 64)
	var err error
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	loops := []struct {
		name string
		f    func()
	}{
		{"Irecv Isend Waitall", func() {
			keep(r.nonblocking())
			keep(r.reqs.Waitall())
		}},
		{"Irecv Isend Testall", func() {
			keep(r.nonblocking())
			for done := false; !done && err == nil; {
				var e error
				done, e = r.reqs.Testall()
				keep(e)
			}
		}},
		{"Irecv Isend Testsome", func() {
			keep(r.nonblocking())
			for n := 0; n < 4 && err == nil; {
				k, e := r.reqs.Testsome()
				n += k
				keep(e)
			}
		}},
		{"Sendrecv", func() {
			keep(r.comm.Sendrecv(r.sendR, r.right, tagToRight, r.recvL, r.left, tagToRight))
		}},
		{"Barrier Rank Size", func() {
			keep(r.comm.Barrier())
			_, e := r.comm.Rank()
			keep(e)
			_, e = r.comm.Size()
			keep(e)
		}},
		{"AllreduceFloat64", func() {
			in, out := r.sendL.Float64s()[:1], r.recvL.Float64s()[:1]
			keep(r.comm.AllreduceFloat64(in, out, Sum))
		}},
	}
	for _, l := range loops {
		if n := testing.AllocsPerRun(100, l.f); n != 0 || err != nil {
			t.Errorf("%s: %v allocations per run (error %v), want 0", l.name, n, err)
		}
	}
	if err := r.persistent(); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		keep(r.reqs.Startall())
		keep(r.reqs.Waitall())
	})
	if n != 0 || err != nil {
		t.Errorf("Startall Waitall: %v allocations per run (error %v), want 0", n, err)
	}
}
