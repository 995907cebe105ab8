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

// pair is a full held in 40 bytes instead of 88: an edge holds one for
// every pair of its window until the window closes, which is most of a
// large simulation's memory (80,000 edges × 1,250 pairs at 10,000 nodes
// 8-regular with 1 s windows). The pair's base t1 (slot 0's, or slot 1's
// when slot 0 was never sent) is a 32-bit difference from its edge's
// epoch (the t1 of the epoch's first pair: see edge.epochs), slot 1's t1
// a 16-bit difference from slot 0's when both were sent; each slot's
// other timestamps are 32-bit differences: t2 from t1, t3 from t2, t4
// from t1, and tx from t2 (from t1 while unanswered). n, src and
// ambiguous are packed in bits. A pair any of whose differences does not
// fit (clocks more than 2 s apart) is held whole in its edge's wide map
// instead; set checks that get gives back exactly what it stored.
type pair struct {
	d    [2][4]int32 // [slot]: t2−t1, t3−t2, t4−t1, tx−ref
	base int32       // the base t1 − the epoch's
	dt1  int16       // slot 1's t1 − slot 0's, where both were sent
	bits uint16      // n, src, ambiguous (2, 2 and 1 bits a slot), wide
}

const (
	slotBits = 5       // bits of one slot in pair.bits
	wideBit  = 1 << 10 // pair.bits: the pair is in the edge's wide map
)

// epoch is where an edge's pairs from first on take their base t1 from.
type epoch struct {
	first int   // the first pair of the epoch
	t1    int64 // its base t1
}

// nCode and nValue map a slot's n (0, 1 or 4) to two bits and back.
var nValue = [4]uint8{0, 1, 4, 0xff}

func nCode(n uint8) (uint16, bool) {
	switch n {
	case 0, 1:
		return uint16(n), true
	case 4:
		return 2, true
	}
	return 0, false
}

// get returns pair k.
func (e *edge) get(k int) full {
	c := &e.pairs[k]
	if c.isWide() {
		return e.wide[k]
	}
	return c.full(e.epochT1(k))
}

// set stores f as pair k.
func (e *edge) set(k int, f full) {
	c := &e.pairs[k]
	if !c.isWide() {
		if t1, ok := f.baseT1(); ok {
			// A pair's t1 is set when it is sent (the newest pair): it
			// starts an epoch where its edge has none, or where it is too
			// far from the newest epoch's t1 for 32 bits (windows of
			// more than 2 s).
			if n := len(e.epochs); n == 0 || k > e.epochs[n-1].first && k == len(e.pairs)-1 && !fits32(t1-e.epochs[n-1].t1) {
				e.epochs = append(e.epochs, epoch{first: k, t1: t1})
			}
		}
		t1 := e.epochT1(k)
		if ok := c.pack(f, t1); ok && c.full(t1) == f {
			return
		}
		*c = pair{bits: wideBit}
		if e.wide == nil {
			e.wide = map[int]full{}
		}
	}
	e.wide[k] = f
}

// epochT1 returns the t1 pair k's base is held as a difference from: its
// epoch's, the last that starts at or before k (0 before the first:
// such a pair has no t1).
func (e *edge) epochT1(k int) int64 {
	for i := len(e.epochs) - 1; i >= 0; i-- {
		if e.epochs[i].first <= k {
			return e.epochs[i].t1
		}
	}
	return 0
}

// baseT1 returns f's base t1, slot 0's or, where slot 0 was never sent,
// slot 1's; false where neither was sent.
func (f *full) baseT1() (int64, bool) {
	switch {
	case f.n[0] >= 1:
		return f.t[0][0], true
	case f.n[1] >= 1:
		return f.t[1][0], true
	}
	return 0, false
}

// isWide reports whether the pair is held in its edge's wide map.
func (c *pair) isWide() bool { return c.bits&wideBit != 0 }

func fits32(v int64) bool { return int64(int32(v)) == v }

func (c *pair) full(epochT1 int64) full {
	var f full
	base := epochT1 + int64(c.base)
	for s := range 2 {
		b := c.bits >> (s * slotBits)
		n := nValue[b&3]
		f.n[s], f.src[s], f.ambiguous[s] = n, estimate.T3Source(b>>2&3), b&16 != 0
		d := &c.d[s]
		t := &f.t[s]
		if n >= 1 {
			t[0] = base
			if s == 1 && f.n[0] >= 1 {
				t[0] = f.t[0][0] + int64(c.dt1)
			}
		}
		if n == 4 {
			t[1] = t[0] + int64(d[0])
			t[2] = t[1] + int64(d[1])
			t[3] = t[0] + int64(d[2])
		}
		if f.src[s] != 0 {
			f.tx[s] = txRef(t, n) + int64(d[3])
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

// pack stores f's differences in c, its base t1 from epochT1; it reports
// whether every one fitted.
func (c *pair) pack(f full, epochT1 int64) bool {
	*c = pair{}
	ok := true
	put := func(dst *int32, v int64) {
		*dst = int32(v)
		ok = ok && int64(*dst) == v
	}
	if t1, known := f.baseT1(); known {
		put(&c.base, t1-epochT1)
	}
	if f.n[0] >= 1 && f.n[1] >= 1 {
		d := f.t[1][0] - f.t[0][0]
		c.dt1 = int16(d)
		ok = ok && int64(c.dt1) == d
	}
	for s := range 2 {
		code, known := nCode(f.n[s])
		if !known || f.src[s] > 3 {
			return false
		}
		b := code | uint16(f.src[s])<<2
		if f.ambiguous[s] {
			b |= 16
		}
		c.bits |= b << (s * slotBits)
		t := &f.t[s]
		// What a slot does not know yet is 0, and full gives 0 back for
		// it; set's check catches a slot that breaks this.
		if f.n[s] == 4 {
			put(&c.d[s][0], t[1]-t[0])
			put(&c.d[s][1], t[2]-t[1])
			put(&c.d[s][2], t[3]-t[0])
		}
		if f.src[s] != 0 {
			put(&c.d[s][3], f.tx[s]-txRef(t, f.n[s]))
		}
	}
	return ok
}
