package estimate

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestKindsAndParseKind(t *testing.T) {
	want := []Kind{Regression, MinFilter, SVM}
	got := Kinds()
	if !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	got[0] = "mutated"
	if Kinds()[0] != Regression {
		t.Fatal("Kinds() shares its backing array")
	}
	for _, k := range want {
		if p, err := ParseKind(string(k)); err != nil || p != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, p, err)
		}
	}
	_, err := ParseKind("kalman")
	if err == nil {
		t.Fatal("ParseKind(kalman) succeeded")
	}
	for _, name := range []string{"kalman", "regression", "minfilter", "svm"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %q", err, name)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	probes := generate(normalCfg(50, 1))
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no kind", Options{}, "unknown estimator"},
		{"bad kind", Options{Kind: "median"}, "unknown estimator"},
		{"bad purity", Options{Kind: SVM, Purity: "maybe"}, "unknown purity"},
		{"negative threshold", Options{Kind: SVM, PureThreshold: -1}, "negative PureThreshold"},
		{"one pair", Options{Kind: SVM, MinPairs: 1}, "below 2"},
		{"negative pairs", Options{Kind: SVM, MinPairs: -3}, "below 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Estimate(probes, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Estimate err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// accuracy fits one generated window and returns the beta error (ns) and
// the alpha error (ppm).
func accuracy(t *testing.T, c genCfg, k Kind) (Fit, float64, float64) {
	t.Helper()
	f, err := Estimate(generate(c), Options{Kind: k, Origin: c.srcStart})
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	if f.Kind != k || !(f.Sigma > 0) || !(f.AlphaSigma > 0) {
		t.Fatalf("%s: bad fit %+v", k, f)
	}
	return f, f.Beta - c.beta, (f.Alpha - c.alpha) * 1e6
}

// TestRecoverSymmetric: 5000 pairs, 20µs base delay, 30µs exponential
// jitter both ways, 50ns read noise, 1% loss, over three seeded windows.
// Observed worst |errors| over the seeds (and typical Sigma):
//
//	svm         beta   24 ns (Sigma  50 ns)   alpha 0.0065 ppm
//	minfilter   beta  132 ns (Sigma 205 ns)   alpha 0.12 ppm
//	regression  beta 1232 ns (Sigma 430 ns)   alpha 0.49 ppm
func TestRecoverSymmetric(t *testing.T) {
	for _, tc := range []struct {
		kind          Kind
		maxBeta, maxA float64 // ns, ppm
	}{
		{SVM, 300, 0.05},
		{MinFilter, 1500, 0.6},
		{Regression, 3000, 1.2},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				f, eb, ea := accuracy(t, normalCfg(5000, seed), tc.kind)
				t.Logf("seed %d: beta err %+.1f ns (sigma %.1f), alpha err %+.4f ppm, %d probes used, %d pairs",
					seed, eb, f.Sigma, ea, f.Used, f.Pairs)
				if math.Abs(eb) > tc.maxBeta || math.Abs(ea) > tc.maxA {
					t.Errorf("seed %d: beta err %.1f ns (max %g), alpha err %.4f ppm (max %g)",
						seed, eb, tc.maxBeta, ea, tc.maxA)
				}
			}
		})
	}
}

// TestAsymmetricQueueing: 70% of forward probes meet an exponential
// queueing delay of mean 15µs. The minimum-delay estimators ignore it; the
// mean-based regression is pulled up by about 0.7·15/2 ≈ 5.25µs. Observed
// over the three seeds: svm −83…+62 ns; minfilter +0.95…+1.70µs (its kept
// probes still carry some queueing: E[q | low RTT]/2); regression
// +4.67…+5.48µs.
func TestAsymmetricQueueing(t *testing.T) {
	for _, tc := range []struct {
		kind     Kind
		min, max float64 // bounds on the beta error, ns
	}{
		{SVM, -2000, 2000},
		{MinFilter, -2000, 2000},
		{Regression, 3000, 8000},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				c := normalCfg(5000, seed)
				c.fwd.queueP, c.fwd.queueM = 0.7, 15e3
				_, eb, ea := accuracy(t, c, tc.kind)
				t.Logf("seed %d: beta err %+.1f ns, alpha err %+.4f ppm", seed, eb, ea)
				if eb < tc.min || eb > tc.max {
					t.Errorf("seed %d: beta err %.1f ns outside [%g, %g]", seed, eb, tc.min, tc.max)
				}
			}
		})
	}
}

