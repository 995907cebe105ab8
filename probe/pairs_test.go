package probe

import (
	"math"
	"testing"
	"unsafe"

	"github.com/chronosync/chronosync/estimate"
)

// TestPairRoundTrip stores pairs in every state a window sees, narrow and
// wide, and checks get gives each back bit for bit, and whether it needed
// the wide map.
func TestPairRoundTrip(t *testing.T) {
	const t1 = int64(1_700_000_000_123_456_789)
	answered := func(t2off, t3d, rtt int64) [4]int64 {
		return [4]int64{t1, t1 + t2off, t1 + t2off + t3d, t1 + rtt}
	}
	cases := []struct {
		name string
		f    full
		wide bool
	}{
		{"empty", full{}, false},
		{"sent", full{t: [2][4]int64{{t1}, {t1 + 900}}, n: [2]uint8{1, 1}}, false},
		{"slot 1 only", full{t: [2][4]int64{{}, {t1}}, n: [2]uint8{0, 1}}, false},
		{"answered", full{t: [2][4]int64{answered(-40e6, 3000, 80e3), {t1 + 900}}, n: [2]uint8{4, 1}}, false},
		{"stamped", full{t: [2][4]int64{answered(45e6, 3000, 80e3), answered(45e6, 2000, 70e3)}, n: [2]uint8{4, 4},
			tx: [2]int64{t1 + 45e6 + 3100, t1 + 45e6 + 2100}, src: [2]estimate.T3Source{estimate.T3Kernel, estimate.T3User}, ambiguous: [2]bool{false, true}}, false},
		{"stamped, unanswered", full{t: [2][4]int64{{t1}, {t1}}, n: [2]uint8{1, 1}, tx: [2]int64{t1 + 5e6}, src: [2]estimate.T3Source{estimate.T3Kernel}}, false},
		{"clocks 3 s apart", full{t: [2][4]int64{answered(3e9, 3000, 80e3)}, n: [2]uint8{4}}, true},
		{"extreme", full{t: [2][4]int64{{math.MinInt64, math.MaxInt64, 0, math.MinInt64}}, n: [2]uint8{4}, tx: [2]int64{math.MaxInt64}, src: [2]estimate.T3Source{estimate.T3User}}, true},
		{"stamp on an unsent slot", full{t: [2][4]int64{{}, {t1}}, n: [2]uint8{0, 1}, tx: [2]int64{5}, src: [2]estimate.T3Source{estimate.T3User}}, false},
		// A timestamp its slot's count says is unknown: held as given.
		{"slot 1 sent 40 µs after slot 0", full{t: [2][4]int64{{t1}, {t1 + 40e3}}, n: [2]uint8{1, 1}}, true},
		{"slot 1 sent before slot 0", full{t: [2][4]int64{{t1}, {t1 - 20}}, n: [2]uint8{1, 1}}, false},
		{"a count that is no slot's", full{t: [2][4]int64{{t1}}, n: [2]uint8{2}}, true},
		{"unknown timestamp set", full{t: [2][4]int64{{t1}, {t1}}, n: [2]uint8{0, 1}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &edge{pairs: make([]pair, 3)}
			e.set(1, c.f)
			if got := e.get(1); got != c.f {
				t.Fatalf("get = %+v, want %+v", got, c.f)
			}
			if e.pairs[1].isWide() != c.wide {
				t.Fatalf("wide = %v, want %v", e.pairs[1].isWide(), c.wide)
			}
			if got := e.get(0); got != (full{}) {
				t.Fatalf("neighbour pair = %+v, want zero", got)
			}
			// A wide pair stays wide, and keeps what is set later.
			g := c.f
			g.ambiguous[0] = !g.ambiguous[0]
			e.set(1, g)
			if got := e.get(1); got != g {
				t.Fatalf("after a second set: get = %+v, want %+v", got, g)
			}
		})
	}
}

// TestPairEpochs stores a long window's pairs (one every 10 ms over 10 s,
// beyond 32 bits of nanoseconds from the first) and checks each comes back
// bit for bit without the wide map, each edge starting epochs only where
// the last one's t1 is too far, and that pairs set again later (answered,
// stamped) keep theirs.
func TestPairEpochs(t *testing.T) {
	const t0 = int64(-5_000_000_000) // crosses zero too
	const step, pairs = int64(10e6), 1000
	e := &edge{}
	want := make([]full, pairs)
	for k := range pairs {
		e.pairs = append(e.pairs, pair{})
		t1 := t0 + int64(k)*step
		want[k] = full{t: [2][4]int64{{t1}, {t1 + 300}}, n: [2]uint8{1, 1}}
		if k%7 == 3 {
			want[k].n[0], want[k].t[0][0] = 0, 0 // slot 0 never sent
		}
		if k%11 == 5 {
			want[k] = full{} // neither sent
		}
		e.set(k, want[k])
	}
	// Later: answer and stamp every third pair, oldest first.
	for k := 0; k < pairs; k += 3 {
		f := want[k]
		if f.n[1] == 1 {
			t1 := f.t[1][0]
			f.t[1] = [4]int64{t1, t1 + 7e6, t1 + 7e6 + 2000, t1 + 90e3}
			f.n[1], f.tx[1], f.src[1] = 4, t1+7e6+2100, estimate.T3Kernel
		}
		want[k] = f
		e.set(k, f)
	}
	for k := range pairs {
		if got := e.get(k); got != want[k] {
			t.Fatalf("pair %d: get = %+v, want %+v", k, got, want[k])
		}
		if e.pairs[k].isWide() {
			t.Fatalf("pair %d held wide", k)
		}
	}
	// 10 s from the first t1: 32 bits hold ±2.1 s, so 3 to 5 epochs.
	if n := len(e.epochs); n < 3 || n > 5 {
		t.Fatalf("%d epochs, want 3 to 5: %+v", n, e.epochs)
	}
}

// TestPairSize pins pair's size: the open windows of a 10,000-node run
// hold 10⁸ of them.
func TestPairSize(t *testing.T) {
	if n := unsafe.Sizeof(pair{}); n != 40 {
		t.Fatalf("pair is %d bytes, want 40", n)
	}
}
