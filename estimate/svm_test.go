package estimate

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteSVM is the O(n³) reference: the optimal slope is the slope of some
// segment between two points of the same set (a breakpoint of d(a)), so try
// them all and evaluate d(a) directly.
func bruteSVM(f, r []pt) svmLine {
	best := svmLine{d: math.Inf(-1)}
	try := func(a float64) {
		g, h := math.Inf(1), math.Inf(-1)
		for _, p := range f {
			g = min(g, float64(p.y)-a*float64(p.x))
		}
		for _, p := range r {
			h = max(h, float64(p.y)-a*float64(p.x))
		}
		if d := (g - h) / 2; d > best.d {
			best = svmLine{a: a, b: (g + h) / 2, d: d}
		}
	}
	for _, set := range [][]pt{f, r} {
		for i := range set {
			for j := range set {
				if set[j].x > set[i].x {
					try(slope(set[i], set[j]))
				}
			}
		}
	}
	try(0)
	return best
}

// randomSets draws n forward and m reverse points around a random line,
// forward above and reverse below by a random delay that may be negative
// (overlap). A narrow x range forces duplicate x values and collinear
// points.
func randomSets(r *rand.Rand, xRange int64, overlap bool) (f, r2 []pt) {
	a := (r.Float64()*2 - 1) * 1e-3
	b := (r.Float64()*2 - 1) * 1e6
	delay := func() int64 {
		d := r.Int64N(5000)
		if overlap {
			d -= 1500
		}
		return d
	}
	n, m := 1+r.IntN(30), 1+r.IntN(30)
	for range n {
		x := r.Int64N(xRange)
		f = append(f, pt{x, int64(math.Round(a*float64(x)+b)) + delay()})
	}
	for range m {
		x := r.Int64N(xRange)
		r2 = append(r2, pt{x, int64(math.Round(a*float64(x)+b)) - delay()})
	}
	return f, r2
}

// interleaved reports whether the margin is bounded: some reverse point is
// at or right of some forward point, and some at or left of one (with
// equality d is flat towards infinity but bounded).
func interleaved(f, r []pt) bool {
	minF, maxF := slices.MinFunc(f, cmpPt).x, slices.MaxFunc(f, cmpPt).x
	minR, maxR := slices.MinFunc(r, cmpPt).x, slices.MaxFunc(r, cmpPt).x
	return maxR >= minF && minR <= maxF
}

// TestSVMExact compares the hull walk with the brute-force reference on
// random small sets, separable and overlapping: the same margin to 1e-6
// relative, the same line, and no point inside the corridor by more than
// rounding. Wide x ranges make the optimum unique; narrow ones (duplicate x,
// collinear points) may have several optimal lines, so there only the
// margin is compared.
func TestSVMExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name     string
		xRange   int64
		overlap  bool
		sameLine bool
	}{
		{"separable", 4e9, false, true},
		{"overlapping", 4e9, true, true},
		{"separable narrow", 12, false, false},
		{"overlapping narrow", 12, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checked, negative := 0, 0
			for range 3000 {
				f, rv := randomSets(r, tc.xRange, tc.overlap)
				if !interleaved(f, rv) {
					if _, err := solveSVM(f, rv); !errors.Is(err, errUnbounded) {
						t.Fatalf("non-interleaved sets %v %v: no error", f, rv)
					}
					continue
				}
				checked++
				want := bruteSVM(f, rv)
				if want.d < 0 {
					negative++
				}
				got, err := solveSVM(slices.Clone(f), slices.Clone(rv))
				if err != nil {
					t.Fatalf("%v %v: %v", f, rv, err)
				}
				tol := 1e-6 * max(1, math.Abs(want.d))
				if math.Abs(got.d-want.d) > tol {
					t.Fatalf("margin %v, brute force %v\nF %v\nR %v", got.d, want.d, f, rv)
				}
				if tc.sameLine {
					if math.Abs(got.a-want.a) > 1e-12 || math.Abs(got.b-want.b) > 1e-3 {
						t.Fatalf("line %+v, brute force %+v\nF %v\nR %v", got, want, f, rv)
					}
				}
				for _, p := range f {
					if v := got.d - (float64(p.y) - (got.a*float64(p.x) + got.b)); v > tol {
						t.Fatalf("forward %v inside the corridor by %g", p, v)
					}
				}
				for _, p := range rv {
					if v := got.d - ((got.a*float64(p.x) + got.b) - float64(p.y)); v > tol {
						t.Fatalf("reverse %v inside the corridor by %g", p, v)
					}
				}
			}
			if checked < 1000 {
				t.Fatalf("only %d sets checked", checked)
			}
			if tc.overlap != (negative > 100) {
				t.Fatalf("%d of %d sets overlap", negative, checked)
			}
		})
	}
}

