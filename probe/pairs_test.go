package probe

import (
	"math"
	"testing"

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
		{"unknown timestamp set", full{t: [2][4]int64{{t1}, {t1}}, n: [2]uint8{0, 1}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &edge{pairs: make([]pair, 3)}
			e.set(1, c.f)
			if got := e.get(1); got != c.f {
				t.Fatalf("get = %+v, want %+v", got, c.f)
			}
			if e.pairs[1].wide != c.wide {
				t.Fatalf("wide = %v, want %v", e.pairs[1].wide, c.wide)
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
