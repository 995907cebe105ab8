package graphcalc

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
)

const (
	// madScale turns a median absolute deviation into a Gaussian σ.
	madScale = 1.4826
	// roundingSigmas is the deviation from the median, in the edge's own
	// Sigma, below which a residual never counts as deviating: when the
	// MAD is 0 (residuals all equal, as a loop closure spread over a
	// uniform cycle leaves them) rounding alone would otherwise reject.
	roundingSigmas = 1e-6
	// downdateTol is the relative residual of the solves of a rejection's
	// downdate, which only has to judge the remaining candidates: the
	// solution is re-solved to solveTol after the pass.
	downdateTol = 1e-10
)

// residuals returns, for every row of all, measured minus solved:
// t − (x[dst] − c·x[src]).
func residuals(all *rows, x []float64) []float64 {
	res := make([]float64, len(all.src))
	for e, i := range all.src {
		res[e] = all.t[e] - (x[all.dst[e]] - all.c[e]*x[i])
	}
	return res
}

// rejectPass rejects outliers among the kept offset rows of all (over a
// component of n nodes with reference ref) and returns how many. res are
// the rows' residuals at the solution x; both are updated as rows go.
//
// A kept row is a candidate while its residual is more than thr robust σ
// (1.4826·MAD of the kept residuals at the start of the pass) from their
// median, more than roundingSigmas·sigma from it (so that equal residuals,
// MAD 0, never trip on rounding), and |residual| > minSig·sigma. The pass
// rejects candidates one at a time, largest |residual − median|/sigma
// first (ties: lower row), and after each it updates x and every residual
// exactly as a re-solve without the row would (the leave-one-out
// Sherman–Morrison downdate: one solve N v = a_e, x −= v·w·r/(1 − h),
// h = w·a_eᵀv). An outlier drags the residuals of its neighbourhood along
// (on a link measured both ways the honest reverse direction carries
// nearly as much), and the update lets those fall back before they are
// judged. A candidate that is a bridge of the kept rows (removing it would
// disconnect the graph; either direction of a row links its ends) is kept.
func rejectPass(n, ref int, all *rows, sigma, res, x []float64, kept []bool, thr, minSig float64) int {
	var kr []float64
	for e, ok := range kept {
		if ok {
			kr = append(kr, res[e])
		}
	}
	if len(kr) < 3 {
		return 0
	}
	med := stats.Median(kr)
	for i, r := range kr {
		kr[i] = math.Abs(r - med)
	}
	robust := madScale * stats.Median(kr)
	bridge := make([]bool, len(kept))
	v, a := make([]float64, n), make([]float64, n)
	marked := 0
	for {
		e, worst := -1, 0.0
		for f, ok := range kept {
			dev := math.Abs(res[f] - med)
			if !ok || bridge[f] || dev <= thr*robust || dev <= roundingSigmas*sigma[f] || math.Abs(res[f]) <= minSig*sigma[f] {
				continue
			}
			if z := dev / sigma[f]; z > worst {
				e, worst = f, z
			}
		}
		if e < 0 {
			return marked
		}
		if isBridge(n, all, kept, e) {
			bridge[e] = true
			continue
		}
		// Leave-one-out downdate of the solution and the residuals.
		sys := newSystem(n, ref, all, kept)
		i, j, c, w := all.src[e], all.dst[e], all.c[e], all.w[e]
		clear(a)
		clear(v)
		a[j] += 1
		a[i] -= c
		a[ref] = 0
		sys.cg(v, a, downdateTol, 10*n+100)
		h := w * (v[j] - c*v[i])
		g := w * res[e] / (1 - h)
		for k := range x {
			x[k] -= g * v[k]
		}
		for f, fi := range all.src {
			res[f] += g * (v[all.dst[f]] - all.c[f]*v[fi])
		}
		kept[e] = false
		marked++
	}
}

// isBridge reports whether the kept rows other than e leave e's ends apart.
func isBridge(n int, all *rows, kept []bool, e int) bool {
	uf := newUnionFind(n)
	for f, ok := range kept {
		if ok && f != e {
			uf.union(int(all.src[f]), int(all.dst[f]))
		}
	}
	return uf.find(int(all.src[e])) != uf.find(int(all.dst[e]))
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct{ parent, size []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = i, 1
	}
	return u
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(i, j int) {
	i, j = u.find(i), u.find(j)
	if i == j {
		return
	}
	if u.size[i] < u.size[j] {
		i, j = j, i
	}
	u.parent[j] = i
	u.size[i] += u.size[j]
}
