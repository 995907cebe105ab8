package rounds

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// Solver turns each round's reports into clock models with GraphCalc. It
// keeps from round to round the sum of the reference's clock steps, so
// that global time (the reference's clock with its steps taken out) runs
// on unbroken across them; the last round's models, to find a step that
// fell between two windows; and each node's history of how its models
// of successive windows disagree (its wander, see modelError).
type Solver struct {
	nodes []int
	ref   int
	o     graphcalc.Options
	// carried is the reference's clock steps so far, ns: every model is
	// offset by it.
	carried float64
	// prev is each node's record of the last round solved, before its
	// model error was added, and published as it was written; wander the
	// boundary mismatches seen so far (see modelError).
	prev, published map[int]offsets.Offset
	wander          wanderLog
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
	// boundarySteps).
	last    uint64
	lastSum *graphcalc.RoundSummary
	// stepFloor is the smallest step taken, ns (0: none below what the
	// data show); noSteps that step detection is off.
	stepFloor float64
	noSteps   bool
}

// Notes returns what the last Solve could not settle (an unattributable
// clock step), one line each; nil when nothing.
func (s *Solver) Notes() []string { return s.notes }

// NewSolver solves rounds over the probe graph's nodes against reference
// ref. stepTh is the estimator's floor under the clock steps it takes
// (estimate.Options.StepThreshold: 0 none, negative no step detection);
// the Solver takes no step between two windows smaller than it either.
func NewSolver(nodes []int, ref int, o graphcalc.Options, stepTh time.Duration) *Solver {
	return &Solver{nodes: slices.Clone(nodes), ref: ref, o: o, stepFloor: float64(max(stepTh, 0)), noSteps: stepTh < 0}
}

// errNoReference is returned when the reference node did not report: its
// window anchors the global timeline.
var errNoReference = errors.New("the reference node did not report")

// Solve runs GraphCalc over one round's reports (indexed by anything; nil
// entries are skipped) and turns the solution into offsets.jsonl and
// rounds.jsonl records. On a disconnected graph it returns the reference's
// component's records with a *graphcalc.DisconnectedError.
//
// When edges report clock steps inside the window, the steps are grouped
// by when they fell (placeSteps), and the round is solved once for each run
// of time between them: every edge with the line of its probes in that
// run. A node whose offset differs between the solutions on either side
// of a cluster by more than five times the uncertainty of the difference
// stepped there; since every offset is relative to the reference, a step
// of the reference shows as the same difference on every other node, so
// the differences are taken from their median (that of the nodes that did
// not step). Each node's record is its model before its steps, with the
// steps (size and time) in Steps; a step of the reference is carried into
// every later round. The solution before the window's steps is also
// compared with the last round's models carried forward, for a step
// between the two windows (see boundarySteps).
func (s *Solver) Solve(round uint64, reports []*syncpb.NodeWindowData) (*graphcalc.RoundSummary, []offsets.Offset, []offsets.Edge, error) {
	s.notes = nil
	byNode := map[int]*syncpb.NodeWindowData{}
	for _, d := range reports {
		if d != nil {
			byNode[int(d.NodeId)] = d
		}
	}
	recs, edges := s.gather(round, reports)
	widenBlind(edges)
	rd, ok := byNode[s.ref]
	if !ok {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, errNoReference)
	}
	origin := FitOrigin(rd.WindowStartNs, rd.WindowEndNs)
	post, used := s.phaseInput(round, origin, edges, func(e *inEdge) int { return len(e.lines) - 1 })
	sum, err := graphcalc.Solve(post, s.o)
	var disc *graphcalc.DisconnectedError
	if err != nil && !errors.As(err, &disc) {
		return nil, nil, recs, fmt.Errorf("round %d: %w", round, err)
	}
	rejected := map[[2]int]bool{}
	for k, i := range used {
		r := sum.Edges[k]
		res := r.Residual
		recs[i].Residual, recs[i].Rejected = &res, r.Rejected
		if r.Rejected {
			rejected[[2]int{recs[i].Src, recs[i].Dst}] = true
		}
	}
	carried, ambiguity := s.carried, s.ambiguity
	w := s.windowSteps(round, origin, sum, edges)
	b := s.boundarySteps(round, rd.WindowStartNs, w.first)
	if b.ref {
		// Global time's error after a step of the reference between the
		// windows is in every model of this round, which is after it.
		ambiguity = s.ambiguity
	}
	miss := s.missSigmas(byNode, edges)
	offs := make([]offsets.Offset, 0, len(sum.Nodes))
	for _, m := range sum.Nodes {
		base := w.before(m)
		if b.steps != nil {
			base.U -= base.Rate*b.gauge + b.steps[m.Node].SizeNS
		}
		rec := s.record(round, rd, byNode[m.Node], base, carried)
		if st, ok := b.steps[m.Node]; ok {
			rec.Steps = append(rec.Steps, inWindow(s.atStart(st, rec), rec))
		}
		for _, st := range w.steps[m.Node] {
			rec.Steps = append(rec.Steps, inWindow(st, rec))
		}
		ordered(rec.Steps)
		// Global time itself is uncertain after an unattributed step, the
		// reference's clock included, and by a step of the reference's
		// too small to find; each node's model by its own.
		rec.UncertaintyNS = math.Hypot(math.Hypot(rec.UncertaintyNS, ambiguity), miss[s.ref])
		if m.Node != s.ref {
			rec.UncertaintyNS = math.Hypot(rec.UncertaintyNS, miss[m.Node])
		}
		rec.UncertaintyNS = math.Hypot(rec.UncertaintyNS, w.doubt[s.ref])
		if m.Node != s.ref {
			rec.UncertaintyNS = math.Hypot(rec.UncertaintyNS, w.doubt[m.Node])
		}
		offs = append(offs, rec)
	}
	s.selfCheck(round, reports, offs, rejected, w.doubt)
	s.addModelError(round, offs)
	s.published = make(map[int]offsets.Offset, len(offs))
	for _, o := range offs {
		s.published[o.NodeID] = o
	}
	s.last, s.lastSum = round, sum
	return sum, offs, recs, err
}

