package graphcalc

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// rows are the equations of one least-squares problem over the reference's
// component, one per edge of it: x[dst] − c·x[src] = t, weight w. Indices
// are local to the component; orig is the edge's index in Input.Edges.
type rows struct {
	src, dst []int32
	c, w, t  []float64
	orig     []int
	// sys is each row's systematic uncertainty (Edge.SysSigma), set for
	// the offset rows only.
	sys []float64
}

func newRows(capacity int) rows {
	return rows{
		src: make([]int32, 0, capacity), dst: make([]int32, 0, capacity),
		c: make([]float64, 0, capacity), w: make([]float64, 0, capacity),
		t: make([]float64, 0, capacity), orig: make([]int, 0, capacity),
	}
}

func (r *rows) add(src, dst int32, c, w, t float64, orig int) {
	r.src = append(r.src, src)
	r.dst = append(r.dst, dst)
	r.c = append(r.c, c)
	r.w = append(r.w, w)
	r.t = append(r.t, t)
	r.orig = append(r.orig, orig)
}

// system is one problem's kept rows and their normal matrix N = Aᵀ W A
// over n nodes, with x[ref] pinned to 0: the reference's row and column of
// N are dropped, its diagonal is 1 and every vector carries a 0 there. N is
// held as its diagonal and, per node, its off-diagonal entries sorted by
// column (compressed sparse rows, the two directions of a link merged).
type system struct {
	n, ref   int
	src, dst []int32
	c, w, t  []float64
	diag     []float64
	start    []int32 // node i's entries are col, val[start[i]:start[i+1]]
	col      []int32
	val      []float64
}

// newSystem gathers the kept rows of all and assembles N.
func newSystem(n, ref int, all *rows, kept []bool) *system {
	m := len(all.src)
	src, dst := make([]int32, 0, m), make([]int32, 0, m)
	cs, ws, ts := make([]float64, 0, m), make([]float64, 0, m), make([]float64, 0, m)
	diag, start := make([]float64, n), make([]int32, n+1)
	for e, ok := range kept {
		if !ok {
			continue
		}
		i, j, c, w := all.src[e], all.dst[e], all.c[e], all.w[e]
		src, dst = append(src, i), append(dst, j)
		cs, ws, ts = append(cs, c), append(ws, w), append(ts, all.t[e])
		diag[j] += w
		diag[i] += w * c * c
		if int(i) != ref && int(j) != ref {
			start[i+1]++
			start[j+1]++
		}
	}
	s := &system{n: n, ref: ref, src: src, dst: dst, c: cs, w: ws, t: ts, diag: diag, start: start}
	s.diag[ref] = 1
	for i := 0; i < n; i++ {
		s.start[i+1] += s.start[i]
	}
	fill := append([]int32(nil), s.start[:n]...)
	col, val := make([]int32, s.start[n]), make([]float64, s.start[n])
	for e, i := range s.src {
		j := s.dst[e]
		if int(i) == ref || int(j) == ref {
			continue
		}
		v := -s.w[e] * s.c[e]
		col[fill[i]], val[fill[i]], fill[i] = j, v, fill[i]+1
		col[fill[j]], val[fill[j]], fill[j] = i, v, fill[j]+1
	}
	// Sort each node's entries by column and merge repeats in place.
	w := int32(0)
	for i := 0; i < n; i++ {
		lo, hi := start[i], start[i+1]
		cs, vs := col[lo:hi], val[lo:hi]
		for a := 1; a < len(cs); a++ {
			for b := a; b > 0 && cs[b] < cs[b-1]; b-- {
				cs[b], cs[b-1], vs[b], vs[b-1] = cs[b-1], cs[b], vs[b-1], vs[b]
			}
		}
		start[i] = w
		for a := range cs {
			if a > 0 && cs[a] == col[w-1] {
				val[w-1] += vs[a]
				continue
			}
			col[w], val[w] = cs[a], vs[a]
			w++
		}
	}
	start[n] = w
	s.col, s.val = col[:w], val[:w]
	return s
}

// rhs returns b = Aᵀ W t.
func (s *system) rhs() []float64 {
	b := make([]float64, s.n)
	for e, i := range s.src {
		r := s.w[e] * s.t[e]
		b[s.dst[e]] += r
		b[i] -= s.c[e] * r
	}
	b[s.ref] = 0
	return b
}

// treeStart fills x with the exact solution of a breadth-first spanning
// tree from the reference, a start that leaves only the loop
// inconsistencies for conjugate gradients to spread.
func (s *system) treeStart(x []float64) {
	start := make([]int32, s.n+1)
	for e, i := range s.src {
		start[i+1]++
		start[s.dst[e]+1]++
	}
	for i := 0; i < s.n; i++ {
		start[i+1] += start[i]
	}
	adj, fill := make([]int32, start[s.n]), append([]int32(nil), start[:s.n]...)
	for e, i := range s.src {
		adj[fill[i]], fill[i] = int32(e), fill[i]+1
		j := s.dst[e]
		adj[fill[j]], fill[j] = int32(e), fill[j]+1
	}
	seen := make([]bool, s.n)
	seen[s.ref], x[s.ref] = true, 0
	queue := []int32{int32(s.ref)}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range adj[start[v]:start[v+1]] {
			i, j := s.src[e], s.dst[e]
			switch {
			case !seen[j]:
				x[j] = s.t[e] + s.c[e]*x[i]
				seen[j] = true
				queue = append(queue, j)
			case !seen[i]:
				x[i] = (x[j] - s.t[e]) / s.c[e]
				seen[i] = true
				queue = append(queue, i)
			}
		}
	}
}

// relResidual returns ‖b − N x‖/‖b‖ for one column (0 when b = 0 = x).
func (s *system) relResidual(x, b []float64) float64 {
	q := make([]float64, s.n)
	s.apply(x, q)
	var rr, bb float64
	for i, v := range b {
		rr += (v - q[i]) * (v - q[i])
		bb += v * v
	}
	if bb == 0 {
		return math.Sqrt(rr)
	}
	return math.Sqrt(rr / bb)
}

// dense returns N without the reference's row and column (node i > ref
// sits at i−1).
func (s *system) dense() *mat.SymDense {
	m := s.n - 1
	a := mat.NewSymDense(m, nil)
	at := func(i int) int {
		if i > s.ref {
			return i - 1
		}
		return i
	}
	for i, d := range s.diag {
		if i == s.ref {
			continue
		}
		a.SetSym(at(i), at(i), d)
		for p := s.start[i]; p < s.start[i+1]; p++ {
			if j := int(s.col[p]); j > i {
				a.SetSym(at(i), at(j), s.val[p])
			}
		}
	}
	return a
}
