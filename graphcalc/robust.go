package graphcalc

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
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

// chi2Of returns Σ w·r² over the kept rows and how many rows are kept.
func chi2Of(all *rows, res []float64, kept []bool) (float64, int) {
	var c2 float64
	m := 0
	for e, ok := range kept {
		if ok {
			c2 += all.w[e] * res[e] * res[e]
			m++
		}
	}
	return c2, m
}

// pValue is the probability that a consistent fit with dof degrees of
// freedom has a χ² of at least c2 (1 when dof ≤ 0).
func pValue(c2 float64, dof int) float64 {
	if dof <= 0 {
		return 1
	}
	return distuv.ChiSquared{K: float64(dof)}.Survival(c2)
}

// chi2Quantile is the χ² with dof degrees of freedom that a consistent fit
// exceeds with probability p.
func chi2Quantile(p float64, dof int) float64 {
	return distuv.ChiSquared{K: float64(dof)}.Quantile(1 - p)
}

// link is the kept offset rows between one unordered pair of nodes (local
// indices, a < b).
type link struct {
	a, b int32
	rows []int
}

// groupLinks groups the kept rows of all by their unordered pair of ends,
// the links in the order of their first row.
func groupLinks(all *rows, kept []bool) []link {
	at := map[[2]int32]int{}
	var ls []link
	for e, ok := range kept {
		if !ok {
			continue
		}
		a, b := all.src[e], all.dst[e]
		if a > b {
			a, b = b, a
		}
		k, seen := at[[2]int32{a, b}]
		if !seen {
			k = len(ls)
			at[[2]int32{a, b}] = k
			ls = append(ls, link{a: a, b: b})
		}
		ls[k].rows = append(ls[k].rows, e)
	}
	return ls
}

// candidate is a set of kept rows (one link, or one row of it) whose removal
// the robust fit tries: the fit without them and how much of the χ² they
// carried.
type candidate struct {
	link     int   // index into the round's links
	rows     []int // the rows removed
	chi2     float64
	dof      int
	drop     float64   // χ² with the rows − chi2
	explains bool      // the fit without them is consistent
	x        []float64 // the offsets solved without them
}

// fitter tries removing rows from the offset problem of one component.
type fitter struct {
	n, ref int
	all    *rows
	kept   []bool
	o      Options
	// inc lists all's rows by node (made on first use).
	inc *incidence
	// last is the latest call of candidates, which assess reuses when
	// rejection stopped at the same solution.
	last *tried
}

// tried is one call of candidates: its solution, kept rows and result.
type tried struct {
	x     []float64
	kept  []bool
	ls    []link
	cands []candidate
}

// same reports whether t was tried at the solution x with the rows kept.
func (t *tried) same(x []float64, kept []bool) bool {
	if t == nil || !slices.Equal(t.kept, kept) {
		return false
	}
	for i, v := range t.x {
		if math.Float64bits(v) != math.Float64bits(x[i]) {
			return false
		}
	}
	return true
}

// tryOut is candidates, reusing the result of its latest call when x and
// the kept rows are the same (it is a function of them alone).
func (f *fitter) tryOut(x []float64, c2 float64, dof int) ([]link, []candidate) {
	if f.last.same(x, f.kept) {
		return f.last.ls, f.last.cands
	}
	ls, cands := f.candidates(x, c2, dof)
	f.last = &tried{x: slices.Clone(x), kept: slices.Clone(f.kept), ls: ls, cands: cands}
	return ls, cands
}

