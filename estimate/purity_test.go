package estimate

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// refPure is an independent statement of the purity rule.
func refPure(probes []Probe, th int64) (pairs, pure int) {
	type two struct {
		p    [2]Probe
		have [2]bool
	}
	var byPair []two
	for _, p := range probes {
		for int(p.Pair) >= len(byPair) {
			byPair = append(byPair, two{})
		}
		byPair[p.Pair].p[p.Slot] = p
		byPair[p.Pair].have[p.Slot] = true
	}
	for _, b := range byPair {
		if !b.have[0] || !b.have[1] {
			continue
		}
		pairs++
		a, c := b.p[0], b.p[1]
		fwd := (c.T2 - a.T2) - (c.T1 - a.T1)
		rev := (c.T4 - a.T4) - (c.T3 - a.T3)
		if fwd >= -th && fwd <= th && rev >= -th && rev <= th {
			pure++
		}
	}
	return pairs, pure
}

// TestPurityCount: pairs whose second probe met the first's delays are
// pure; the rest (independent 30µs exponential jitter) almost never are.
func TestPurityCount(t *testing.T) {
	for _, frac := range []float64{0, 0.1, 0.5, 0.9} {
		c := normalCfg(2000, 21)
		c.pureFrac = frac
		probes := generate(c)
		f, err := Estimate(probes, Options{Kind: Regression, Origin: c.srcStart, Purity: PurityOff})
		if err != nil {
			t.Fatal(err)
		}
		pairs, pure := refPure(probes, int64(time.Microsecond))
		if f.Pairs != pairs || f.Pure != pure {
			t.Errorf("frac %g: Pairs, Pure = %d, %d; want %d, %d", frac, f.Pairs, f.Pure, pairs, pure)
		}
		if got := float64(f.Pure) / float64(f.Pairs); got < frac-0.04 || got > frac+0.04 {
			t.Errorf("frac %g: %d of %d pairs pure (%.3f)", frac, f.Pure, f.Pairs, got)
		}
	}
}

// craft builds noise-free pairs, the listed ones pure (both probes see the
// same delays) and the others impure by 5µs in the forward direction.
func craft(n int, pure func(i int) bool) []Probe {
	var out []Probe
	for i := range n {
		t := int64(i) * 800_000
		for slot := range int64(2) {
			t1 := t + slot*5_000
			df := int64(20_000)
			if slot == 1 && !pure(i) {
				df += 5_000
			}
			t2 := t1 + df + 1_000_000 // dst is 1ms ahead
			t3 := t2 + 10_000
			t4 := t3 - 1_000_000 + 20_000
			out = append(out, Probe{T1: t1, T2: t2, T3: t3, T4: t4, Pair: uint32(i), Slot: uint8(slot)})
		}
	}
	return out
}

// TestPuritySelection checks which pairs on, off and auto use:
// auto takes the pure pairs when there are at least
// max(MinPairs, ⌈25% of the pairs⌉) of them.
func TestPuritySelection(t *testing.T) {
	every := func(k int) func(int) bool { return func(i int) bool { return i%k == 0 } }
	first := func(k int) func(int) bool { return func(i int) bool { return i < k } }
	for _, tc := range []struct {
		name     string
		n        int
		pure     func(int) bool
		purity   Purity
		minPairs int
		wantPure int
		wantUsed int // probes; 0: ErrInsufficient
	}{
		{"auto half pure", 100, every(2), PurityAuto, 0, 50, 100},
		{"default is auto", 100, every(2), "", 0, 50, 100},
		{"on half pure", 100, every(2), PurityOn, 0, 50, 100},
		{"off half pure", 100, every(2), PurityOff, 0, 50, 200},
		{"auto exactly 25%", 40, first(10), PurityAuto, 0, 10, 20},
		{"auto just under 25%", 40, first(9), PurityAuto, 0, 9, 80},
		{"auto ceil(25%) of 41 is 11", 41, first(10), PurityAuto, 0, 10, 82},
		{"auto 25% but under MinPairs", 40, first(10), PurityAuto, 12, 10, 80},
		{"auto 10% pure", 200, every(10), PurityAuto, 0, 20, 400},
		{"on 10% pure", 200, every(10), PurityOn, 0, 20, 40},
		{"on too few pure", 100, first(9), PurityOn, 0, 9, 0},
		{"auto too few pure", 100, first(9), PurityAuto, 0, 9, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Estimate(craft(tc.n, tc.pure), Options{Kind: Regression, Purity: tc.purity, MinPairs: tc.minPairs})
			if tc.wantUsed == 0 {
				if !errors.Is(err, ErrInsufficient) {
					t.Fatalf("err = %v, want ErrInsufficient", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Pairs != tc.n || f.Pure != tc.wantPure || f.Used != tc.wantUsed {
				t.Errorf("Pairs, Pure, Used = %d, %d, %d; want %d, %d, %d",
					f.Pairs, f.Pure, f.Used, tc.n, tc.wantPure, tc.wantUsed)
			}
		})
	}
}

// TestPureThreshold: a 5µs disturbance is impure at 1µs and pure at 10µs.
func TestPureThreshold(t *testing.T) {
	probes := craft(50, func(int) bool { return false })
	for _, tc := range []struct {
		th   time.Duration
		want int
	}{{0, 0}, {4999, 0}, {5000, 50}, {10 * time.Microsecond, 50}} {
		f, err := Estimate(probes, Options{Kind: SVM, PureThreshold: tc.th})
		if err != nil {
			t.Fatal(err)
		}
		if f.Pure != tc.want {
			t.Errorf("threshold %v: Pure = %d, want %d", tc.th, f.Pure, tc.want)
		}
	}
}

// TestCompletePairs covers the general (map) path as well as the adjacent
// fast path: pairs are found whatever the interleaving, ordered by their
// earlier probe, first occurrences win, stray slots are ignored.
func TestCompletePairs(t *testing.T) {
	pr := func(pair uint32, slot uint8) Probe { return Probe{Pair: pair, Slot: slot} }
	for _, tc := range []struct {
		name   string
		probes []Probe
		want   []pair
	}{
		{"adjacent", []Probe{pr(1, 0), pr(1, 1), pr(2, 0), pr(3, 1), pr(3, 0)}, []pair{{0, 1}, {4, 3}}},
		{"lone probes", []Probe{pr(1, 1), pr(2, 0), pr(2, 1), pr(3, 0)}, []pair{{1, 2}}},
		{"interleaved", []Probe{pr(1, 0), pr(2, 0), pr(1, 1), pr(2, 1)}, []pair{{0, 2}, {1, 3}}},
		{"far apart", []Probe{pr(7, 1), pr(1, 0), pr(2, 0), pr(2, 1), pr(7, 0), pr(1, 1)}, []pair{{4, 0}, {1, 5}, {2, 3}}},
		{"duplicates", []Probe{pr(5, 0), pr(5, 0), pr(5, 1), pr(5, 1)}, []pair{{0, 2}}},
		{"stray slot", []Probe{pr(5, 0), pr(5, 2), pr(5, 1), pr(6, 2)}, []pair{{0, 2}}},
		{"wrapping ids", []Probe{pr(math.MaxUint32, 0), pr(math.MaxUint32, 1), pr(0, 0), pr(0, 1)}, []pair{{0, 1}, {2, 3}}},
		{"none", []Probe{pr(1, 0), pr(2, 1)}, []pair{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completePairs(tc.probes); !slices.Equal(got, tc.want) {
				t.Errorf("completePairs = %v, want %v", got, tc.want)
			}
		})
	}
}
