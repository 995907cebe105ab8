package graphcalc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Consistency is the goodness of fit of a round's offsets over the
// reference's component: whether the edges' offsets add up around the
// graph's loops as well as their Sigmas say they should.
type Consistency struct {
	// Chi2 is Σ (residual/Sigma)² over the kept edges and DOF its degrees
	// of freedom (kept edges − solved nodes + 1; 0 for a graph without
	// loops, which cannot be checked). PValue is the chance of a χ² at
	// least this large if every Sigma were honest; Birge is √(Chi2/DOF).
	Chi2   float64
	DOF    int
	PValue float64
	Birge  float64
	// RateChi2 and RateBirge are the same for the rates.
	RateChi2  float64
	RateBirge float64
	// Consistent reports PValue ≥ Options.ConsistencyP (or no loops).
	Consistent bool
	// Scale is the factor by which every node's Sigma was multiplied
	// (max(1, Birge), or that of the fit without the suspect when one
	// link explains the inconsistency); RateScale that of RateSigma.
	Scale, RateScale float64
	// Loops are the loops that do not close within their uncertainty,
	// worst first (at most five); Suspects the links whose removal lowers
	// the χ² most, worst first (at most three). Both are empty when the
	// fit is consistent.
	Loops    []Loop
	Suspects []Suspect
	// Rejected are the links (or directions of links) that outlier
	// rejection removed, in the order it did: each alone disagreed with
	// the rest of the graph (Chi2Drop: how much of the χ² it carried).
	Rejected []Suspect
	// Ambiguous reports that several links, each alone, would make the
	// fit consistent (as in a single loop): the data cannot say which is
	// wrong, and every node's Sigma covers each of them being wrong.
	Ambiguous bool
}

// Loop is a loop of the probe graph and how far its offsets fail to close.
type Loop struct {
	// Nodes are the node ids around the loop, the first repeated at the
	// end (a link whose two directions disagree is the loop a, b, a).
	Nodes []int
	// ClosureNS is the sum of the measured offsets around the loop, which
	// honest measurements keep within a few SigmaNS of 0.
	ClosureNS, SigmaNS float64
}

// Sigmas is |ClosureNS|/SigmaNS.
func (l Loop) Sigmas() float64 { return math.Abs(l.ClosureNS) / l.SigmaNS }

