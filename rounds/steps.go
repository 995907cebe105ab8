package rounds

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/graphcalc"
)

// stepSigmas is how many σ of the difference between the solutions after
// and before a clock step make a node's difference a step of its own.
const stepSigmas = 5

// inWindowSteps is what windowSteps found: each node's steps inside the
// window, in time order, and the solution before them all (nil when it
// could not be solved), with the gauges of the reference's steps.
type inWindowSteps struct {
	steps  map[int][]offsets.Step
	first  *graphcalc.RoundSummary
	post   *graphcalc.RoundSummary
	gauge  float64 // minus the reference's steps in the window, summed
	before func(graphcalc.Model) graphcalc.Model
}

// windowSteps finds the clock steps inside the round's window: the edges'
// steps are grouped into clusters by when they fell on the reference's
// clock, the round is solved once before each cluster (phase p: every
// edge with its line after its steps of the clusters before p), and each
// cluster's solutions on either side are compared (steps). post is the
// solution after them all. It updates the reference's carried steps and
// the ambiguity, and returns with before mapping a node's model in post
// to its model before the window's steps.
func (s *Solver) windowSteps(round uint64, origin int64, post *graphcalc.RoundSummary, edges []inEdge) inWindowSteps {
	w := inWindowSteps{first: post, post: post, before: func(m graphcalc.Model) graphcalc.Model { return m }}
	cl := s.clusters(post, edges)
	if len(cl) == 0 {
		return w
	}
	phases := make([]*graphcalc.RoundSummary, len(cl)+1)
	phases[len(cl)] = post
	for p := range cl {
		in, _ := s.phaseInput(round, origin, edges, func(e *inEdge) int {
			n := 0
			for _, st := range e.steps {
				if st.cluster < 0 {
					return -1 // not placed: its lines cannot be told apart
				}
				if st.cluster < p {
					n++
				}
			}
			return n
		})
		var disc *graphcalc.DisconnectedError
		if sum, err := graphcalc.Solve(in, s.o); err == nil || errors.As(err, &disc) {
			phases[p] = sum
		}
	}
	w.first = phases[0]
	w.steps = map[int][]offsets.Step{}
	own := map[int]float64{} // each node's steps in the window, summed
	for c := range cl {
		pre, after := phases[c], phases[c+1]
		if pre == nil || after == nil {
			continue
		}
		st, gauge := s.steps(after, pre)
		if rs, ok := st[s.ref]; ok && rs.SizeNS != 0 {
			s.ambiguity = math.Hypot(s.ambiguity, rs.SizeUncertaintyNS)
		}
		s.carried -= gauge // the reference's step
		w.gauge += gauge
		for _, n := range sortedKeys(st) {
			x := st[n]
			x.AtNS, x.AtUncertaintyNS = stepTime(n, pre, after, cl[c])
			if x.ambiguous {
				// The edges' brackets are mapped to the reference's clock
				// as though node had stepped; had the reference, its
				// readings after the step would be off by the size.
				x.AtUncertaintyNS += math.Abs(x.doubt)
			}
			w.steps[n] = append(w.steps[n], x.Step)
			own[n] += x.SizeNS
		}
	}
	w.before = func(m graphcalc.Model) graphcalc.Model {
		if w.first != nil {
			if m0, ok := w.first.Model(m.Node); ok {
				return m0
			}
		}
		// Not solved before the steps: this model less them.
		m.U -= m.Rate*w.gauge + own[m.Node]
		return m
	}
	return w
}

// cluster is one clock step of the round (or several that fell too close
// together to tell apart): the edges' steps that saw it, and when it fell
// on the reference's clock, [lo, hi].
type cluster struct {
	lo, hi  float64
	members []member
}

// member is one edge's step within a cluster.
type member struct {
	src, dst  int
	after, at int64
}

