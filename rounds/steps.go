package rounds

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

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
	// doubt is, by node, the steps the edges saw that no node could be
	// given but that may have been its own (see unattributed).
	doubt map[int]float64
}

// unattributed folds a cluster's differences that steps could attribute
// to no node but that lie beyond greySigmas (grey, by node) into
// uncertainty: each into doubt, which the round's records (a node's its
// own and the reference's, against whose clock it is measured) and the
// self-check of its edges take in; the reference's also into global
// time's ambiguity, in every later record (global time moved by it if the
// reference stepped). A note says so.
func (w *inWindowSteps) unattributed(grey map[int]float64, s *Solver, c cluster) {
	if len(grey) == 0 {
		return
	}
	if w.doubt == nil {
		w.doubt = map[int]float64{}
	}
	for n, d := range grey {
		w.doubt[n] = math.Hypot(w.doubt[n], d)
	}
	s.ambiguity = math.Hypot(s.ambiguity, grey[s.ref])
	var parts []string
	for _, n := range sortedKeys(grey) {
		parts = append(parts, fmt.Sprintf("node %d %.0f ns", n, grey[n]))
	}
	at, _ := c.at()
	s.notes = append(s.notes, fmt.Sprintf("a clock step the edges saw near %d ns on the reference's clock is too small to say whose at %dσ (moved beyond %dσ: %s): folded into their uncertainty", at, stepSigmas, greySigmas, strings.Join(parts, ", ")))
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
	ins, phases, cl := s.placeSteps(round, origin, post, edges)
	if len(cl) == 0 {
		return w
	}
	w.first = phases[0]
	w.steps = map[int][]offsets.Step{}
	own := map[int]float64{} // each node's steps in the window, summed
	for c := range cl {
		pre, after := phases[c], phases[c+1]
		if pre == nil || after == nil {
			continue
		}
		// Compared where the step fell, not at the window's origin: a
		// line of a few probes before a step near the window's start
		// reaches its middle with the error of its rate many times over.
		if at, ok := cl[c].at(); ok {
			if p, err := s.solveAt(ins[c], at); err == nil {
				if a, err := s.solveAt(ins[c+1], at); err == nil {
					pre, after = p, a
				}
			}
		}
		st, gauge, grey := s.steps(after, pre)
		w.unattributed(grey, s, cl[c])
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

// placeSteps groups the edges' steps into clusters, one clock step of the
// round at a time in time order, and solves the round before each: phase
// p has every edge with its line after its steps of the clusters before
// p. Each edge's next step not yet placed is bracketed on the reference's
// clock with src's model from the latest phase, src's model before that
// step once src's earlier steps are placed (one from after them all maps
// a reading between two of src's steps off by the later ones' sizes, and
// two edges' brackets of one step would then miss each other): its start,
// a reading before the step, maps true, and its end, after it, maps off by
// src's step if src stepped, so only the end is widened, and only to the
// side that step would have moved it from (a step of src's by s is one of
// −s on the edge): two nodes' steps of 14 and 6 ms 24 ms apart, widened
// by the size to both sides, were one cluster nothing could attribute.
// The earliest bracket and those overlapping it, in a chain, are the
// next cluster. An edge whose src has no model in post is left out of
// every phase and its steps are not placed (cluster −1). It sets each edge
// step's cluster and returns the phases' inputs and solutions (the last
// is post's) and the clusters in time order.
func (s *Solver) placeSteps(round uint64, origin int64, post *graphcalc.RoundSummary, edges []inEdge) ([]graphcalc.Input, []*graphcalc.RoundSummary, []cluster) {
	placed := make([]int, len(edges)) // each edge's steps placed; −1: never
	left := 0
	for k := range edges {
		if _, ok := post.Model(edges[k].src); !ok {
			placed[k] = -1
			continue
		}
		left += len(edges[k].steps)
	}
	if left == 0 {
		return nil, nil, nil
	}
	index := make(map[*inEdge]int, len(edges))
	for k := range edges {
		index[&edges[k]] = k
	}
	type bracket struct {
		lo, hi float64
		edge   int
	}
	seg := func(e *inEdge) int { return placed[index[e]] }
	var ins []graphcalc.Input
	var phases []*graphcalc.RoundSummary
	var out []cluster
	for left > 0 {
		in, _ := s.phaseInput(round, origin, edges, seg)
		pre, err := s.solveAt(in, origin)
		if err != nil {
			pre = nil
		}
		ins, phases = append(ins, in), append(phases, pre)
		var bs []bracket
		for k := range edges {
			e, i := &edges[k], placed[k]
			if i < 0 || i >= len(e.steps) {
				continue
			}
			st := &e.steps[i]
			// src's reading after its own step of s maps s later than
			// true; the edge (dst less src) then stepped by −s: so the
			// end is where it maps, or st.size later.
			after, late, widen := st.after, max(0, st.size), 0.0
			if after == 0 && i > 0 {
				after = e.steps[i-1].at
			}
			var m graphcalc.Model
			ok := false
			if pre != nil {
				m, ok = pre.Model(e.src)
			}
			if !ok {
				// Not solved before the step: src's model after them all,
				// off by as much as its steps from this one on.
				m, _ = post.Model(e.src)
				for _, st := range e.steps[i:] {
					widen += math.Abs(st.size)
				}
			}
			g := m.Linear()
			lo, hi := g.Global(after)-widen, g.Global(st.at)+max(late, widen)
			hi = max(hi, lo)
			if after == 0 {
				lo = math.Inf(-1)
			}
			bs = append(bs, bracket{lo: lo, hi: hi, edge: k})
		}
		slices.SortStableFunc(bs, func(a, b bracket) int { return cmp.Compare(a.lo, b.lo) })
		c := cluster{lo: bs[0].lo, hi: bs[0].hi}
		for _, b := range bs {
			if b.lo > c.hi {
				break
			}
			c.hi = max(c.hi, b.hi)
			e := &edges[b.edge]
			st := &e.steps[placed[b.edge]]
			st.cluster = len(out)
			c.members = append(c.members, member{src: e.src, dst: e.dst, after: st.after, at: st.at})
			placed[b.edge]++
			left--
		}
		out = append(out, c)
	}
	in, _ := s.phaseInput(round, origin, edges, seg)
	return append(ins, in), append(phases, post), out
}

// solveAt solves in with its origin moved to at (a reading of the
// reference's clock), taking a disconnected graph's solution of the
// reference's component.
func (s *Solver) solveAt(in graphcalc.Input, at int64) (*graphcalc.RoundSummary, error) {
	in.Origin = at
	sum, err := graphcalc.Solve(in, s.o)
	var disc *graphcalc.DisconnectedError
	if errors.As(err, &disc) {
		return sum, nil
	}
	return sum, err
}

// at is the cluster's time on the reference's clock, the middle of its
// interval (its end when it is open at the start), and false when it has
// none.
func (c cluster) at() (int64, bool) {
	lo, hi := c.lo, c.hi
	if math.IsInf(hi, 0) || math.IsNaN(hi) {
		return 0, false
	}
	if math.IsInf(lo, 0) {
		lo = hi
	}
	return int64(math.Round((lo + hi) / 2)), true
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
//
// When no node is taken to have stepped although the edges saw a step
// (a cluster), a difference beyond greySigmas is still more likely a step
// than noise: the third result is each such node's difference (the
// reference's, minus the median, included), which the caller folds into
// uncertainty rather than let it go unsaid.
func (s *Solver) steps(post, pre *graphcalc.RoundSummary) (map[int]nodeStep, float64, map[int]float64) {
	var ds []stepDiff
	var scaled, sigmas []float64
	for _, mp := range pre.Nodes {
		mq, ok := post.Model(mp.Node)
		if !ok {
			continue
		}
		d := stepDiff{node: mp.Node, d: mq.U - mp.U, sigma: math.Hypot(mq.Sigma, mp.Sigma), rate: mq.Rate}
		ds = append(ds, d)
		scaled = append(scaled, d.d/d.rate)
		if mp.Node != s.ref {
			sigmas = append(sigmas, d.sigma)
		}
	}
	if len(ds) == 0 || len(sigmas) == 0 {
		return nil, 0, nil
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
	if len(out) == 0 {
		return nil, 0, greyZone(ds, gauge, gsigma, s.ref)
	}
	if _, ok := out[s.ref]; !ok {
		gauge = 0
		if doubt > 0 {
			// The reference may as well have stepped: from then on its
			// own record is uncertain by as much, with no size to correct.
			out[s.ref] = nodeStep{Step: offsets.Step{SizeUncertaintyNS: doubt}, ambiguous: true, doubt: doubt}
		}
	}
	return out, gauge, nil
}

// stepDiff is one node's difference across a clock step (see steps): d,
// of uncertainty sigma, its offset's, and rate its clock's.
type stepDiff struct {
	node     int
	d, sigma float64
	rate     float64
}

// greySigmas is how many σ of its difference across a cluster no node
// was taken to have stepped in make a node's difference a step too small
// to attribute: beyond it honest noise goes but 0.27 % of the time.
const greySigmas = 3

// greyZone is the differences beyond greySigmas, by node, of a cluster
// whose steps steps attributed to no node: the reference's is minus the
// median of the others' (with the median's σ taken as a typical
// difference's), each other node's its own less the reference's share.
func greyZone(ds []stepDiff, gauge, gsigma float64, ref int) map[int]float64 {
	out := map[int]float64{}
	for _, d := range ds {
		size, sigma := d.d-d.rate*gauge, math.Hypot(d.sigma, gsigma)
		if math.Abs(size) > greySigmas*sigma {
			out[d.node] = math.Abs(size)
		}
	}
	return out
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
	// Between windows no edge saw a step: a difference short of
	// stepSigmas is noise (steps' third result, for a step the edges saw,
	// is not asked for).
	st, gauge, _ := s.steps(carry(first, at, nil), carry(s.lastSum, at, &s.wander))
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
