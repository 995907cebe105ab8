package phasegap

import (
	"sync"
	"time"
)

// memRing is P in-process ranks joined in a ring by channels, for tests
// without MPI: each rank runs Run on its own goroutine.
type memRing struct {
	size  int
	start time.Time
	// inbox[r][tag] carries the halos rank r receives: tag 0 travels
	// left (received as the right halo), tag 1 right.
	inbox [][2]chan []float64

	mu      sync.Mutex
	cond    *sync.Cond
	gen     int
	arrived int
	sum     uint64
	gather  [][]float64
	result  uint64
}

func newMemRing(size int) *memRing {
	m := &memRing{size: size, start: time.Now(), inbox: make([][2]chan []float64, size), gather: make([][]float64, size)}
	m.cond = sync.NewCond(&m.mu)
	for i := range m.inbox {
		m.inbox[i] = [2]chan []float64{make(chan []float64, 4), make(chan []float64, 4)}
	}
	return m
}

// memComm is one rank of a memRing.
type memComm struct {
	m    *memRing
	rank int
}

func (m *memRing) comm(rank int) *memComm { return &memComm{m: m, rank: rank} }

func (c *memComm) Rank() int                          { return c.rank }
func (c *memComm) Size() int                          { return c.m.size }
func (c *memComm) Now() int64                         { return int64(time.Since(c.m.start)) }
func (c *memComm) Alloc(n int) ([]float64, error)     { return make([]float64, n), nil }
func (c *memComm) Abort(int)                          { panic("abort") }
func (c *memComm) Close() error                       { return nil }
func (c *memComm) Barrier() error                     { c.collective(func() {}); return nil }
func (c *memComm) SumUint64(v uint64) (uint64, error) { return c.sum(v), nil }

// collective runs f under the ring's lock, then waits for every rank.
func (c *memComm) collective(f func()) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
	gen := m.gen
	if m.arrived++; m.arrived == m.size {
		m.arrived, m.gen = 0, m.gen+1
		m.cond.Broadcast()
		return
	}
	for gen == m.gen {
		m.cond.Wait()
	}
}

func (c *memComm) sum(v uint64) uint64 {
	c.collective(func() {
		if c.m.arrived == 0 {
			c.m.sum = 0
		}
		c.m.sum += v
		if c.m.arrived == c.m.size-1 {
			c.m.result = c.m.sum
		}
	})
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.result
}

func (c *memComm) Gather(send, recv []float64) error {
	c.collective(func() { c.m.gather[c.rank] = append([]float64(nil), send...) })
	if c.rank == 0 {
		c.m.mu.Lock()
		for i, g := range c.m.gather {
			copy(recv[i*len(send):], g)
		}
		c.m.mu.Unlock()
	}
	c.collective(func() {}) // nobody overwrites gather before rank 0 read it
	return nil
}

func (c *memComm) NewHalo(sendL, sendR, recvL, recvR []float64, left, right int, _ bool) (Halo, error) {
	return &memHalo{c: c, sendL: sendL, sendR: sendR, recvL: recvL, recvR: recvR, left: left, right: right}, nil
}

// memHalo exchanges through the ring's channels; the receives complete
// when Test or Wait finds both halos.
type memHalo struct {
	c                          *memComm
	sendL, sendR, recvL, recvR []float64
	left, right                int
	gotL, gotR                 bool
}

func (h *memHalo) Start() error {
	h.gotL, h.gotR = false, false
	if h.c.m.size == 1 { // a ring of one: both halos are its own, at once, without allocating
		copy(h.recvR, h.sendL)
		copy(h.recvL, h.sendR)
		h.gotL, h.gotR = true, true
		return nil
	}
	h.c.m.inbox[h.left][0] <- append([]float64(nil), h.sendL...)
	h.c.m.inbox[h.right][1] <- append([]float64(nil), h.sendR...)
	return nil
}

func (h *memHalo) take(block bool) bool {
	in := h.c.m.inbox[h.c.rank]
	for _, w := range []struct {
		got *bool
		c   chan []float64
		dst []float64
	}{{&h.gotR, in[0], h.recvR}, {&h.gotL, in[1], h.recvL}} {
		if *w.got {
			continue
		}
		if block {
			copy(w.dst, <-w.c)
			*w.got = true
			continue
		}
		select {
		case b := <-w.c:
			copy(w.dst, b)
			*w.got = true
		default:
		}
	}
	return h.gotL && h.gotR
}

func (h *memHalo) Test() (bool, error) { return h.take(false), nil }
func (h *memHalo) Wait() error         { h.take(true); return nil }
func (h *memHalo) Exchange() error {
	if err := h.Start(); err != nil {
		return err
	}
	return h.Wait()
}
func (h *memHalo) Free() error { return nil }