func TestSVMUnbounded(t *testing.T) {
	f := []pt{{0, 10}, {1, 12}}
	r := []pt{{5, 0}, {6, 1}}
	if _, err := solveSVM(f, r); !errors.Is(err, errUnbounded) {
		t.Fatalf("err = %v, want errUnbounded", err)
	}
	if _, err := solveSVM(r, f); !errors.Is(err, errUnbounded) {
		t.Fatalf("err = %v, want errUnbounded", err)
	}
	// One x for all: flat, bounded, slope 0.
	got, err := solveSVM([]pt{{3, 10}}, []pt{{3, 4}})
	if err != nil || got != (svmLine{a: 0, b: 7, d: 3}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// TestSVMOnProbes runs the corridor fit on small probe windows against
// the reference, with the probes' clock far from Origin.
func TestSVMOnProbes(t *testing.T) {
	for seed := range uint64(200) {
		c := normalCfg(10+int(seed%20), seed)
		if seed%2 == 1 {
			c.fwd.queueP, c.fwd.queueM = 0.5, 40e3
		}
		probes := generate(c)
		fit, err := corridorOf(probes, c.srcStart)
		if err != nil {
			t.Fatal(err)
		}
		var f, r []pt
		for _, s := range buildSamples(probes, completePairs(probes), c.srcStart) {
			f, r = append(f, pt{s.fx, s.fy}), append(r, pt{s.rx, s.ry})
		}
		want := bruteSVM(f, r)
		if math.Abs(fit.Margin-want.d) > 1e-6*max(1, math.Abs(want.d)) || math.Abs(fit.Alpha-want.a) > 1e-12 {
			t.Fatalf("seed %d: fit %+v, brute force %+v", seed, fit, want)
		}
		if v := worstViolation(probes, c.srcStart, fit); v > 1e-6*max(1, math.Abs(fit.Margin)) {
			t.Fatalf("seed %d: a point is %g inside the corridor", seed, v)
		}
	}
}

// TestOrientExact checks the 128-bit orientation test against math/big on
// coordinates whose products overflow int64.
func TestOrientExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	coord := func() int64 {
		switch r.IntN(4) {
		case 0:
			return r.Int64N(7) - 3
		case 1:
			return math.MaxInt64/4 - r.Int64N(5)
		case 2:
			return -math.MaxInt64/4 + r.Int64N(5)
		}
		return r.Int64() / 4 * (1 - 2*r.Int64N(2))
	}
	for range 100000 {
		o, a, b := pt{coord() / 2, coord() / 2}, pt{coord() / 2, coord() / 2}, pt{coord() / 2, coord() / 2}
		want := new(big.Int).Sub(
			new(big.Int).Mul(big.NewInt(a.x-o.x), big.NewInt(b.y-o.y)),
			new(big.Int).Mul(big.NewInt(a.y-o.y), big.NewInt(b.x-o.x))).Sign()
		if got := orient(o, a, b); got != want {
			t.Fatalf("orient(%v, %v, %v) = %d, want %d", o, a, b, got, want)
		}
	}
}

// TestSVMWindowedExact: the slope-window solver returns exactly the full
// solver's corridor on large windows of every kind, and takes its fast path
// on ordinary ones.
func TestSVMWindowedExact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mod      func(*genCfg)
		wantFast bool
	}{
		{"exp jitter", func(*genCfg) {}, true},
		{"normal jitter", func(c *genCfg) { c.fwd.kind, c.rev.kind = jitNormal, jitNormal }, true},
		{"queueing", func(c *genCfg) { c.fwd.queueP, c.fwd.queueM = 0.7, 15e3 }, true},
		{"no read noise", func(c *genCfg) { c.noise = 0 }, true},
		{"overlapping", func(c *genCfg) { c.fwd, c.rev = delayDist{base: 100}, delayDist{base: 100}; c.noise = 500 }, false},
		{"src step kept", func(c *genCfg) { c.stepAt, c.stepSrc = 1e9, 3e6 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast := 0
			const windows = 20
			for seed := range uint64(windows) {
				c := normalCfg(2000, 300+seed)
				tc.mod(&c)
				probes := generate(c)
				var f, r []pt
				for _, p := range buildSamples(probes, completePairs(probes), c.srcStart) {
					f, r = append(f, pt{p.fx, p.fy}), append(r, pt{p.rx, p.ry})
				}
				want, err := solveSVM(slices.Clone(f), slices.Clone(r))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := solveSVMWindowed(slices.Clone(f), slices.Clone(r)); err != nil || got != want {
					t.Fatalf("seed %d: windowed %+v, %v; full %+v", seed, got, err, want)
				}
				// A poor guess widens the window or gives up, never errs.
				for _, off := range []float64{0, 5e-8, 1e-7, 2e-7, 3e-7, 5e-7, 1e-6, 3e-6, 3e-5, 1e-3} {
					got, ok := windowedSolve(f, r, want.a+off*float64(1-2*int(seed%2)))
					if ok && got != want {
						t.Fatalf("seed %d, guess off by %g: windowed %+v, full %+v", seed, off, got, want)
					}
					if off == 1e-3 && ok {
						t.Fatalf("seed %d: a guess off by 1e-3 claimed the optimum", seed)
					}
				}
				a0, ok := guessSlope(f, r)
				if !ok {
					continue
				}
				if _, ok := windowedSolve(f, r, a0); ok {
					fast++
				}
			}
			t.Logf("fast path taken in %d of %d windows", fast, windows)
			if tc.wantFast && fast < windows*9/10 {
				t.Errorf("fast path taken in only %d of %d windows", fast, windows)
			}
		})
	}
}

