package align

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestAlignSpanFast: AlignSpan, which takes alignSpanFast for the common
// event, gives what alignSpan (the general code) gives, to the bit, over
// random pairs (bursts, and host clock steps the mapping knows or finds),
// windows with gaps, overlaps, drift uncertainty and steps, and spans
// mostly short and forwards, as a trace's go, with jumps and readings near
// the ends of the int64 range. Each Node remembers its own segment and
// window; the fast path must be taken for a good share of the spans.
func TestAlignSpanFast(t *testing.T) {
	var fast, all int
	rapid.Check(t, func(t *rapid.T) {
		// Pairs, windows and readings from a seeded source: rapid draws
		// small values and the ends of ranges far more often than a run
		// has them.
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		pairs := []Pair{{Sys: r.Int64N(2e12) - 1e12, Tracer: r.Int64N(2e12) - 1e12}}
		for range 1 + r.IntN(8) {
			p, dr := pairs[len(pairs)-1], 1+r.Int64N(5e9)
			if r.IntN(3) == 0 { // a burst
				dr = 1 + r.Int64N(1e6)
			}
			pairs = append(pairs, Pair{Sys: p.Sys + dr + r.Int64N(dr/100_000+1) - dr/200_000, Tracer: p.Tracer + dr})
		}
		var offs []offsets.Offset
		ws := pairs[0].Sys - r.Int64N(2e9)
		for i := range r.IntN(9) {
			if r.IntN(8) == 0 { // a gap
				ws += r.Int64N(3e9)
			}
			o := offsets.Offset{NodeID: min(1, r.IntN(6)), RoundID: uint64(i + 1),
				WindowStartNS: ws, WindowEndNS: ws + 1 + r.Int64N(1e10),
				OffsetNS: r.Float64()*2e7 - 1e7, DriftPPM: r.Float64()*400 - 200, UncertaintyNS: r.Float64() * 1e3}
			if r.IntN(2) == 0 {
				o.DriftUncertaintyPPM = r.Float64() * 5
			}
			if r.IntN(8) == 0 {
				at := o.WindowStartNS + (o.WindowEndNS-o.WindowStartNS)/2
				o.Steps = []offsets.Step{{AtNS: at, SizeNS: r.Float64()*2e6 - 1e6, AtUncertaintyNS: 10}}
			}
			offs = append(offs, o)
			ws = o.WindowEndNS - r.Int64N(2)*r.Int64N(1e9) // sometimes overlapping
		}
		ix := offsets.NewIndex(offs)
		gap := r.Int64N(2) * r.Int64N(1e7)
		var snaps *Snapshots
		var err error
		if rapid.Bool().Draw(t, "stepped mapping") {
			snaps, err = NewSnapshotsStepped(pairs, gap, StepsOf(ix, 1))
		} else {
			snaps, err = NewSnapshots(pairs, gap)
		}
		if err != nil {
			t.Skip(err)
		}
		first, last := snaps.Span()
		nf, ns := NewNode(1, snaps, ix), NewNode(1, snaps, ix)
		q := first - 1e9 + r.Int64N(last-first+2e9)
		ends := []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64 - 5e9, math.MaxInt64 - 1}
		for range 200 {
			if r.IntN(30) == 0 { // a jump
				q += r.Int64N(2e10) - 1e10
			}
			q += r.Int64N(1e7)
			start, end := q, q+r.Int64N(1e7)
			if r.IntN(100) == 0 { // one span near an end of the range
				start = ends[r.IntN(len(ends))]
				end = start + r.Int64N(1e7)
			}
			if end < start { // wrapped
				end = math.MaxInt64
			}
			if _, _, ok := nf.alignSpanFast(start, end); ok {
				fast++
			}
			all++
			s, e := nf.AlignSpan(start, end)
			ws, we := ns.alignSpan(start, end)
			if !same(s, ws) || !same(e, we) {
				t.Fatalf("AlignSpan(%d, %d) = %+v, %+v; alignSpan %+v, %+v", start, end, s, e, ws, we)
			}
		}
	})
	if fast < all/10 {
		t.Errorf("fast path taken for %d of %d spans", fast, all)
	}
}

// same reports whether a and b are the same to the bit (NaN included).
func same(a, b Time) bool {
	return a.Global == b.Global && a.Flags == b.Flags && math.Float64bits(a.Sigma) == math.Float64bits(b.Sigma)
}

// BenchmarkAlignSpan aligns events as combine does: 1 µs long, 2 µs
// apart, in snapshot segments of 4 s and offset windows of 2 s.
func BenchmarkAlignSpan(b *testing.B) {
	snaps, err := NewSnapshots(linearPairs(64, 0, 4e9, 1e6, 30, 50, 1), 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, du := range []float64{0, 0.5} {
		b.Run(fmt.Sprintf("du=%v", du), func(b *testing.B) {
			var offs []offsets.Offset
			for w := range int64(128) {
				offs = append(offs, offsets.Offset{NodeID: 0, RoundID: uint64(w + 1), WindowStartNS: w * 2e9, WindowEndNS: (w + 1) * 2e9,
					OffsetNS: 1e5, DriftPPM: 3, UncertaintyNS: 15, DriftUncertaintyPPM: du})
			}
			n := NewNode(0, snaps, offsets.NewIndex(offs))
			var sum int64
			r := int64(2e6)
			for b.Loop() {
				s, e := n.AlignSpan(r, r+1000)
				sum += s.Global + e.Global
				if r += 2000; r > 250e9 {
					r = 2e6
				}
			}
			if sum == 0 {
				b.Fatal("nothing aligned")
			}
		})
	}
}
