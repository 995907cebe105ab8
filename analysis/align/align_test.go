package align

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// linearPairs returns n pairs every period of S, with R = rOff + (1+ppm)·S
// and Gaussian noise of sd on S.
func linearPairs(n int, sBase int64, period, rOff int64, ppm, sd float64, seed uint64) []Pair {
	r := rand.New(rand.NewPCG(seed, 1))
	var p []Pair
	for k := range n {
		s := sBase + int64(k)*period
		tr := rOff + s + int64(ppm*1e-6*float64(s-sBase))
		p = append(p, Pair{Sys: s + int64(math.Round(sd*r.NormFloat64())), Tracer: tr})
	}
	return p
}

func TestToHostExactOnLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sBase int64
	}{
		{"near zero", -3_000_000},
		{"epoch ns", 1_763_800_000_123_456_789},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := linearPairs(5, tc.sBase, 4e9, 777_000_000, 80, 0, 1)
			m, err := NewSnapshots(p, 0)
			if err != nil {
				t.Fatal(err)
			}
			for k, q := range p {
				s, _, ext := m.ToHost(q.Tracer)
				if s != q.Sys || ext {
					t.Errorf("pair %d: ToHost(%d) = %d (extrapolated %v), want %d", k, q.Tracer, s, ext, q.Sys)
				}
			}
			// Midway between pairs 1 and 2 the line gives the midpoint.
			a, b := p[1], p[2]
			s, _, _ := m.ToHost(a.Tracer + (b.Tracer-a.Tracer)/2)
			if want := a.Sys + (b.Sys-a.Sys)/2; math.Abs(float64(s-want)) > 1 {
				t.Errorf("midway: %d, want %d", s, want)
			}
			if _, _, ext := m.ToHost(p[0].Tracer - 1); !ext {
				t.Error("before the first pair: not flagged extrapolated")
			}
			if _, _, ext := m.ToHost(p[4].Tracer + 1); !ext {
				t.Error("after the last pair: not flagged extrapolated")
			}
		})
	}
}

// TestPairSigma: the second-difference estimate recovers the noise of the
// pairs.
func TestPairSigma(t *testing.T) {
	for _, sd := range []float64{0, 50, 400} {
		m, err := NewSnapshots(linearPairs(400, 0, 4e9, 5e6, -60, sd, 7), 0)
		if err != nil {
			t.Fatal(err)
		}
		want := max(minSigma, sd)
		if got := m.PairSigma(); math.Abs(got-want) > 0.12*want+1 {
			t.Errorf("noise %g ns: PairSigma %g", sd, got)
		}
	}
}

func TestNewSnapshotsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs []Pair
	}{
		{"none", nil},
		{"one", []Pair{{1, 1}}},
		{"equal R, merged to one", []Pair{{1, 5}, {2, 5}}},
		{"S backwards", []Pair{{10, 1}, {9, 2}}},
	} {
		if _, err := NewSnapshots(tc.pairs, 0); !errors.Is(err, ErrSnapshots) {
			t.Errorf("%s: error %v, want ErrSnapshots", tc.name, err)
		}
	}
	// Pairs of equal R are merged at their mean S.
	m, err := NewSnapshots([]Pair{{Sys: 100, Tracer: 10}, {Sys: 300, Tracer: 20}, {Sys: 310, Tracer: 20}}, 0)
	if err != nil || m.Len() != 2 {
		t.Fatalf("equal R: %v, %d pairs", err, m.Len())
	}
	if s, _, _ := m.ToHost(20); s != 305 {
		t.Errorf("merged pair: ToHost(20) = %d, want 305", s)
	}
	// Unsorted input is sorted by R.
	if _, err := NewSnapshots([]Pair{{20, 2}, {10, 1}, {30, 3}}, 0); err != nil {
		t.Errorf("unsorted pairs: %v", err)
	}
}

