package align

import "math"

// segment is snapshot segment [k-1, k] laid out for the common reading:
// the R it holds, (lo, hi] (the first and last segments extended
// outwards), its first pair, and what toHostQ takes from Snapshots for
// it. Node.AlignSpan's fast path works from one of these alone.
type segment struct {
	lo, hi      int64
	tracer, sys int64   // p[k-1]
	slope, inv  float64 // dS/dR and 1/ΔR
	v0, v1      float64 // v[k-1] and v[k]
}

// segmentsOf lays out m's segments; segs[k] is segment [k-1, k], and
// segs[0] holds no reading.
func segmentsOf(m *Snapshots) []segment {
	p := m.p
	segs := make([]segment, len(p))
	segs[0] = segment{lo: math.MaxInt64, hi: math.MinInt64}
	for k := 1; k < len(p); k++ {
		g := segment{lo: p[k-1].Tracer, hi: p[k].Tracer, tracer: p[k-1].Tracer, sys: p[k-1].Sys,
			slope: m.slope[k], inv: m.inv[k], v0: m.v[k-1], v1: m.v[k]}
		if k == 1 {
			g.lo = math.MinInt64 // r = MinInt64 itself takes the slow path
		}
		if k == len(p)-1 {
			g.hi = math.MaxInt64
		}
		segs[k] = g
	}
	return segs
}

// AlignSpan aligns the start r0 and end r1 of an event as Align does,
// but gives both the larger of their two uncertainties, worked out once
// where they share a window.
func (n *Node) AlignSpan(r0, r1 int64) (start, end Time) {
	if start, end, ok := n.alignSpanFast(r0, r1); ok {
		return start, end
	}
	return n.alignSpan(r0, r1)
}

// alignSpanFast is AlignSpan for the common event: both readings in the
// snapshot segment and in the offset window of the last reading, no host
// clock steps, nothing out of range. It works them out in one go, with
// the arithmetic of align and toHostQ, so with the same results to the
// bit (TestAlignSpanFast compares it with alignSpan); it reports false,
// having changed nothing, for any other event.
func (n *Node) alignSpanFast(r0, r1 int64) (start, end Time, ok bool) {
	m := n.snaps
	if m == nil || len(m.steps) != 0 || uint(n.seg) >= uint(len(m.segs)) {
		return start, end, false
	}
	g := &m.segs[n.seg]
	if !(g.lo < r0 && r0 <= g.hi && g.lo < r1 && r1 <= g.hi) {
		return start, end, false
	}
	// toHostQ.
	dr0, dr1 := diff(r0, g.tracer), diff(r1, g.tracer)
	x0, x1 := dr0*g.slope, dr1*g.slope
	if !near(x0) || !near(x1) {
		return start, end, false
	}
	d0, d1 := roundNear(x0), roundNear(x1)
	s0, s1 := g.sys+d0, g.sys+d1
	if (s0 < g.sys) != (d0 < 0) || (s1 < g.sys) != (d1 < 0) ||
		s0 < n.from || s0 >= n.until || s1 < n.from || s1 >= n.until {
		return start, end, false
	}
	u0, u1 := dr0*g.inv, dr1*g.inv
	q0 := (1-u0)*(1-u0)*g.v0 + u0*u0*g.v1 + m.read
	q1 := (1-u1)*(1-u1)*g.v0 + u1*u1*g.v1 + m.read
	// align, in the window of the last lookup (which holds no step).
	corr0 := n.off + n.drift*diff(s0, n.windowStart)
	corr1 := n.off + n.drift*diff(s1, n.windowStart)
	if !near(corr0) || !near(corr1) {
		return start, end, false
	}
	c0, c1 := roundNear(corr0), roundNear(corr1)
	g0, g1 := s0-c0, s1-c1
	if (g0 > s0) != (c0 < 0) || (g1 > s1) != (c1 < 0) {
		return start, end, false
	}
	unc0, unc1 := n.unc, n.unc // n.unc + (0·x)² is n.unc, a square or NaN
	if n.du != 0 {
		e0, e1 := n.du*(float64(s0)-n.mid), n.du*(float64(s1)-n.mid)
		unc0, unc1 = n.unc+e0*e0, n.unc+e1*e1
	}
	var sigma float64
	if unc0 == unc1 {
		sigma = sigmaOf(max(q0, q1) + max(0, unc0))
	} else {
		sigma = max(sigmaOf(q0+max(0, unc0)), sigmaOf(q1+max(0, unc1)))
	}
	var f0, f1 Flags
	if r0 < m.first || r0 > m.last {
		f0 = Extrapolated
	}
	if r1 < m.first || r1 > m.last {
		f1 = Extrapolated
	}
	return Time{Global: g0, Sigma: sigma, Flags: f0}, Time{Global: g1, Sigma: sigma, Flags: f1}, true
}

// near reports whether |x| < 2^62 (false for NaN): round(x) is then
// roundNear(x), and x is within the int64 range.
func near(x float64) bool { return x > -1<<62 && x < 1<<62 }
