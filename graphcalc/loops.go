package graphcalc

import (
	"cmp"
	"math"
	"slices"
)

// loops finds the loops of the kept links whose offsets do not close: the
// fundamental loops of a breadth-first spanning tree from the reference
// (each link off the tree closes one), and every link whose directions
// disagree. Offsets are carried along the tree exactly (x_b = t + c·x_a
// for a row a→b, x_b = (x_a − t)/c for b→a; a link's rows averaged with
// their weights), so a loop's closure is what its off-tree link says of
// its far end minus what the tree says. A loop is listed when its closure
// is beyond the two-sided ConsistencyP quantile of its σ; the worst
// maxLoops are returned, worst first. ids maps local indices to node ids.
func (f *fitter) loops(ls []link, ids []int) []Loop {
	adj := make([][]int, f.n) // node → links
	for k, l := range ls {
		adj[l.a] = append(adj[l.a], k)
		adj[l.b] = append(adj[l.b], k)
	}
	x, v := make([]float64, f.n), make([]float64, f.n) // tree offsets and their variance
	parent, via := make([]int, f.n), make([]int, f.n)
	for i := range parent {
		parent[i], via[i] = -1, -1
	}
	seen := make([]bool, f.n)
	seen[f.ref] = true
	queue := []int{f.ref}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		for _, k := range adj[a] {
			b := int(ls[k].a)
			if b == a {
				b = int(ls[k].b)
			}
			if seen[b] {
				continue
			}
			val, vr := f.carry(ls[k], a, x[a])
			x[b], v[b], parent[b], via[b], seen[b] = val, v[a]+vr, a, k, true
			queue = append(queue, b)
		}
	}
	zmin := math.Sqrt(chi2Quantile(f.o.ConsistencyP, 1))
	var out []Loop
	for k, l := range ls {
		a, b := int(l.a), int(l.b)
		if len(l.rows) > 1 {
			if lp, ok := f.splitLink(l, a, x[a], ids); ok && lp.Sigmas() > zmin {
				out = append(out, lp)
			}
		}
		if via[a] == k || via[b] == k || !seen[a] || !seen[b] {
			continue
		}
		val, vr := f.carry(l, a, x[a])
		path, pv := treePath(a, b, parent, v)
		lp := Loop{ClosureNS: val - x[b], SigmaNS: math.Sqrt(vr + pv)}
		for _, p := range path {
			lp.Nodes = append(lp.Nodes, ids[p])
		}
		lp.Nodes = append(lp.Nodes, ids[a])
		if lp.Sigmas() > zmin {
			out = append(out, lp)
		}
	}
	slices.SortStableFunc(out, func(p, q Loop) int { return cmp.Compare(q.Sigmas(), p.Sigmas()) })
	return out[:min(len(out), maxLoops)]
}

// implied is what row e says of the offset of its end other than a, given
// a's offset xa.
func (f *fitter) implied(e, a int, xa float64) float64 {
	r := f.all
	if int(r.src[e]) == a {
		return r.t[e] + r.c[e]*xa
	}
	return (xa - r.t[e]) / r.c[e]
}

// carry returns the weighted mean of what the link's rows say of the
// offset of its end other than a, and its variance.
func (f *fitter) carry(l link, a int, xa float64) (float64, float64) {
	var sw, sx float64
	for _, e := range l.rows {
		w := f.all.w[e]
		sw += w
		sx += w * f.implied(e, a, xa)
	}
	return sx / sw, 1 / sw
}

// splitLink is the loop a, b, a of a link measured more than once: how far
// its most discordant row lies from the rest.
func (f *fitter) splitLink(l link, a int, xa float64, ids []int) (Loop, bool) {
	worst, found := Loop{}, false
	for _, e := range l.rows {
		var sw, sx float64
		for _, o := range l.rows {
			if o != e {
				sw += f.all.w[o]
				sx += f.all.w[o] * f.implied(o, a, xa)
			}
		}
		lp := Loop{
			Nodes:     []int{ids[f.all.src[e]], ids[f.all.dst[e]], ids[f.all.src[e]]},
			ClosureNS: f.implied(e, a, xa) - sx/sw,
			SigmaNS:   math.Sqrt(1/f.all.w[e] + 1/sw),
		}
		if int(f.all.src[e]) != a {
			lp.ClosureNS = -lp.ClosureNS // as seen from the row's src
		}
		if !found || lp.Sigmas() > worst.Sigmas() {
			worst, found = lp, true
		}
	}
	return worst, found
}

// treePath returns the tree path from a to b (a first, b last) and the sum
// of the variances of its links, given each node's parent and its tree
// variance v (the variance of a node less that of its parent is its link's).
func treePath(a, b int, parent []int, v []float64) ([]int, float64) {
	depth := func(i int) int {
		d := 0
		for ; parent[i] >= 0; i = parent[i] {
			d++
		}
		return d
	}
	var up, down []int
	da, db := depth(a), depth(b)
	for da > db {
		up, a, da = append(up, a), parent[a], da-1
	}
	for db > da {
		down, b, db = append(down, b), parent[b], db-1
	}
	for a != b {
		up, a = append(up, a), parent[a]
		down, b = append(down, b), parent[b]
	}
	lca := a
	path := append(up, lca)
	for i := len(down) - 1; i >= 0; i-- {
		path = append(path, down[i])
	}
	var pv float64
	for _, p := range path {
		if p != lca {
			pv += v[p] - v[parent[p]]
		}
	}
	return path, pv
}