// TestNodeAlign maps through snapshots and a two-window clock model and
// checks the result against the model's own arithmetic, the flags, and the
// uncertainty combination.
func TestNodeAlign(t *testing.T) {
	snaps, err := NewSnapshots([]Pair{{Sys: 0, Tracer: 1000}, {Sys: 4e9, Tracer: 4e9 + 1000}, {Sys: 8e9, Tracer: 8e9 + 1000}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	offs := []offsets.Offset{
		{NodeID: 2, RoundID: 1, WindowStartNS: 0, WindowEndNS: 4e9, OffsetNS: 5000, DriftPPM: 10, UncertaintyNS: 30},
		{NodeID: 2, RoundID: 2, WindowStartNS: 4e9, WindowEndNS: 8e9, OffsetNS: 45000, DriftPPM: 10, UncertaintyNS: 40},
	}
	n := NewNode(2, snaps, offsets.NewIndex(offs))
	for _, tc := range []struct {
		r          int64
		wantGlobal int64
		wantFlags  Flags
		wantSigma  float64
	}{
		{r: 1000 + 1e9, wantGlobal: 1e9 - 5000 - 10000, wantSigma: 30},
		{r: 1000 + 5e9, wantGlobal: 5e9 - 45000 - 10000, wantSigma: 40},
		{r: 1000 + 9e9, wantGlobal: 9e9 - 45000 - 50000, wantFlags: Extrapolated | OutsideWindows, wantSigma: 40},
	} {
		got := n.Align(tc.r)
		if got.Global != tc.wantGlobal || got.Flags != tc.wantFlags || math.Abs(got.Sigma-tc.wantSigma) > 0.5 {
			t.Errorf("Align(%d) = %+v, want global %d flags %v sigma %g", tc.r, got, tc.wantGlobal, tc.wantFlags, tc.wantSigma)
		}
	}
	// Without offsets the host time is global and NoOffsets is set.
	if got := NewNode(3, snaps, offsets.NewIndex(offs)).Align(2e9 + 1000); got.Global != 2e9 || got.Flags != NoOffsets {
		t.Errorf("node without offsets: %+v", got)
	}
	if got := NewNode(3, nil, nil).Align(77); got.Global != 77 || got.Flags != NoOffsets || got.Sigma != minSigma {
		t.Errorf("no snapshots, no offsets: %+v", got)
	}
}

// drawPairs draws n snapshot pairs anywhere within ±1e12 ns, each clock
// minStep to 5 s past the last pair's.
func drawPairs(t *rapid.T, n int, minStep int64) []Pair {
	var pairs []Pair
	r, s := rapid.Int64Range(-1e12, 1e12).Draw(t, "r0"), rapid.Int64Range(-1e12, 1e12).Draw(t, "s0")
	for range n {
		pairs = append(pairs, Pair{Sys: s, Tracer: r})
		r += rapid.Int64Range(minStep, 5e9).Draw(t, "dr")
		s += rapid.Int64Range(minStep, 5e9).Draw(t, "ds")
	}
	return pairs
}

// TestToHostSegmentHint checks that toHost gives ToHost's answer whatever
// segment it is told to start from: the right one, a wrong one, one out of
// range, readings inside, between and beyond the pairs.
func TestToHostSegmentHint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 12).Draw(t, "pairs")
		m, err := NewSnapshots(drawPairs(t, n, 1), rapid.Int64Range(0, 5e9).Draw(t, "burst gap"))
		if err != nil {
			t.Fatal(err)
		}
		first, last := m.Span()
		seg := rapid.IntRange(-1, n+1).Draw(t, "hint")
		for i := range 20 {
			q := rapid.Int64Range(first-1e10, last+1e10).Draw(t, fmt.Sprintf("reading%d", i))
			ws, wsig, wext := m.ToHost(q)
			gs, gsig, gext := m.toHost(q, &seg)
			if gs != ws || gsig != wsig || gext != wext {
				t.Fatalf("toHost(%d) from a hint = %d, %v, %v; ToHost = %d, %v, %v", q, gs, gsig, gext, ws, wsig, wext)
			}
			if seg < 1 || seg > m.Samples()-1 {
				t.Fatalf("toHost left segment %d of %d pairs", seg, m.Samples())
			}
		}
	})
}