func TestHulls(t *testing.T) {
	// Duplicate x, collinear points, unsorted input.
	p := []pt{{4, 4}, {0, 0}, {2, 2}, {1, 5}, {3, 0}, {2, 9}, {4, 1}, {0, 3}, {1, 1}, {3, 3}}
	lower := lowerHull(slices.Clone(p))
	if want := []pt{{0, 0}, {3, 0}, {4, 1}}; !slices.Equal(lower, want) {
		t.Errorf("lowerHull = %v, want %v", lower, want)
	}
	upper := upperHull(slices.Clone(p))
	if want := []pt{{0, 3}, {2, 9}, {4, 4}}; !slices.Equal(upper, want) {
		t.Errorf("upperHull = %v, want %v", upper, want)
	}
	// Collinear points are not vertices.
	line := []pt{{0, 0}, {1, 1}, {2, 2}, {3, 3}}
	for _, h := range [][]pt{lowerHull(slices.Clone(line)), upperHull(slices.Clone(line))} {
		if want := []pt{{0, 0}, {3, 3}}; !slices.Equal(h, want) {
			t.Errorf("hull of a line = %v, want %v", h, want)
		}
	}
	// Far from the origin the 128-bit path decides.
	const big = int64(1) << 61
	far := []pt{{-big, 0}, {0, big / 2}, {big, 0}, {0, -big / 2}, {big / 2, -big / 2}}
	if h, want := lowerHull(slices.Clone(far)), []pt{{-big, 0}, {0, -big / 2}, {big / 2, -big / 2}, {big, 0}}; !slices.Equal(h, want) {
		t.Errorf("lowerHull far = %v, want %v", h, want)
	}
}

// corridorOf fits the exact maximum-margin corridor (no refinement) to
// every complete pair of probes.
func corridorOf(probes []Probe, origin int64) (Fit, error) {
	var f Fit
	_, err := fitCorridor(buildSamples(probes, completePairs(probes), origin), &f)
	return f, err
}
