package estimate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// queuedSoftCfg is softCfg with 70% of the forward probes queued behind an
// exponential delay of mean 12µs: a soft floor that one direction reaches
// with a third of its probes, the other with all of them.
func queuedSoftCfg(seed uint64) genCfg {
	c := softCfg(5000, seed)
	c.fwd.queueP, c.fwd.queueM = 0.7, 12e3
	return c
}

// TestSVMRefineSoftFloor: on a soft floor that one direction reaches with
// fewer probes, the exact corridor's offset is biased towards that
// direction (its extreme sits shallower in its tail) and its slope rides
// on a few points; the refined line, taken at one depth of both floors, is
// used and removes much of the first and most of the second.
func TestSVMRefineSoftFloor(t *testing.T) {
	const windows = 30
	var exact, refined []float64
	var exactA, refinedA float64
	for w := range uint64(windows) {
		c := queuedSoftCfg(7000 + w)
		probes := generate(c)
		o := Options{Kind: SVM, Origin: c.srcStart, Purity: PurityOff}
		f, err := Estimate(probes, o)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Refined {
			t.Fatalf("window %d: the refined line was not used on a soft floor", w)
		}
		h, err := corridorOf(probes, c.srcStart)
		if err != nil {
			t.Fatal(err)
		}
		refined = append(refined, f.Beta-c.beta)
		exact = append(exact, h.Beta-c.beta)
		refinedA += math.Abs(f.Alpha - c.alpha)
		exactA += math.Abs(h.Alpha - c.alpha)
	}
	me, mr := mean(exact), mean(refined)
	t.Logf("beta error mean: exact %.0f ns, refined %.0f ns; |alpha error| mean: exact %.3f ppm, refined %.3f ppm",
		me, mr, exactA/windows*1e6, refinedA/windows*1e6)
	// Measured: bias 466 → 296 ns (exponential queueing still crowds
	// the queued side's floor with slightly delayed probes), slope error
	// 0.74 → 0.07 ppm.
	if !(math.Abs(mr) < 0.75*math.Abs(me)) {
		t.Errorf("refined bias %.0f ns is not under 3/4 of the exact corridor's %.0f ns", mr, me)
	}
	if !(refinedA < 0.25*exactA) {
		t.Errorf("refined slope error %.3g is not under 1/4 of the exact corridor's %.3g", refinedA/windows, exactA/windows)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestSVMRefineHardFloorStands: on a hard floor (uniform jitter, no read
// noise) the exact corridor is the better estimate and Estimate keeps it.
func TestSVMRefineHardFloorStands(t *testing.T) {
	for w := range uint64(20) {
		c := normalCfg(1000, 8000+w)
		c.noise = 0
		probes := generate(c)
		f, err := Estimate(probes, Options{Kind: SVM, Origin: c.srcStart, Purity: PurityOff})
		if err != nil {
			t.Fatal(err)
		}
		h, err := corridorOf(probes, c.srcStart)
		if err != nil {
			t.Fatal(err)
		}
		if f.Refined || f.Alpha != h.Alpha || f.Beta != h.Beta || f.Sigma != h.Sigma {
			t.Fatalf("window %d: Refined %v, fit (%g, %g ± %g), corridor (%g, %g ± %g)",
				w, f.Refined, f.Alpha, f.Beta, f.Sigma, h.Alpha, h.Beta, h.Sigma)
		}
	}
}

// TestLowestPerSegment checks the selection against sorting, on values with
// many ties, with and without a limit that leaves some segments short.
func TestLowestPerSegment(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 500 {
		n := r.IntN(60)
		of := make([]uint8, n)
		v := make([]float64, n)
		for i := range v {
			of[i] = uint8(r.IntN(nSegments))
			v[i] = float64(r.IntN(10))
		}
		var keep [nSegments]int
		for k := range keep {
			keep[k] = r.IntN(6)
		}
		limit := math.Inf(1)
		if trial%2 == 1 {
			limit = float64(r.IntN(10))
		}
		c := countBelow(of, v, limit)
		got := lowestPerSegment(nil, of, v, &keep, limit, &c, make([]float64, n+nSegments))
		var want []int32
		for k := range nSegments {
			var idx []int32
			for i := range v {
				if int(of[i]) == k {
					idx = append(idx, int32(i))
				}
			}
			slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(v[a], v[b]) })
			want = append(want, idx[:min(keep[k], len(idx))]...)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: v %v, of %v, keep %v, limit %g: got %v, want %v", trial, v, of, keep, limit, got, want)
		}
	}
}