// TestNodeRemembersRightly: a Node that has aligned other readings (and
// remembers their segment and window) aligns each reading as a new Node
// does, and AlignSpan as two calls of Align, over random pairs, windows
// with gaps and overlaps, and readings in and out of order.
func TestNodeRemembersRightly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pairs := drawPairs(t, rapid.IntRange(2, 8).Draw(t, "pairs"), 1e6)
		snaps, err := NewSnapshots(pairs, rapid.Int64Range(0, 5e9).Draw(t, "burst gap"))
		if err != nil {
			t.Fatal(err)
		}
		first, last := snaps.Span()
		var offs []offsets.Offset
		for i := range rapid.IntRange(0, 6).Draw(t, "windows") {
			ws := rapid.Int64Range(pairs[0].Sys-1e10, pairs[len(pairs)-1].Sys+1e10).Draw(t, "start")
			offs = append(offs, offsets.Offset{NodeID: rapid.IntRange(0, 1).Draw(t, "node"), RoundID: uint64(i + 1),
				WindowStartNS: ws, WindowEndNS: ws + rapid.Int64Range(1, 1e10).Draw(t, "len"),
				OffsetNS: rapid.Float64Range(-1e7, 1e7).Draw(t, "offset"), DriftPPM: rapid.Float64Range(-200, 200).Draw(t, "drift"),
				UncertaintyNS: rapid.Float64Range(0, 1e3).Draw(t, "unc")})
		}
		ix := offsets.NewIndex(offs)
		n := NewNode(1, snaps, ix)
		q := rapid.Int64Range(first-1e10, last+1e10).Draw(t, "q0")
		for i := range 40 {
			// Mostly forwards in small steps, as a trace's readings go.
			q += rapid.Int64Range(-1e9, 4e9).Draw(t, fmt.Sprintf("step%d", i))
			if got, want := n.Align(q), NewNode(1, snaps, ix).Align(q); got != want {
				t.Fatalf("Align(%d) after other readings = %+v, by a new Node %+v", q, got, want)
			}
			// An event from q: AlignSpan gives each end Align's time and
			// flags, and both the larger uncertainty.
			end := q + rapid.Int64Range(0, 3e9).Draw(t, fmt.Sprintf("dur%d", i))
			s, e := n.AlignSpan(q, end)
			ws, we := NewNode(1, snaps, ix).Align(q), NewNode(1, snaps, ix).Align(end)
			ws.Sigma = max(ws.Sigma, we.Sigma)
			we.Sigma = ws.Sigma
			if s != ws || e != we {
				t.Fatalf("AlignSpan(%d, %d) = %+v, %+v; by Align %+v, %+v", q, end, s, e, ws, we)
			}
		}
	})
}

// BenchmarkAlign aligns readings 2 µs apart across snapshot segments of
// 4 s and offset windows of 2 s, as combine does.
func BenchmarkAlign(b *testing.B) {
	snaps, err := NewSnapshots(linearPairs(64, 0, 4e9, 1e6, 30, 50, 1), 0)
	if err != nil {
		b.Fatal(err)
	}
	var offs []offsets.Offset
	for w := range int64(128) {
		offs = append(offs, offsets.Offset{NodeID: 0, RoundID: uint64(w + 1), WindowStartNS: w * 2e9, WindowEndNS: (w + 1) * 2e9, OffsetNS: 1e5, DriftPPM: 3, UncertaintyNS: 15})
	}
	n := NewNode(0, snaps, offsets.NewIndex(offs))
	var sum int64
	r := int64(2e6)
	for b.Loop() {
		sum += n.Align(r).Global
		if r += 2000; r > 250e9 {
			r = 2e6
		}
	}
	if sum == 0 {
		b.Fatal("nothing aligned")
	}
}

// BenchmarkRound rounds values with random fractions, as alignment's are
// (a rounding that branches on the fraction mispredicts half the time).
func BenchmarkRound(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = r.Float64()*2e9 - 1e9
	}
	var sum int64
	for i := 0; b.Loop(); i++ {
		sum += round(xs[i&4095])
	}
	if sum == 0 {
		b.Fatal("nothing rounded")
	}
}

// TestRound: round is int64(math.Round(x)) on halves, near-halves, whole
// numbers, large and random values.
func TestRound(t *testing.T) {
	for _, x := range []float64{0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
		math.Nextafter(0.5, 1), 1 << 52, 1<<52 + 1, -(1 << 52) - 1, 1<<53 + 2, 1 << 61, -(1 << 62) + 1024, 4503599627370495.5} {
		if got, want := round(x), int64(math.Round(x)); got != want {
			t.Errorf("round(%v) = %d, want %d", x, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Float64Range(-1<<63, 1<<63-1024).Draw(t, "x")
		if got, want := round(x), int64(math.Round(x)); got != want {
			t.Fatalf("round(%v) = %d, want %d", x, got, want)
		}
	})
}