// TestConstantAsymmetry: forward 30µs, reverse 10µs, no jitter. No estimator
// can see a constant path asymmetry: every midpoint sits (30−10)/2 = 10µs
// above the true line, and so does the centre of the svm corridor. The
// estimated offset is too high: Beta − beta = +(d_fwd − d_rev)/2 = +10µs.
// Observed: regression +10000.9 ns, minfilter +9994.6 ns, svm +9990.4 ns.
func TestConstantAsymmetry(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(string(k), func(t *testing.T) {
			c := normalCfg(2000, 7)
			c.fwd = delayDist{base: 30e3}
			c.rev = delayDist{base: 10e3}
			_, eb, _ := accuracy(t, c, k)
			t.Logf("beta err %+.1f ns", eb)
			if math.Abs(eb-10e3) > 200 {
				t.Errorf("beta err %.1f ns, want +10000 ± 200", eb)
			}
		})
	}
}

func TestInsufficient(t *testing.T) {
	// pairs with both probes, plus lone probes whose partner was lost.
	build := func(complete, lone int) []Probe {
		c := normalCfg(complete+lone, 3)
		c.loss = 0
		probes := generate(c)
		out := probes[:0:0]
		for _, p := range probes {
			if int(p.Pair) >= complete && p.Slot == 1 {
				continue // the partner of a lone probe was lost
			}
			out = append(out, p)
		}
		return out
	}
	for _, k := range Kinds() {
		for _, tc := range []struct {
			complete, lone int
			ok             bool
		}{
			{9, 0, false},
			{9, 5, false},
			{10, 0, true},
			{10, 7, true},
		} {
			probes := build(tc.complete, tc.lone)
			f, err := Estimate(probes, Options{Kind: k})
			if tc.ok {
				if err != nil {
					t.Errorf("%s %d+%d lone: %v", k, tc.complete, tc.lone, err)
				} else if f.Pairs != tc.complete {
					t.Errorf("%s: Pairs = %d, want %d", k, f.Pairs, tc.complete)
				}
				continue
			}
			if !errors.Is(err, ErrInsufficient) {
				t.Fatalf("%s %d+%d lone: err = %v, want ErrInsufficient", k, tc.complete, tc.lone, err)
			}
			if !reflect.DeepEqual(f, Fit{}) {
				t.Errorf("%s: a failed fit returned %+v", k, f)
			}
			if msg := err.Error(); !strings.Contains(msg, "9 complete pairs") || !strings.Contains(msg, "need 10") {
				t.Errorf("%s: message %q does not say 9 and 10", k, msg)
			}
		}
	}
	if _, err := Estimate(nil, Options{Kind: SVM}); !errors.Is(err, ErrInsufficient) {
		t.Errorf("no probes: err = %v", err)
	}
}

// TestDeterministic: the same probes give bit-identical fits.
func TestDeterministic(t *testing.T) {
	probes := generate(normalCfg(3000, 11))
	for _, k := range Kinds() {
		a, err1 := Estimate(probes, Options{Kind: k})
		b, err2 := Estimate(slices.Clone(probes), Options{Kind: k})
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %+v, %v vs %+v, %v", k, a, err1, b, err2)
		}
	}
}

// TestMinFilterKeepsLowestTwentieth: in each of the 8 segments, exactly the
// ⌈5%⌉ lowest-RTT probes are kept (ties in send order). The kept probes'
// midpoints lie on the true line; every other probe's is pushed off it, so
// the fit is exact only when the selection is.
func TestMinFilterKeepsLowestTwentieth(t *testing.T) {
	const perSeg = 50 // probes per segment: ⌈2.5⌉ = 3 kept
	var probes []Probe
	n := 8 * perSeg / 2
	for i := range n {
		for slot := range 2 {
			k := 2*i + slot
			t1 := int64(k) * 400_000
			df, dr := int64(20_000), int64(20_000)
			switch j := k % perSeg; {
			case j == 4 || j == 11 || j == 17: // the lowest: symmetric, on the line
			case j == 20: // ties with the lowest RTT, but comes later in send order
				df += 1_000
				dr -= 1_000
			default: // higher RTT and one-sided: off the line
				df += 3_000 + int64(j)*100
			}
			t2 := t1 + df + 7_000 // dst 7µs ahead
			t3 := t2 + 10_000
			t4 := t3 - 7_000 + dr
			probes = append(probes, Probe{T1: t1, T2: t2, T3: t3, T4: t4, Pair: uint32(i), Slot: uint8(slot)})
		}
	}
	f, err := Estimate(probes, Options{Kind: MinFilter, Purity: PurityOff})
	if err != nil {
		t.Fatal(err)
	}
	if f.Used != 8*3 || math.Abs(f.Beta-7_000) > 1e-6 || math.Abs(f.Alpha) > 1e-12 {
		t.Fatalf("Used %d (want 24), Beta %g (want 7000), Alpha %g (want 0)", f.Used, f.Beta, f.Alpha)
	}
	if f.Sigma != minSigma {
		t.Errorf("Sigma = %g, want the %g ns floor for an exact fit", f.Sigma, minSigma)
	}
}
