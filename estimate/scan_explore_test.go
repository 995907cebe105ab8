package estimate

import (
	"fmt"
	"math"
	"sort"
	"testing"
)

func exploreCfgs() map[string]func(seed uint64) genCfg {
	return map[string]func(seed uint64) genCfg{
		"exp30": func(seed uint64) genCfg { return normalCfg(2500, seed) },
		"soft5": func(seed uint64) genCfg { return softCfg(2500, seed) },
		"exp30q": func(seed uint64) genCfg {
			c := normalCfg(2500, seed)
			c.fwd.queueP, c.fwd.queueM = 0.5, 20e3
			return c
		},
		"clean": func(seed uint64) genCfg {
			c := normalCfg(2500, seed)
			c.fwd = delayDist{base: 20e3}
			c.rev = c.fwd
			c.noise = 0
			return c
		},
		"noise20": func(seed uint64) genCfg {
			c := normalCfg(2500, seed)
			c.fwd = delayDist{base: 20e3}
			c.rev = c.fwd
			c.noise = 20
			return c
		},
		"exp10n50": func(seed uint64) genCfg {
			c := normalCfg(2500, seed)
			c.fwd = delayDist{base: 20e3, kind: jitExp, scale: 10e3}
			c.rev = c.fwd
			return c
		},
		"normclip": func(seed uint64) genCfg {
			c := normalCfg(2500, seed)
			c.fwd.kind, c.rev.kind = jitNormal, jitNormal
			return c
		},
	}
}

func names() []string {
	return []string{"exp30", "exp10n50", "soft5", "exp30q", "noise20", "clean", "normclip"}
}

// window generates d edges of one src, the src stepping by size at f of
// the window (0: none).
func window(mk func(uint64) genCfg, seed uint64, d int, f, size float64) ([][]Probe, []genCfg) {
	var ws [][]Probe
	var cs []genCfg
	for e := range d {
		c := mk(seed*100 + uint64(e))
		c.srcStart = 1_000_000_000
		if size != 0 {
			c.stepAt, c.stepSrc = f*2e9, size
		}
		ws = append(ws, generate(c))
		cs = append(cs, c)
	}
	return ws, cs
}

func TestExploreJoint(t *testing.T) {
	const N = 100
	for _, name := range names() {
		mk := exploreCfgs()[name]
		for _, d := range []int{1, 3, 7} {
			fa := 0
			var miss float64
			for seed := uint64(1); seed <= N; seed++ {
				ws, _ := window(mk, seed, d, 0, 0)
				cuts, m := ScanSrcSteps(ws, Options{Kind: SVM, Origin: 1_000_000_000 + 1e9})
				miss += m / N
				if len(cuts) > 0 {
					fa++
				}
			}
			line := fmt.Sprintf("%-8s d=%d FA %d/%d miss %.1f  detect:", name, d, fa, N, miss)
			for _, size := range []float64{30, 100, 300, 1000, 3000} {
				det := 0
				for seed := uint64(1); seed <= 20; seed++ {
					ws, _ := window(mk, seed, d, 0.43, size)
					cuts, _ := ScanSrcSteps(ws, Options{Kind: SVM, Origin: 1_000_000_000 + 1e9})
					for _, c := range cuts {
						at := 1_000_000_000 + 0.43*2e9
						if float64(c.From) <= at+size+1e6 && float64(c.To) >= at-1e6 {
							det++
							break
						}
					}
				}
				line += fmt.Sprintf(" %g:%d", size, det)
			}
			fmt.Println(line)
		}
	}
}

func TestExploreMissBias(t *testing.T) {
	for _, name := range names() {
		mk := exploreCfgs()[name]
		for _, size := range []float64{0, 30, 100, 300, 1000, 3000} {
			var zmax []float64
			det := 0
			var miss float64
			for seed := uint64(1); seed <= 40; seed++ {
				c := mk(seed)
				c.stepAt, c.stepDst = 0.37*2e9, size
				if size == 0 {
					c.stepAt = 0
				}
				probes := generate(c)
				origin := c.srcStart + int64(1e9)
				f, err := Estimate(probes, Options{Kind: SVM, Origin: origin})
				if err != nil {
					continue
				}
				miss += f.MissSigma / 40
				if f.Step {
					det++
					continue
				}
				z := 0.0
				for _, tt := range []float64{0, 0.5 * 2e9, 2e9 - 1} {
					dx := tt - 1e9
					truth := c.alpha*tt + c.beta
					if c.stepAt > 0 && tt >= c.stepAt {
						truth += size
					}
					fitv := f.Alpha*dx + f.Beta
					sg := math.Hypot(f.Sigma, f.AlphaSigma*dx)
					z = math.Max(z, math.Abs(fitv-truth)/sg)
				}
				zmax = append(zmax, z)
			}
			sort.Float64s(zmax)
			n := len(zmax)
			if n == 0 {
				fmt.Printf("%-8s step %5.0f all detected (miss %.1f)\n", name, size, miss)
				continue
			}
			fmt.Printf("%-8s step %5.0f det %2d undetected %2d: max-z p50 %.2f p90 %.2f max %.2f  miss %.1f\n", name, size, det, n, zmax[n/2], zmax[n*9/10], zmax[n-1], miss)
		}
	}
}
