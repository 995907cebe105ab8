package graphcalc

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

const (
	// solveTol is the relative residual ‖b − N x‖/‖b‖ the solutions reach.
	solveTol = 1e-14
	// acceptTol is the true relative residual accepted when rounding keeps
	// restarted conjugate gradients from reaching solveTol.
	acceptTol = 1e-12
	// maxRestarts bounds the restarts of conjugate gradients from the
	// true residual.
	maxRestarts = 3
	// denseFallbackLimit is the largest number of unknowns solved by dense
	// Cholesky when conjugate gradients fail.
	denseFallbackLimit = 2048
)

// solve overwrites x (the start) with the solution of N x = Aᵀ W t: by
// conjugate gradients, restarted from the true residual while rounding
// hides it, and by dense Cholesky when that fails.
func (s *system) solve(x []float64) error {
	return s.solveFor(x, s.rhs())
}

// solveFor is solve with the right-hand side b given.
func (s *system) solveFor(x, b []float64) error {
	if s.n == 1 {
		x[0] = 0
		return nil
	}
	maxIter := 10*s.n + 100
	best := math.Inf(1)
	for attempt := 0; attempt <= maxRestarts; attempt++ {
		s.cg(x, b, solveTol, maxIter)
		rel := s.relResidual(x, b)
		if rel <= solveTol || (rel >= best && rel <= acceptTol) {
			return nil
		}
		best = min(best, rel)
	}
	if best <= acceptTol {
		return nil
	}
	if s.n-1 > denseFallbackLimit {
		return fmt.Errorf("%w: relative residual %.3g after %d restarts of %d unknowns", ErrNotConverged, best, maxRestarts, s.n-1)
	}
	return s.denseSolve(x, b)
}

// denseSolve sets x to the solution of N x = b by dense Cholesky.
func (s *system) denseSolve(x, b []float64) error {
	var ch mat.Cholesky
	if !ch.Factorize(s.dense()) {
		return fmt.Errorf("%w: normal matrix of %d unknowns is not positive definite", ErrNotConverged, s.n-1)
	}
	sub := make([]float64, 0, s.n-1)
	for i, v := range b {
		if i != s.ref {
			sub = append(sub, v)
		}
	}
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, mat.NewVecDense(len(sub), sub)); err != nil {
		var c mat.Condition
		if !errors.As(err, &c) {
			return fmt.Errorf("%w: dense fallback: %v", ErrNotConverged, err)
		}
	}
	for i, k := 0, 0; i < s.n; i++ {
		if i == s.ref {
			x[i] = 0
			continue
		}
		x[i] = sol.AtVec(k)
		k++
	}
	return nil
}

// apply sets y = N x.
func (s *system) apply(x, y []float64) {
	n := len(s.diag)
	x, y, start := x[:n], y[:n], s.start[:n+1] // spares bounds checks
	for i, d := range s.diag {
		acc := d * x[i]
		lo, hi := start[i], start[i+1]
		cols := s.col[lo:hi]
		vs := s.val[lo:hi]
		vs = vs[:len(cols)]
		for p, j := range cols {
			acc += vs[p] * x[j]
		}
		y[i] = acc
	}
}

// cg runs Jacobi-preconditioned conjugate gradients on N x = b from the
// start in x until the recursive residual is ≤ tol·‖b‖ or after maxIter
// iterations, and returns the iterations run.
func (s *system) cg(x, b []float64, tol float64, maxIter int) int {
	n := s.n
	r, z, p, q, inv := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	s.apply(x, q)
	var bb, rr, rz float64
	for i, d := range s.diag {
		inv[i] = 1 / d
		r[i] = b[i] - q[i]
		z[i] = r[i] * inv[i]
		p[i] = z[i]
		bb += b[i] * b[i]
		rr += r[i] * r[i]
		rz += r[i] * z[i]
	}
	stop := tol * tol * bb
	it := 0
	for ; it < maxIter && rr > stop; it++ {
		s.apply(p, q)
		var pq float64
		for i, v := range p {
			pq += v * q[i]
		}
		if !(pq > 0) {
			break
		}
		a := rz / pq
		var nrz float64
		rr = 0
		for i, d := range inv {
			x[i] += a * p[i]
			r[i] -= a * q[i]
			z[i] = r[i] * d
			rr += r[i] * r[i]
			nrz += r[i] * z[i]
		}
		beta := nrz / rz
		rz = nrz
		for i, v := range z {
			p[i] = v + beta*p[i]
		}
	}
	return it
}
