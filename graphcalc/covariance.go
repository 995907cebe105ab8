package graphcalc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

const (
	// sketchTol is the relative residual of the sketch's solves; the sketch
	// itself is only good to about √(2/SketchDim).
	sketchTol = 1e-4
	// sketchBlock is the number of projections solved together: a block
	// of eight keeps the solver's vectors in cache.
	sketchBlock = 8
	// sketchStream is the PCG stream of the sketch's projections.
	sketchStream = 0x6772617068636c63 // "graphclc"
)

// exactVariance returns the diagonal of N⁻¹ (0 at the reference) from a
// dense Cholesky factorisation.
func (s *system) exactVariance() ([]float64, error) {
	v := make([]float64, s.n)
	if s.n == 1 {
		return v, nil
	}
	inv, err := s.exactInverse()
	if err != nil {
		return nil, err
	}
	for i := range v {
		v[i] = inv(i, i)
	}
	return v, nil
}

// exactInverse returns N⁻¹ as a function of two node positions (0 where
// either is the reference), from a dense Cholesky factorisation.
func (s *system) exactInverse() (func(i, j int) float64, error) {
	if s.n == 1 {
		return func(int, int) float64 { return 0 }, nil
	}
	var ch mat.Cholesky
	if !ch.Factorize(s.dense()) {
		return nil, fmt.Errorf("%w: normal matrix of %d unknowns is not positive definite", ErrNotConverged, s.n-1)
	}
	inv := new(mat.SymDense)
	if err := ch.InverseTo(inv); err != nil {
		var c mat.Condition
		if !errors.As(err, &c) {
			return nil, fmt.Errorf("%w: inverse: %v", ErrNotConverged, err)
		}
	}
	at := func(i int) int {
		if i > s.ref {
			return i - 1
		}
		return i
	}
	return func(i, j int) float64 {
		if i == s.ref || j == s.ref {
			return 0
		}
		return inv.At(at(i), at(j))
	}, nil
}

// sketchVariance estimates the diagonal of N⁻¹ with the Spielman–Srivastava
// projection: N⁻¹ = N⁻¹ Aᵀ W A N⁻¹, so (N⁻¹)_ii = ‖W^½ A N⁻¹ e_i‖², and for
// a k×rows matrix Q of independent ±1/√k entries ‖Q W^½ A N⁻¹ e_i‖² is an
// unbiased estimate with relative standard deviation at most √(2/k). Its k
// rows need N Z = Aᵀ W^½ Qᵀ, solved as blocks of sketchBlock conjugate
// gradients (a last, partial block is padded with zero columns) on the
// Jacobi-scaled system D^-½ N D^-½ (D = diag N), which is Jacobi-
// preconditioned conjugate gradients without the preconditioning pass.
//
// Most of ‖W^½ A N⁻¹ e_i‖² is known without the sketch, which then only
// has to estimate the rest (a control variate): N⁻¹ e_i is close to
// m_i = D⁻¹ e_i + g, the node's own share plus g = N⁻¹ π, the potential
// of a unit injected in proportion to the weighted degrees (where a walk
// from i soon spreads), the same for every node. With v = W^½ A N⁻¹ e_i
// and u = W^½ A m_i, ‖u‖² = m_iᵀ N m_i and ⟨v, u⟩ = (m_i)_i are exact and
// cheap, Q u comes from the projections' right-hand sides, and
//
//	‖Q v‖² − β·(‖Q u‖² − ‖u‖²),  β = (⟨v, u⟩/‖u‖²)²
//
// is still unbiased; β is the coefficient that minimises its variance
// (for Gaussian projections), which is then set by the part of v not
// along u: small on well-connected graphs, and never more than without
// the control variate. The estimate is floored at 1/N_ii, a lower bound
// of (N⁻¹)_ii. g also starts each block's solves (its Galerkin solution
// on g), which takes out the slowest mode of a system grounded at one
// node and halves their iterations.
func (s *system) sketchVariance(k int, rng *rand.Rand) []float64 {
	v := make([]float64, s.n)
	if s.n == 1 {
		return v
	}
	h := make([]float64, s.n) // D^-½
	for i, d := range s.diag {
		h[i] = 1 / math.Sqrt(d)
	}
	g, ng, gng := s.spread()
	op := blockOp{start: s.start, col: s.col, val: make([]float64, len(s.val))}
	for i := range s.diag {
		for p := s.start[i]; p < s.start[i+1]; p++ {
			op.val[p] = s.val[p] * h[i] * h[s.col[p]]
		}
	}
	scale := 1 / math.Sqrt(float64(k))
	b, y := make([]blk, s.n), make([]blk, s.n)
	vm := make([]float64, s.n) // ‖Q W^½ A m_i‖²
	ws := newBlockWork(s.n)
	for t0 := 0; t0 < k; t0 += sketchBlock {
		cols := min(sketchBlock, k-t0)
		clear(b)
		clear(y)
		for e, i := range s.src {
			q := math.Sqrt(s.w[e]) * scale
			bi, bj := &b[i], &b[s.dst[e]]
			qi, qj := -s.c[e]*q*h[i], q*h[s.dst[e]]
			bits := rng.Uint64()
			for t := 0; t < cols; t++ {
				sign := float64(1 - 2*int(bits&1))
				bj[t] += sign * qj
				bi[t] += sign * qi
				bits >>= 1
			}
		}
		b[s.ref] = blk{}
		var qg blk // Q W^½ A g
		for i := range b {
			if gi := g[i] / h[i]; gi != 0 {
				for t, bt := range &b[i] {
					qg[t] += bt * gi
				}
			}
		}
		for i := range y { // the Galerkin solution on g
			if gi := g[i] / h[i] / gng; gng > 0 && gi != 0 {
				for t := range y[i] {
					y[i][t] = gi * qg[t]
				}
			}
		}
		op.cg(y, b, ws, sketchTol, 2*s.n+100)
		for i := range v {
			for t, z := range y[i] {
				zi, mi := z*h[i], b[i][t]*h[i]+qg[t]
				v[i] += zi * zi
				vm[i] += mi * mi
			}
		}
	}
	for i, d := range s.diag {
		if i == s.ref {
			v[i] = 0
			continue
		}
		mm := 1/d + 2*ng[i]/d + gng // ‖W^½ A m_i‖²
		beta := (1/d + g[i]) / mm   // ⟨W^½ A N⁻¹ e_i, W^½ A m_i⟩/‖W^½ A m_i‖²
		v[i] = max(v[i]-beta*beta*(vm[i]-mm), 1/d)
	}
	return v
}