// String formats the loop as "2-3-4-5-0-1-2 closes at 5012.3 ns (612.5σ)".
func (l Loop) String() string {
	ids := make([]string, len(l.Nodes))
	for i, v := range l.Nodes {
		ids[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("%s closes at %.1f ns (%.1fσ)", strings.Join(ids, "-"), l.ClosureNS, l.Sigmas())
}

// Suspect is a link (or one direction of it) whose measurements may be
// wrong, with what removing it would do to the fit.
type Suspect struct {
	// A and B are its ends; Src ≥ 0 names the one direction (Src→other
	// end) when only that direction is suspect, −1 for the whole link.
	A, B, Src int
	// Chi2Drop is how much the χ² falls without it; Explains reports that
	// the fit without it is consistent.
	Chi2Drop float64
	Explains bool
}

// String formats the suspect as "link 2-3 (χ² −1.2e+05, explains)".
func (s Suspect) String() string {
	what := fmt.Sprintf("link %d-%d", s.A, s.B)
	if s.Src >= 0 {
		dst := s.B
		if s.Src == s.B {
			dst = s.A
		}
		what = fmt.Sprintf("edge %d->%d", s.Src, dst)
	}
	verdict := ""
	if s.Explains {
		verdict = ", explains it"
	}
	return fmt.Sprintf("%s (χ² −%.3g%s)", what, s.Chi2Drop, verdict)
}

// Warning is a one-line account of an inconsistent fit and of what
// outlier rejection removed, "" for a consistent fit that rejected nothing.
func (c *Consistency) Warning() string {
	var b strings.Builder
	if len(c.Rejected) > 0 {
		fmt.Fprintf(&b, "rejected %s: measurements that disagree with the rest of the graph", joined(c.Rejected))
	}
	if c.Consistent {
		return b.String()
	}
	if b.Len() > 0 {
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "inconsistent loops: χ² %.4g over %d degrees of freedom (p %.2g, Birge ratio %.3g); uncertainties inflated", c.Chi2, c.DOF, c.PValue, c.Birge)
	if len(c.Loops) > 0 {
		fmt.Fprintf(&b, "; worst loop %s", c.Loops[0])
	}
	if len(c.Suspects) > 0 {
		fmt.Fprintf(&b, "; suspects %s", joined(c.Suspects))
	}
	if c.Ambiguous {
		b.WriteString("; the data cannot tell which is wrong")
	}
	return b.String()
}

// joined lists suspects, comma-separated.
func joined(ss []Suspect) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// assess measures the consistency of the solved component (offsets xo,
// rates xr over the kept rows) and returns it with the extra variance of
// every node's offset that covers the inconsistency.
func (f *fitter) assess(rate *rows, xo, xr []float64, ids []int) (Consistency, []float64) {
	c2, m := chi2Of(f.all, residuals(f.all, xo), f.kept)
	rc2, _ := chi2Of(rate, residuals(rate, xr), f.kept)
	dof := m - (f.n - 1)
	con := Consistency{
		Chi2: c2, DOF: dof, PValue: pValue(c2, dof), Birge: sqrtRatio(c2, dof),
		RateChi2: rc2, RateBirge: sqrtRatio(rc2, dof),
	}
	con.Consistent = con.PValue >= f.o.ConsistencyP
	con.Scale, con.RateScale = max(1, con.Birge), max(1, con.RateBirge)
	extra := make([]float64, f.n)
	if con.Consistent {
		return con, extra
	}
	ls, cands := f.tryOut(xo, c2, dof)
	cands = slices.Clone(cands)
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(b.drop, a.drop) })
	// The hypotheses each node's Sigma must cover: every link whose
	// removal alone makes the fit consistent (or, where removing the whole
	// link would cut the graph, each of its directions that does), or else
	// the worst few.
	whole := map[int]bool{}
	for _, c := range cands {
		if c.explains && len(c.rows) == len(ls[c.link].rows) {
			whole[c.link] = true
		}
	}
	var hyp []candidate
	for _, c := range cands {
		if c.explains && (len(c.rows) == len(ls[c.link].rows) || !whole[c.link]) {
			hyp = append(hyp, c)
		}
	}
	explained := len(hyp) > 0
	if explained {
		con.Scale = 1
		for _, h := range hyp {
			con.Scale = max(con.Scale, sqrtRatio(h.chi2, h.dof))
		}
		con.Ambiguous = len(hyp) > 1
	} else {
		hyp = cands[:min(len(cands), maxSuspects)]
	}
	for _, h := range hyp {
		for i := range extra {
			d := h.x[i] - xo[i]
			extra[i] = max(extra[i], d*d)
		}
	}
	q1 := chi2Quantile(f.o.ConsistencyP, 1)
	listed := map[int]bool{}
	for _, c := range cands {
		if listed[c.link] || len(con.Suspects) == maxSuspects || c.drop <= q1 {
			continue
		}
		listed[c.link] = true
		l := ls[c.link]
		s := Suspect{A: ids[l.a], B: ids[l.b], Src: -1, Chi2Drop: c.drop, Explains: c.explains}
		if len(c.rows) < len(l.rows) && singledOut(cands, c, q1) {
			s.Src = ids[f.all.src[c.rows[0]]]
		}
		con.Suspects = append(con.Suspects, s)
	}
	con.Loops = f.loops(ls, ids)
	return con, extra
}

// Limits of what Consistency lists.
const (
	maxSuspects = 3
	maxLoops    = 5
)

// singledOut reports whether the one-direction candidate c leaves a χ²
// lower by more than q1 than each other direction of its link does.
func singledOut(cands []candidate, c candidate, q1 float64) bool {
	for _, o := range cands {
		if o.link == c.link && len(o.rows) == 1 && o.rows[0] != c.rows[0] && o.chi2 <= c.chi2+q1 {
			return false
		}
	}
	return true
}
