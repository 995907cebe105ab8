package graphcalc

// incidence lists, for every node, the rows of a problem that touch it, in
// ascending order.
type incidence struct {
	start []int32 // node i's rows are rows[start[i]:start[i+1]]
	rows  []int32
}

// newIncidence lists the rows of all by node.
func newIncidence(n int, all *rows) *incidence {
	start := make([]int32, n+1)
	for e, i := range all.src {
		start[i+1]++
		start[all.dst[e]+1]++
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	out, fill := make([]int32, start[n]), append([]int32(nil), start[:n]...)
	for e, i := range all.src {
		j := all.dst[e]
		out[fill[i]], fill[i] = int32(e), fill[i]+1
		out[fill[j]], fill[j] = int32(e), fill[j]+1
	}
	return &incidence{start: start, rows: out}
}

// without returns the normal matrix and right-hand side of the kept rows
// of all, where s and b are those of the same rows plus some between
// nodes a and b (a ≠ b) that kept no longer keeps. It gives, bit for bit,
// what newSystem(s.n, s.ref, all, kept) and its rhs would: only the
// entries of a and b change, and they are summed again over their kept
// rows in ascending order, as newSystem and rhs sum them. The result
// holds the matrix only, for solveFor.
func (s *system) without(all *rows, inc *incidence, kept []bool, rhs []float64, a, b int) (*system, []float64) {
	d := &system{n: s.n, ref: s.ref, diag: append([]float64(nil), s.diag...)}
	nb := append([]float64(nil), rhs...)
	for _, v := range [2]int{a, b} {
		if v == s.ref {
			continue
		}
		var dv, bv float64
		for _, e := range inc.rows[inc.start[v]:inc.start[v+1]] {
			if !kept[e] {
				continue
			}
			// The conversions keep products from being fused into the
			// sums (as on GOAMD64=v3), which newSystem and rhs do not.
			w, c := all.w[e], all.c[e]
			r := float64(w * all.t[e])
			if int(all.dst[e]) == v {
				dv += w
				bv += r
			} else {
				dv += float64(w * c * c)
				bv -= float64(c * r)
			}
		}
		d.diag[v], nb[v] = dv, bv
	}
	if a == s.ref || b == s.ref {
		d.start, d.col, d.val = s.start, s.col, s.val
		return d, nb
	}
	var off float64
	have := false
	for _, e := range inc.rows[inc.start[a]:inc.start[a+1]] {
		if !kept[e] || (int(all.src[e]) != b && int(all.dst[e]) != b) {
			continue
		}
		if v := -all.w[e] * all.c[e]; have {
			off += v
		} else {
			off, have = v, true
		}
	}
	pa, pb := s.entry(a, b), s.entry(b, a)
	if pa < 0 || pb < 0 { // s did not keep the rows between a and b
		d = newSystem(s.n, s.ref, all, kept)
		return d, d.rhs()
	}
	if have {
		d.start, d.col = s.start, s.col
		d.val = append([]float64(nil), s.val...)
		d.val[pa], d.val[pb] = off, off
		return d, nb
	}
	// No row between a and b is left: drop their entries, as newSystem
	// would not make them.
	lo, hi := min(pa, pb), max(pa, pb)
	d.col = make([]int32, 0, len(s.col)-2)
	d.col = append(append(append(d.col, s.col[:lo]...), s.col[lo+1:hi]...), s.col[hi+1:]...)
	d.val = make([]float64, 0, len(s.val)-2)
	d.val = append(append(append(d.val, s.val[:lo]...), s.val[lo+1:hi]...), s.val[hi+1:]...)
	d.start = make([]int32, len(s.start))
	for i, p := range s.start {
		switch {
		case p > int32(hi):
			p -= 2
		case p > int32(lo):
			p--
		}
		d.start[i] = p
	}
	return d, nb
}

// entry returns the position of N's entry (i, j), i ≠ j, in col and val
// (−1 when it has none).
func (s *system) entry(i, j int) int {
	for p := s.start[i]; p < s.start[i+1]; p++ {
		if int(s.col[p]) == j {
			return int(p)
		}
	}
	return -1
}