// clusters groups the edges' steps by when they fell: each bracket
// [after, at] on its src's clock is mapped to the reference's with src's
// model after the steps (which maps after, a reading before the step, off
// by as much as the step's own size, so the bracket's start is widened by
// it), and overlapping brackets are one cluster. A step whose src has no model is not placed (cluster −1). It
// sets each edge step's cluster and returns the clusters in time order.
func (s *Solver) clusters(post *graphcalc.RoundSummary, edges []inEdge) []cluster {
	type placed struct {
		lo, hi float64
		edge   int
		step   int
	}
	var ps []placed
	for k := range edges {
		e := &edges[k]
		m, ok := post.Model(e.src)
		if !ok {
			continue
		}
		g := m.Linear()
		prevAt := int64(0)
		for i, st := range e.steps {
			after := st.after
			if after == 0 {
				after = prevAt
			}
			prevAt = st.at
			lo, hi := g.Global(after), g.Global(st.at)
			if lo > hi { // a step of src backwards
				lo, hi = hi, lo
			}
			if after == 0 {
				lo = math.Inf(-1)
			}
			// A reading before a step of src's, mapped with src's model
			// after it, is off by the step's size: only the bracket's
			// start can be, so only it is widened.
			ps = append(ps, placed{lo: lo - math.Abs(st.size), hi: hi, edge: k, step: i})
		}
	}
	slices.SortStableFunc(ps, func(a, b placed) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	var out []cluster
	for _, p := range ps {
		if n := len(out); n == 0 || p.lo > out[n-1].hi {
			out = append(out, cluster{lo: p.lo, hi: p.hi})
		}
		c := &out[len(out)-1]
		c.hi = max(c.hi, p.hi)
		e := &edges[p.edge]
		st := &e.steps[p.step]
		st.cluster = len(out) - 1
		c.members = append(c.members, member{src: e.src, dst: e.dst, after: st.after, at: st.at})
	}
	return out
}

// nodeStep is a node's step as steps finds it: the record's step, and
// whether the node count could not say whose step it was, with the size
// it then leaves global time uncertain by.
type nodeStep struct {
	offsets.Step
	ambiguous bool
	doubt     float64
}

// steps compares the solutions after (post) and before (pre) a clock
// step and returns each stepped node's step, and the gauge g: minus the
// reference's step. Offsets are against the reference's clock, so with
// node k's step s_k and the reference's s_r, k's offset moves by
// Δ_k = s_k − r_k·s_r (r_k its rate: at one instant the reference's clock
// reads s_r more, and k's clock runs r_k to its 1). Most nodes do not
// step, so the median of Δ_k/r_k is −s_r; a node is taken to have stepped
// by Δ_k + r_k·s_r when that is beyond stepSigmas of its uncertainty (that
// of Δ_k and of the median, taken as a typical Δ's), and beyond the
// Solver's floor. For a step between two windows, pre is the last round's
// models carried forward (see extrapolate).
func (s *Solver) steps(post, pre *graphcalc.RoundSummary) (map[int]nodeStep, float64) {
	type diff struct {
		node     int
		d, sigma float64
		rate     float64
	}
	var ds []diff
	var scaled, sigmas []float64
	for _, mp := range pre.Nodes {
		mq, ok := post.Model(mp.Node)
		if !ok {
			continue
		}
		d := diff{node: mp.Node, d: mq.U - mp.U, sigma: math.Hypot(mq.Sigma, mp.Sigma), rate: mq.Rate}
		ds = append(ds, d)
		scaled = append(scaled, d.d/d.rate)
		if mp.Node != s.ref {
			sigmas = append(sigmas, d.sigma)
		}
	}
	if len(ds) == 0 || len(sigmas) == 0 {
		return nil, 0
	}
	gauge, gsigma := stats.Median(scaled), stats.Median(sigmas)
	// The median stands for the nodes that did not step only when they
	// are most of them; otherwise (two nodes, or half of them stepping
	// alike) nothing says which stepped.
	agree := 0
	for _, d := range ds {
		if math.Abs(d.d-d.rate*gauge) <= stepSigmas*math.Hypot(d.sigma, gsigma) {
			agree++
		}
	}
	ambiguous := len(ds) < 3 || 2*agree <= len(ds)
	if ambiguous {
		gauge = 0 // by convention the reference did not step
	}
	out := map[int]nodeStep{}
	var doubt float64 // the unattributed steps' sizes, in quadrature
	for _, d := range ds {
		size, sigma := d.d-d.rate*gauge, math.Hypot(d.sigma, gsigma)
		if math.Abs(size) <= stepSigmas*sigma || math.Abs(size) < s.stepFloor {
			continue
		}
		st := nodeStep{Step: offsets.Step{SizeNS: size, SizeUncertaintyNS: sigma}}
		if ambiguous {
			// The step may as well have been the reference's: then global
			// time, which runs on the reference's clock, moved by it.
			st.SizeUncertaintyNS = math.Hypot(sigma, size)
			st.ambiguous, st.doubt = true, size
			s.ambiguity = math.Hypot(s.ambiguity, size)
			doubt = math.Hypot(doubt, size)
			s.notes = append(s.notes, fmt.Sprintf("node %d and the reference moved %.0f ns apart (a clock step), and too few nodes say which of them stepped: global time after it is uncertain by that much", d.node, size))
		}
		out[d.node] = st
	}
	if _, ok := out[s.ref]; !ok {
		gauge = 0
		if doubt > 0 {
			// The reference may as well have stepped: from then on its
			// own record is uncertain by as much, with no size to correct.
			out[s.ref] = nodeStep{Step: offsets.Step{SizeUncertaintyNS: doubt}, ambiguous: true, doubt: doubt}
		}
	}
	return out, gauge
}

// stepTime brackets node's step from the cluster's edges that saw it:
// each edge's step lies, on its src clock, after after (before the step)
// and before at (after it). Mapped to the reference's clock (with src's
// models before and after), the brackets of all the node's edges are
// intersected and the middle is mapped back onto node's clock before the
// step. With no edge of the node's bracketing it (node's step shows only
// through the graph), the cluster's own interval is. It returns that
// reading and half the bracket's width (both 0 when neither places it).
func stepTime(node int, pre, post *graphcalc.RoundSummary, c cluster) (int64, float64) {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, e := range c.members {
		if (e.src != node && e.dst != node) || e.after == 0 {
			continue
		}
		mp, ok1 := pre.Model(e.src)
		mq, ok2 := post.Model(e.src)
		if !ok1 || !ok2 {
			continue
		}
		a, b := mp.Linear().Global(e.after), mq.Linear().Global(e.at)
		lo, hi = max(lo, min(a, b)), min(hi, max(a, b))
	}
	if lo > hi {
		// The brackets do not meet: the edges saw different steps of the
		// cluster. The cluster's interval holds them all.
		lo, hi = c.lo, c.hi
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = c.lo, c.hi
	}
	mp, ok := pre.Model(node)
	if !ok || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0
	}
	mid, half := (lo+hi)/2, math.Abs(hi-lo)/2
	return int64(math.Round(float64(mp.Origin) + mp.U + mp.Rate*(mid-float64(mp.Origin)))), half * mp.Rate
}