// candidates tries removing each of the o.Candidates links that carry the
// most χ² at the solution x (and, for a link measured more than once, each
// of its rows alone), skipping the removal of whole links that would
// disconnect the graph. c2 and dof are the current fit's.
func (f *fitter) candidates(x []float64, c2 float64, dof int) ([]link, []candidate) {
	res := residuals(f.all, x)
	ls := groupLinks(f.all, f.kept)
	score := make([]float64, len(ls))
	order := make([]int, len(ls))
	for k, l := range ls {
		order[k] = k
		for _, e := range l.rows {
			score[k] += f.all.w[e] * res[e] * res[e]
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	if f.inc == nil {
		f.inc = newIncidence(f.n, f.all)
	}
	base := newSystem(f.n, f.ref, f.all, f.kept)
	b := base.rhs()
	var out []candidate
	for _, k := range order[:min(len(order), f.o.Candidates)] {
		l := ls[k]
		if !f.cut(l.rows) {
			out = append(out, f.without(base, b, x, k, l.rows, c2, dof))
		}
		if len(l.rows) > 1 { // one direction alone never cuts
			for _, e := range l.rows {
				out = append(out, f.without(base, b, x, k, []int{e}, c2, dof))
			}
		}
	}
	return ls, out
}

// without solves the offset problem without rows (all between one pair
// of nodes), starting from x; base and b are the normal matrix and
// right-hand side of the kept rows.
func (f *fitter) without(base *system, b, x []float64, k int, rows []int, c2 float64, dof int) candidate {
	kept := slices.Clone(f.kept)
	for _, e := range rows {
		kept[e] = false
	}
	c := candidate{link: k, rows: rows, x: slices.Clone(x)}
	sys, rhs := base.without(f.all, f.inc, kept, b, int(f.all.src[rows[0]]), int(f.all.dst[rows[0]]))
	if err := sys.solveFor(c.x, rhs); err != nil {
		c.chi2, c.dof = c2, dof // no better: never chosen
		return c
	}
	c.chi2, _ = chi2Of(f.all, residuals(f.all, c.x), kept)
	c.dof = dof - len(rows)
	c.drop = c2 - c.chi2
	c.explains = c.dof <= 0 || pValue(c.chi2, c.dof) >= f.o.ConsistencyP
	return c
}

// cut reports whether removing rows (all between one pair of nodes) from
// the kept rows would leave their ends apart.
func (f *fitter) cut(rows []int) bool {
	uf := newUnionFind(f.n)
	for e, ok := range f.kept {
		if ok && !slices.Contains(rows, e) {
			uf.union(int(f.all.src[e]), int(f.all.dst[e]))
		}
	}
	e := rows[0]
	return uf.find(int(f.all.src[e])) != uf.find(int(f.all.dst[e]))
}

// pick chooses the candidate to reject: the link whose removal leaves the
// lowest χ², or one row of it when that row alone leaves nearly as low a
// one (within q1, what one degree of freedom gives by chance), so that one
// bad direction of a link measured both ways goes alone. It is chosen only
// when the data single it out: every rival (another link; for one
// direction, also the link's other directions) leaves a χ² higher by at
// least margin, in units of the remaining fit's χ²/DOF where that exceeds
// 1, and its removal drops the χ² by more than q1 per row. In a single
// loop every link closes it alike and none is chosen: one loop cannot say
// which of its links is wrong.
func pick(cands []candidate, q1, margin float64) (*candidate, bool) {
	best := -1
	for i, c := range cands {
		if best < 0 || c.chi2 < cands[best].chi2 {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	choice := best
	for i, c := range cands {
		if c.link == cands[best].link && len(c.rows) < len(cands[choice].rows) && c.chi2 <= cands[best].chi2+q1 {
			choice = i
		}
	}
	ch := &cands[choice]
	rival := math.Inf(1)
	for i, c := range cands {
		sibling := c.link == ch.link && len(c.rows) == 1 && len(ch.rows) == 1 && i != choice
		if c.link != ch.link || sibling {
			rival = min(rival, c.chi2)
		}
	}
	noise := 1.0
	if ch.dof > 0 {
		noise = max(1, ch.chi2/float64(ch.dof))
	}
	return ch, ch.drop > q1*float64(len(ch.rows)) && (rival-ch.chi2)/noise >= margin
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

// sqrtRatio is √(a/b), 0 when b ≤ 0.
func sqrtRatio(a float64, b int) float64 {
	if b <= 0 {
		return 0
	}
	return math.Sqrt(a / float64(b))
}

// reject removes, one at a time, links (or single directions of links)
// that alone make the fit inconsistent (see pick), while the fit is
// inconsistent and at most Options.MaxRejectRounds times. x is the
// current offset solution; it is updated to the solution without the
// rejected rows. It returns what it rejected (ids maps local indices to
// node ids).
func (f *fitter) reject(x []float64, ids []int) []Suspect {
	q1 := chi2Quantile(f.o.ConsistencyP, 1)
	if f.o.RejectMargin == 0 {
		f.o.RejectMargin = q1
	}
	var rejected []Suspect
	for len(rejected) < f.o.MaxRejectRounds {
		c2, m := chi2Of(f.all, residuals(f.all, x), f.kept)
		dof := m - (f.n - 1)
		if dof <= 0 || pValue(c2, dof) >= f.o.ConsistencyP {
			break
		}
		ls, cands := f.tryOut(x, c2, dof)
		c, ok := pick(cands, q1, f.o.RejectMargin)
		if !ok {
			break
		}
		l := ls[c.link]
		s := Suspect{A: ids[l.a], B: ids[l.b], Src: -1, Chi2Drop: c.drop, Explains: c.explains}
		if len(c.rows) < len(l.rows) {
			s.Src = ids[f.all.src[c.rows[0]]]
		}
		rejected = append(rejected, s)
		for _, e := range c.rows {
			f.kept[e] = false
		}
		copy(x, c.x)
	}
	return rejected
}
