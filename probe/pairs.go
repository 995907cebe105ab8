package probe

import "github.com/chronosync/chronosync/estimate"

// full is a pair's state at full width: what get returns and set takes.
type full struct {
	t [2][4]int64 // [slot][t1..t4]; t3 is the responder's user-space reading
	n [2]uint8    // timestamps known per slot: 1 sent, 4 answered
	// tx is the reply's transmit timestamp, carried by a later reply, and
	// src its source; src is 0 until one came.
	tx  [2]int64
	src [2]estimate.T3Source
	// ambiguous: two different replies came (a duplicated request), so a
	// carried transmit timestamp could be either's.
	ambiguous [2]bool
}

// pair is a full held in 56 bytes instead of 88: an edge holds one for
// every pair of its window until the window closes, which is most of a
// large simulation's memory. Each timestamp a slot knows is a 32-bit
// difference: t1 from base (slot 0's t1, or slot 1's when slot 0 was never
// sent), t2 from t1, t3 from t2, t4 from t1, and tx from t2 (from t1 while
// unanswered). A pair any of whose differences does not fit (clocks more
// than 2 s apart) is held whole in its edge's wide map instead; set checks
// that get gives back exactly what it stored.
type pair struct {
	base      int64
	d         [2][5]int32
	n         [2]uint8
	src       [2]estimate.T3Source
	ambiguous [2]bool
	wide      bool
}

// get returns pair k.
func (e *edge) get(k int) full {
	c := &e.pairs[k]
	if c.wide {
		return e.wide[k]
	}
	return c.full()
}

// set stores f as pair k.
func (e *edge) set(k int, f full) {
	c := &e.pairs[k]
	if !c.wide {
		if ok := c.pack(f); ok && c.full() == f {
			return
		}
		*c = pair{wide: true}
		if e.wide == nil {
			e.wide = map[int]full{}
		}
	}
	e.wide[k] = f
}

func (c *pair) full() full {
	f := full{n: c.n, src: c.src, ambiguous: c.ambiguous}
	for s := range 2 {
		d := &c.d[s]
		t := &f.t[s]
		if c.n[s] >= 1 {
			t[0] = c.base + int64(d[0])
		}
		if c.n[s] == 4 {
			t[1] = t[0] + int64(d[1])
			t[2] = t[1] + int64(d[2])
			t[3] = t[0] + int64(d[3])
		}
		if c.src[s] != 0 {
			f.tx[s] = txRef(t, c.n[s]) + int64(d[4])
		}
	}
	return f
}

// txRef is what a slot's tx is held as a difference from.
func txRef(t *[4]int64, n uint8) int64 {
	if n == 4 {
		return t[1]
	}
	return t[0]
}

// pack stores f's differences in c; it reports whether every one fitted.
func (c *pair) pack(f full) bool {
	*c = pair{n: f.n, src: f.src, ambiguous: f.ambiguous}
	c.base = f.t[0][0]
	if f.n[0] == 0 {
		c.base = f.t[1][0]
	}
	ok := true
	put := func(dst *int32, v int64) {
		*dst = int32(v)
		ok = ok && int64(*dst) == v
	}
	for s := range 2 {
		t := &f.t[s]
		// What a slot does not know yet is 0, and full gives 0 back for
		// it; set's check catches a slot that breaks this.
		if f.n[s] >= 1 {
			put(&c.d[s][0], t[0]-c.base)
		}
		if f.n[s] == 4 {
			put(&c.d[s][1], t[1]-t[0])
			put(&c.d[s][2], t[2]-t[1])
			put(&c.d[s][3], t[3]-t[0])
		}
		if f.src[s] != 0 {
			put(&c.d[s][4], f.tx[s]-txRef(t, f.n[s]))
		}
	}
	return ok
}