// betweenWindows is what boundarySteps found: each node's step between
// the last window and this one, the gauge (minus the reference's), and
// whether the reference stepped.
type betweenWindows struct {
	steps map[int]offsets.Step
	gauge float64
	ref   bool
}

// boundarySteps finds the clock steps that fell between the last round's
// window and this one's, where no probe saw them: where the windows meet
// (at, the reference's reading at this window's start), the last round's
// models carried forward are compared with first, this round's solution
// before its own steps, as steps compares the solutions on either side of
// a step inside a window. They are compared at the boundary, not in this
// window's middle, because there a clock whose frequency wandered since
// the last window differs from the last line by little (a line misses a
// wandering clock most in its rate, see modelErr), while a step differs by
// all of its size. A node's step is placed at its window's start
// (atStart). It updates the reference's carried steps and the ambiguity.
func (s *Solver) boundarySteps(round uint64, at int64, first *graphcalc.RoundSummary) betweenWindows {
	var b betweenWindows
	if s.noSteps || s.lastSum == nil || s.last+1 != round || first == nil {
		return b
	}
	st, gauge := s.steps(carry(first, at, nil), carry(s.lastSum, at, &s.wander))
	if len(st) == 0 {
		return b
	}
	if rs, ok := st[s.ref]; ok && rs.SizeNS != 0 {
		s.ambiguity = math.Hypot(s.ambiguity, rs.SizeUncertaintyNS)
		b.ref = true
	}
	s.carried -= gauge
	b.gauge = gauge
	b.steps = make(map[int]offsets.Step, len(st))
	for n, x := range st {
		b.steps[n] = x.Step
	}
	return b
}

// carry moves the models of sum to the reference's reading at: their
// offsets there, their uncertainties grown by their rates' over the
// distance and, with w, by each node's offset model error (the last
// round's models, carried past their window: see modelErr).
func carry(sum *graphcalc.RoundSummary, at int64, w *wanderLog) *graphcalc.RoundSummary {
	out := &graphcalc.RoundSummary{Nodes: make([]graphcalc.Model, len(sum.Nodes))}
	for i, m := range sum.Nodes {
		dt := float64(at - m.Origin)
		m.U += (m.Rate - 1) * dt
		m.Sigma = math.Hypot(m.Sigma, m.RateSigma*dt)
		if w != nil {
			m.Sigma = math.Hypot(m.Sigma, w.modelError(m.Node).offset)
		}
		m.Origin = at
		out.Nodes[i] = m
	}
	return out
}

// atStart places a step found between two windows at the start of rec's
// window, bracketed back to the end of the node's last window (where the
// last round's record says it ended): no probe saw it in between.
func (s *Solver) atStart(st offsets.Step, rec offsets.Offset) offsets.Step {
	st.AtNS = rec.WindowStartNS
	if p, ok := s.prev[rec.NodeID]; ok && p.WindowEndNS < rec.WindowStartNS {
		st.AtUncertaintyNS = float64(rec.WindowStartNS - p.WindowEndNS)
	}
	return st
}

// inWindow places a step's time inside rec's window: one no edge brackets
// (AtUncertaintyNS 0 at AtNS 0) could be anywhere in it, and one bracketed
// just outside is moved in with its uncertainty widened to match.
func inWindow(st offsets.Step, rec offsets.Offset) offsets.Step {
	lo, hi := rec.WindowStartNS, rec.WindowEndNS
	if st.AtNS == 0 && st.AtUncertaintyNS == 0 {
		st.AtNS = lo + (hi-lo)/2
		st.AtUncertaintyNS = float64(hi-lo) / 2
		return st
	}
	at := max(lo, min(hi, st.AtNS))
	st.AtUncertaintyNS += math.Abs(float64(at - st.AtNS))
	st.AtNS = at
	return st
}

// sortedKeys returns m's keys in increasing order.
func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
