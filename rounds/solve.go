package rounds

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// Solver turns each round's reports into clock models with GraphCalc. It
// keeps one thing from round to round: the sum of the reference's clock
// steps, so that global time (the reference's clock with its steps taken
// out) runs on unbroken across them.
type Solver struct {
	nodes []int
	ref   int
	o     graphcalc.Options
	// carried is the reference's clock steps so far, ns: every model is
	// offset by it.
	carried float64
	// prev is each node's record of the last round solved, before its
	// model error was added; mismatch the boundary mismatches seen so far
	// (see modelError).
	prev     map[int]offsets.Offset
	mismatch []mismatch
	// ambiguity is global time's own uncertainty after the clock steps so
	// far, ns (in quadrature): the size of each step that could not be told
	// to be the reference's or another node's, and the size uncertainty of
	// each step the reference took (global time after it runs on the
	// reference's clock less the step as estimated); every later model is
	// uncertain by that much too.
	ambiguity float64
	// notes say what the last round's solution could not settle.
	notes []string
	// last is the last round solved and its models (after its steps), to
	// find a step that fell between its window and the next (see
	// boundarySteps); stepFloor is the smallest such step, ns (0: none
	// is looked for).
	last      uint64
	lastSum   *graphcalc.RoundSummary
	stepFloor float64
}

// Notes returns what the last Solve could not settle (an unattributable
// clock step), one line each; nil when nothing.
func (s *Solver) Notes() []string { return s.notes }

// NewSolver solves rounds over the probe graph's nodes against reference
// ref. stepTh is the smallest clock step the estimator looks for inside a
// window (estimate.Options.StepThreshold: 0 means its default, negative
// none); the Solver looks for steps as large between two windows.
func NewSolver(nodes []int, ref int, o graphcalc.Options, stepTh time.Duration) *Solver {
	s := &Solver{nodes: slices.Clone(nodes), ref: ref, o: o}
	switch {
	case stepTh == 0:
		s.stepFloor = float64(estimate.DefaultStepThreshold)
	case stepTh > 0:
		s.stepFloor = float64(stepTh)
	}
	return s
}

// errNoReference is returned when the reference node did not report: its
// window anchors the global timeline.
var errNoReference = errors.New("the reference node did not report")

// Solve runs GraphCalc over one round's reports (indexed by anything; nil
// entries are skipped) and turns the solution into offsets.jsonl and
// rounds.jsonl records. On a disconnected graph it returns the reference's
// component's records with a *graphcalc.DisconnectedError.
//
// When edges report a clock step inside the window, the round is solved
// twice: with the lines after the steps (the summary returned) and with
// those before them. A node whose offset differs between the two by more
// than five times the uncertainty of the difference stepped; since every
// offset is relative to the reference, a step of the reference shows as
// the same difference on every other node, so the differences are taken
// from their median (that of the nodes that did not step). Each node's
// record is the model before its steps, with the steps (size and time) in
// Steps; a step of the reference is carried into every later round.
func (s *Solver) Solve(round uint64, reports []*syncpb.NodeWindowData) (*graphcalc.RoundSummary, []offsets.Offset, []offsets.Edge, error) {
	s.notes = nil
	byNode := map[int]*syncpb.NodeWindowData{}
	for _, d := range reports {
		if d != nil {
			byNode[int(d.NodeId)] = d
		}
	}
	recs, post, used := s.input(round, reports, false)
	rd, ok := byNode[s.ref]
	if !ok {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, errNoReference)
	}
	post.Origin = FitOrigin(rd.WindowStartNs, rd.WindowEndNs)
	sum, err := graphcalc.Solve(post, s.o)
	var disc *graphcalc.DisconnectedError
	if err != nil && !errors.As(err, &disc) {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, err)
	}
	for k, i := range used {
		r := sum.Edges[k]
		res := r.Residual
		recs[i].Residual, recs[i].Rejected = &res, r.Rejected
	}
	// The models before the round's steps: those after them, unless a
	// node stepped.
	before := func(m graphcalc.Model) graphcalc.Model { return m }
	var steps map[int]offsets.Step
	carried, ambiguity := s.carried, s.ambiguity
	var psum *graphcalc.RoundSummary
	var boundary bool
	if hasStep(reports) {
		_, pre, _ := s.input(round, reports, true)
		pre.Origin = post.Origin
		if p, perr := graphcalc.Solve(pre, s.o); perr == nil || errors.As(perr, &disc) {
			psum = p
		}
	} else if s.lastSum != nil && s.last+1 == round && s.stepFloor > 0 {
		psum, boundary = s.extrapolate(s.lastSum, post.Origin), true
	}
	if psum != nil {
		var gauge float64
		steps, gauge = s.steps(sum, psum, reports, boundary)
		if st, ok := steps[s.ref]; ok && st.SizeNS != 0 {
			// The reference stepped: global time runs on through the
			// step as estimated, and its error stays in every later
			// model (a boundary step's in this round's too, which are
			// after it).
			s.ambiguity = math.Hypot(s.ambiguity, st.SizeUncertaintyNS)
			if boundary {
				ambiguity = s.ambiguity
			}
		}
		switch {
		case len(steps) == 0:
		case boundary:
			// This round's models are after the steps: each is moved back
			// by its own step and the reference's.
			s.carried -= gauge
			before = func(m graphcalc.Model) graphcalc.Model {
				m.U -= m.Rate*gauge + steps[m.Node].SizeNS
				return m
			}
		default:
			s.carried -= gauge // the reference's step
			before = func(m graphcalc.Model) graphcalc.Model {
				if mp, ok := psum.Model(m.Node); ok {
					return mp
				}
				m.U -= m.Rate * gauge // against the reference's clock before its step
				return m
			}
		}
	}
	offs := make([]offsets.Offset, 0, len(sum.Nodes))
	for _, m := range sum.Nodes {
		rec := s.record(round, rd, byNode[m.Node], before(m), carried)
		if st, ok := steps[m.Node]; ok {
			if boundary {
				st = s.atStart(st, rec)
			}
			rec.Steps = []offsets.Step{inWindow(st, rec)}
		}
		// Global time itself is uncertain after an unattributed step, the
		// reference's clock included.
		rec.UncertaintyNS = math.Hypot(rec.UncertaintyNS, ambiguity)
		offs = append(offs, rec)
	}
	s.addModelError(round, offs)
	s.last, s.lastSum = round, sum
	return sum, offs, recs, err
}