// missSigmas is each node's uncertainty from a step of its clock too
// small to find: what its report says its scan of all its out-edges
// could miss, or, for a node that did not report, what the best of its
// in-edges could (each edge's own scan).
func (s *Solver) missSigmas(byNode map[int]*syncpb.NodeWindowData, edges []inEdge) map[int]float64 {
	miss := make(map[int]float64, len(s.nodes))
	for n, d := range byNode {
		miss[n] = d.MissSigmaNs
	}
	for _, e := range edges {
		if _, ok := byNode[e.dst]; ok {
			continue
		}
		if m, ok := miss[e.dst]; !ok || e.miss < m {
			miss[e.dst] = e.miss
		}
	}
	return miss
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

// line is one fitted line of an edge: over the whole window, or over the
// probes between two of its steps.
type line struct {
	alpha, beta, sigma, alphaSigma, sys float64
	ok                                  bool // false: no probes there
}

// inEdge is one edge GraphCalc may use: its lines, one more than its
// steps (the last the line after them all), and where its rounds.jsonl
// record is.
type inEdge struct {
	src, dst int
	origin   int64   // src's fit origin
	miss     float64 // the uncertainty a step too small for its scan leaves
	rec      int
	lines    []line
	steps    []edgeStep
}

// edgeStep is one clock step an edge saw: on src's clock, after the probe
// at after (before the step; 0 when unknown) and before the one at at,
// of about size ns; cluster is the clock step of the round it belongs to
// (see placeSteps), −1 when it could not be placed.
type edgeStep struct {
	after, at int64
	size      float64
	cluster   int
}

// gather turns the reports into their rounds.jsonl edge records and the
// edges GraphCalc may use (sufficient, to a node of the probe graph).
func (s *Solver) gather(round uint64, reports []*syncpb.NodeWindowData) ([]offsets.Edge, []inEdge) {
	inGraph := make(map[int]bool, len(s.nodes))
	for _, n := range s.nodes {
		inGraph[n] = true
	}
	var recs []offsets.Edge
	var edges []inEdge
	for _, d := range reports {
		if d == nil {
			continue
		}
		for _, e := range d.Edges {
			recs = append(recs, edgeRecord(round, d, e))
			if e.Insufficient || !inGraph[int(e.DstNodeId)] {
				continue
			}
			ie := inEdge{src: int(e.SrcNodeId), dst: int(e.DstNodeId), origin: FitOrigin(d.WindowStartNs, d.WindowEndNs), miss: e.MissSigmaNs, rec: len(recs) - 1}
			for _, st := range e.Steps {
				l := line{}
				if p := st.Before; p != nil {
					l = line{alpha: p.Alpha, beta: p.Beta, sigma: p.SigmaNs, alphaSigma: p.AlphaSigma, sys: p.AsymSigmaNs, ok: true}
				}
				ie.lines = append(ie.lines, l)
				ie.steps = append(ie.steps, edgeStep{after: st.AfterNs, at: st.AtNs, size: st.SizeNs, cluster: -1})
			}
			ie.lines = append(ie.lines, line{alpha: e.Alpha, beta: e.Beta, sigma: e.SigmaNs, alphaSigma: e.AlphaSigma, sys: e.AsymSigmaNs, ok: true})
			edges = append(edges, ie)
		}
	}
	return recs, edges
}

// phaseInput is GraphCalc's input with each edge's line seg(e) (an index
// into its lines; edges whose line there has no probes, or −1, are left
// out), and which edge each input edge is.
func (s *Solver) phaseInput(round uint64, origin int64, edges []inEdge, seg func(*inEdge) int) (graphcalc.Input, []int) {
	in := graphcalc.Input{Round: round, Reference: s.ref, Nodes: s.nodes, Origin: origin}
	var used []int
	for k := range edges {
		e := &edges[k]
		i := seg(e)
		if i < 0 || !e.lines[i].ok {
			continue
		}
		l := e.lines[i]
		in.Edges = append(in.Edges, graphcalc.Edge{
			Src: e.src, Dst: e.dst, Alpha: l.alpha, Beta: l.beta, Sigma: l.sigma, AlphaSigma: l.alphaSigma, SysSigma: l.sys,
			SrcOrigin: e.origin,
		})
		used = append(used, e.rec)
	}
	return in, used
}

// ordered keeps a record's steps in strictly increasing at_ns, as
// offsets.jsonl wants them: a step placed at or before the one before it
// (a step between windows at the window's start, one inside it bracketed
// there too) is moved just after it, its time's uncertainty widened by as
// much.
func ordered(st []offsets.Step) {
	for i := 1; i < len(st); i++ {
		if st[i].AtNS <= st[i-1].AtNS {
			at := st[i-1].AtNS + 1
			st[i].AtUncertaintyNS += float64(at - st[i].AtNS)
			st[i].AtNS = at
		}
	}
}