// spread returns g ≈ N⁻¹ π, with π the weighted degrees normalised to a
// sum of 1 (0 at the reference), and, for the g it returns, N g and
// gᵀ N g.
func (s *system) spread() (g, ng []float64, gng float64) {
	pi := make([]float64, s.n)
	var sum float64
	for i, d := range s.diag {
		if i != s.ref {
			sum += d
		}
	}
	for i, d := range s.diag {
		if i != s.ref {
			pi[i] = d / sum
		}
	}
	g, ng = make([]float64, s.n), make([]float64, s.n)
	s.cg(g, pi, sketchTol, 2*s.n+100)
	s.apply(g, ng)
	for i, v := range g {
		gng += v * ng[i]
	}
	if !(gng > 0) || math.IsInf(gng, 0) { // no use: m_i = D⁻¹ e_i alone
		clear(g)
		clear(ng)
		gng = 0
	}
	return g, ng, gng
}

// blk holds sketchBlock columns of one node.
type blk [sketchBlock]float64

// blockOp is a symmetric matrix with unit diagonal, as system stores N.
type blockOp struct {
	start, col []int32
	val        []float64
}

// apply sets y = M x for a block of columns and dot = Σ_i x_i·y_i per
// column. Each node's row is accumulated in registers, four columns at a
// time (eight accumulators would spill).
func (m *blockOp) apply(x, y []blk, dot *blk) {
	*dot = blk{}
	for i := range y {
		xi := &x[i]
		lo, hi := m.start[i], m.start[i+1]
		vs, cols := m.val[lo:hi], m.col[lo:hi]
		vs = vs[:len(cols)]
		a0, a1, a2, a3 := xi[0], xi[1], xi[2], xi[3]
		for p, j := range cols {
			v, xj := vs[p], &x[j]
			a0 += v * xj[0]
			a1 += v * xj[1]
			a2 += v * xj[2]
			a3 += v * xj[3]
		}
		a4, a5, a6, a7 := xi[4], xi[5], xi[6], xi[7]
		for p, j := range cols {
			v, xj := vs[p], &x[j]
			a4 += v * xj[4]
			a5 += v * xj[5]
			a6 += v * xj[6]
			a7 += v * xj[7]
		}
		y[i] = blk{a0, a1, a2, a3, a4, a5, a6, a7}
		for t, yv := range &y[i] {
			dot[t] += yv * xi[t]
		}
	}
}

// blockWork holds the vectors of one block of conjugate gradients.
type blockWork struct{ r, p, q []blk }

func newBlockWork(n int) *blockWork {
	return &blockWork{r: make([]blk, n), p: make([]blk, n), q: make([]blk, n)}
}

// cg runs conjugate gradients on M X = B for every column of a block at
// once from the start in x, each column until its residual is ≤ tol·‖b‖,
// and returns the iterations run.
func (m *blockOp) cg(x, b []blk, ws *blockWork, tol float64, maxIter int) int {
	r, p, q := ws.r, ws.p, ws.q
	var stop, rr, pq, a, beta blk
	var active [sketchBlock]bool
	m.apply(x, q, &pq)
	for i := range r {
		for t := range r[i] {
			r[i][t] = b[i][t] - q[i][t]
			stop[t] += b[i][t] * b[i][t]
			rr[t] += r[i][t] * r[i][t]
		}
	}
	copy(p, r)
	live := 0
	for t := range stop {
		stop[t] *= tol * tol
		if active[t] = rr[t] > stop[t]; active[t] {
			live++
		}
	}
	it := 0
	for ; it < maxIter && live > 0; it++ {
		m.apply(p, q, &pq)
		for t := range a {
			a[t] = 0
			if active[t] && pq[t] > 0 {
				a[t] = rr[t] / pq[t]
			}
		}
		beta, rr = rr, blk{}
		for i := range x {
			xi, ri, pi, qi := &x[i], &r[i], &p[i], &q[i]
			for t := range xi {
				xi[t] += a[t] * pi[t]
				ri[t] -= a[t] * qi[t]
				rr[t] += ri[t] * ri[t]
			}
		}
		for t := range beta {
			if active[t] && (rr[t] <= stop[t] || a[t] == 0) {
				active[t] = false
				live--
			}
			if active[t] {
				beta[t] = rr[t] / beta[t]
			} else {
				beta[t] = 0
			}
		}
		for i := range p {
			pi, ri := &p[i], &r[i]
			for t := range pi {
				pi[t] = ri[t] + beta[t]*pi[t]
			}
		}
	}
	return it
}