// extrapolate carries the models of sum (the last round's, after its
// steps) forward to the reference's reading origin, their uncertainties
// grown by their rates' over the distance and by the model error seen so
// far: what this round's models would be had no clock stepped since.
func (s *Solver) extrapolate(sum *graphcalc.RoundSummary, origin int64) *graphcalc.RoundSummary {
	me := modelError(s.mismatch)
	out := &graphcalc.RoundSummary{Nodes: make([]graphcalc.Model, len(sum.Nodes))}
	for i, m := range sum.Nodes {
		dt := float64(origin - m.Origin)
		m.U += (m.Rate - 1) * dt
		m.Sigma = math.Sqrt(m.Sigma*m.Sigma + m.RateSigma*dt*m.RateSigma*dt + me*me)
		m.Origin = origin
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

// record is node m's offsets.jsonl record: the model m (against the
// reference's clock) less the reference's steps carried, over the node's
// window (or, for a node that did not report, the reference's window rd
// mapped onto its clock).
func (s *Solver) record(round uint64, rd, d *syncpb.NodeWindowData, m graphcalc.Model, carried float64) offsets.Offset {
	local := func(g int64) int64 { // m's clock at the reference's reading g
		return int64(float64(m.Origin) + m.U + m.Rate*float64(g-m.Origin))
	}
	rec := offsets.Offset{
		Type: "offset", RoundID: round, WindowID: rd.WindowId, NodeID: m.Node,
		DriftPPM: m.DriftPPM(), UncertaintyNS: m.Sigma, DriftUncertaintyPPM: m.RateSigma / (m.Rate * m.Rate) * 1e6,
	}
	if d != nil {
		rec.WindowID, rec.WindowStartNS, rec.WindowEndNS = d.WindowId, d.WindowStartNs, d.WindowEndNs
	} else {
		rec.WindowStartNS, rec.WindowEndNS = local(rd.WindowStartNs), local(rd.WindowEndNs)
	}
	// The reference's clock is ahead of global time by what it stepped,
	// and so is every reading measured against it.
	rec.OffsetNS = m.OffsetAt(rec.WindowStartNS) + carried
	return rec
}

// hasStep reports whether any edge of the reports saw a clock step.
func hasStep(reports []*syncpb.NodeWindowData) bool {
	for _, d := range reports {
		if d == nil {
			continue
		}
		for _, e := range d.Edges {
			if e.StepDetected && !e.Insufficient {
				return true
			}
		}
	}
	return false
}

// input gathers GraphCalc's input from the reports and their rounds.jsonl
// edge records (used maps the input's edges to them). With pre, an edge
// that saw a step gives its line from before it, and is left out when it
// has none.
func (s *Solver) input(round uint64, reports []*syncpb.NodeWindowData, pre bool) ([]offsets.Edge, graphcalc.Input, []int) {
	inGraph := make(map[int]bool, len(s.nodes))
	for _, n := range s.nodes {
		inGraph[n] = true
	}
	in := graphcalc.Input{Round: round, Reference: s.ref, Nodes: s.nodes}
	var recs []offsets.Edge
	var used []int
	for _, d := range reports {
		if d == nil {
			continue
		}
		for _, e := range d.Edges {
			recs = append(recs, offsets.Edge{
				Type: "edge", RoundID: round, WindowID: d.WindowId,
				Src: int(e.SrcNodeId), Dst: int(e.DstNodeId),
				Alpha: e.Alpha, Beta: e.Beta, Sigma: e.SigmaNs, AsymSigma: e.AsymSigmaNs,
				PairsCount: int(e.PairsCount), LostCount: int(e.LostCount),
				Insufficient: e.Insufficient, StepDetected: e.StepDetected,
			})
			if e.Insufficient || !inGraph[int(e.DstNodeId)] {
				continue
			}
			ed := graphcalc.Edge{
				Src: int(e.SrcNodeId), Dst: int(e.DstNodeId),
				Alpha: e.Alpha, Beta: e.Beta, Sigma: e.SigmaNs, AlphaSigma: e.AlphaSigma, SysSigma: e.AsymSigmaNs,
				SrcOrigin: FitOrigin(d.WindowStartNs, d.WindowEndNs),
			}
			if pre && e.StepDetected {
				p := e.PreStep
				if p == nil {
					continue
				}
				ed.Alpha, ed.Beta, ed.Sigma, ed.AlphaSigma, ed.SysSigma = p.Alpha, p.Beta, p.SigmaNs, p.AlphaSigma, p.AsymSigmaNs
			}
			used = append(used, len(recs)-1)
			in.Edges = append(in.Edges, ed)
		}
	}
	return recs, in, used
}

// stepSigmas is how many σ of the difference between the solutions after
// and before the steps make a node's difference a step of its own.
const stepSigmas = 5

// steps compares the solutions after (post) and before (pre) the round's
// steps and returns each stepped node's step, and the gauge g: minus the
// reference's step. Offsets are against the reference's clock, so with
// node k's step s_k and the reference's s_r, k's offset moves by
// Δ_k = s_k − r_k·s_r (r_k its rate: at one instant the reference's clock
// reads s_r more, and k's clock runs r_k to its 1). Most nodes do not
// step, so the median of Δ_k/r_k is −s_r; a node is taken to have stepped
// by Δ_k + r_k·s_r when that is beyond stepSigmas of its uncertainty (that
// of Δ_k and of the median, taken as a typical Δ's). See Solve.
//
// With boundary, pre is the last round's models carried forward (see
// extrapolate) and no edge reported a step: a difference is a step only
// when it is also beyond the Solver's step floor, and no edge brackets it.
func (s *Solver) steps(post, pre *graphcalc.RoundSummary, reports []*syncpb.NodeWindowData, boundary bool) (map[int]offsets.Step, float64) {
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
	out := map[int]offsets.Step{}
	var doubt float64 // the unattributed steps' sizes, in quadrature
	for _, d := range ds {
		size, sigma := d.d-d.rate*gauge, math.Hypot(d.sigma, gsigma)
		if math.Abs(size) <= stepSigmas*sigma || (boundary && math.Abs(size) < s.stepFloor) {
			continue
		}
		st := offsets.Step{SizeNS: size, SizeUncertaintyNS: sigma}
		if ambiguous {
			// The step may as well have been the reference's: then global
			// time, which runs on the reference's clock, moved by it.
			st.SizeUncertaintyNS = math.Hypot(sigma, size)
			s.ambiguity = math.Hypot(s.ambiguity, size)
			doubt = math.Hypot(doubt, size)
			s.notes = append(s.notes, fmt.Sprintf("node %d and the reference moved %.0f ns apart (a clock step), and too few nodes say which of them stepped: global time after it is uncertain by that much", d.node, size))
		}
		if !boundary {
			st.AtNS, st.AtUncertaintyNS = s.stepTime(d.node, pre, post, reports)
			if ambiguous {
				// The edges' brackets are mapped to the reference's clock
				// as though node had stepped; had the reference, its
				// readings after the step would be off by the size.
				st.AtUncertaintyNS += math.Abs(size)
			}
		}
		out[d.node] = st
	}
	if _, ok := out[s.ref]; !ok {
		gauge = 0
		if doubt > 0 {
			// The reference may as well have stepped: from then on its
			// own record is uncertain by as much, with no size to correct.
			st := offsets.Step{SizeUncertaintyNS: doubt}
			if !boundary {
				st.AtNS, st.AtUncertaintyNS = s.stepTime(s.ref, pre, post, reports)
				st.AtUncertaintyNS += doubt
			}
			out[s.ref] = st
		}
	}
	return out, gauge
}

// stepTime brackets node's step from the edges that saw it: each edge's
// step lies, on its src clock, after StepAfterNs (before the step) and
// before StepAtNs (after it). Mapped to the reference's clock (with src's
// models before and after), the brackets of all the node's edges are
// intersected and the middle is mapped back onto node's clock before the
// step. It returns that reading and half the bracket's width (both 0 when
// no edge brackets it).
func (s *Solver) stepTime(node int, pre, post *graphcalc.RoundSummary, reports []*syncpb.NodeWindowData) (int64, float64) {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, d := range reports {
		if d == nil {
			continue
		}
		for _, e := range d.Edges {
			src, dst := int(e.SrcNodeId), int(e.DstNodeId)
			if !e.StepDetected || e.Insufficient || (src != node && dst != node) || e.StepAfterNs == 0 {
				continue
			}
			mp, ok1 := pre.Model(src)
			mq, ok2 := post.Model(src)
			if !ok1 || !ok2 {
				continue
			}
			lo = max(lo, mp.Linear().Global(e.StepAfterNs))
			hi = min(hi, mq.Linear().Global(e.StepAtNs))
		}
	}
	mp, ok := pre.Model(node)
	if !ok || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0
	}
	mid, half := (lo+hi)/2, math.Abs(hi-lo)/2
	return int64(math.Round(float64(mp.Origin) + mp.U + mp.Rate*(mid-float64(mp.Origin)))), half * mp.Rate
}

// mismatch is how far two successive windows' models of a node disagree
// where the first ends and the second begins: d, and the variance their
// uncertainties give it, v.
type mismatch struct{ d, v float64 }

// addModelError measures how far each node's model of this round disagrees
// with its model of the round before at the boundary of their windows,
// and widens every uncertainty of this round by the model error those
// mismatches show (see modelError). A model is a line over its window;
// a clock whose frequency wanders is not one, and its probes cannot tell
// (their noise is far larger than the curvature), but the next window's
// line starts where the wandered clock went, not where the last line
// pointed.
func (s *Solver) addModelError(round uint64, offs []offsets.Offset) {
	last := s.prev
	s.prev = make(map[int]offsets.Offset, len(offs))
	for _, o := range offs {
		s.prev[o.NodeID] = o
		p, ok := last[o.NodeID]
		if !ok || o.NodeID == s.ref || p.RoundID+1 != round || len(p.Steps) > 0 || len(o.Steps) > 0 {
			continue
		}
		at := o.WindowStartNS
		d := p.Global(at) - o.Global(at)
		sp, so := p.SigmaAt(at), o.SigmaAt(at)
		s.mismatch = append(s.mismatch, mismatch{d: d, v: sp*sp + so*so})
	}
	me := modelError(s.mismatch)
	if me == 0 {
		return
	}
	for i := range offs {
		if offs[i].NodeID != s.ref {
			offs[i].UncertaintyNS = math.Hypot(offs[i].UncertaintyNS, me)
		}
	}
}

// medianChi2One is the median of a χ² of one degree of freedom: of z² for
// a standard normal z.
const medianChi2One = 0.454936

// modelError is the 1σ error of a window's model that its uncertainty
// leaves out, from the boundary mismatches so far: the mismatches' scale
// in units of their stated σ is the square root of the median z²/0.455
// (the median, so that a missed step or a restart does not count), and
// the variance beyond 1 in that scale, shared by the two models of each
// mismatch, is the model error's. 0 while there are fewer than four
// mismatches or they are within their σ.
func modelError(ms []mismatch) float64 {
	if len(ms) < 4 {
		return 0
	}
	z2, v := make([]float64, len(ms)), make([]float64, len(ms))
	for i, m := range ms {
		z2[i], v[i] = m.d*m.d/m.v, m.v
	}
	scale := stats.Median(z2) / medianChi2One
	if scale <= 1 {
		return 0
	}
	return math.Sqrt((scale - 1) * stats.Median(v) / 2)
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
