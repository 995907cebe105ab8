package graphcalc

import (
	"errors"
	"fmt"
	"github.com/chronosync/chronosync/model/globaltime"
	"sort"
	"strconv"
	"strings"
)

// Edge is one fitted probe line src→dst of a round:
//
//	C_dst − C_src = Alpha·(C_src − SrcOrigin) + Beta
//
// with C_k node k's clock in ns.
type Edge struct {
	// Src and Dst are the node ids at the two ends; Src fitted the line.
	Src, Dst int
	// Alpha is the relative rate of Dst against Src (r_dst/r_src − 1);
	// Beta is C_dst − C_src, in ns, at the instant Src's clock reads SrcOrigin.
	Alpha, Beta float64
	// Sigma is the 1σ uncertainty of Beta (ns), AlphaSigma that of Alpha;
	// both must lie within their bounds (MinSigma to MaxSigma,
	// MinAlphaSigma to MaxAlphaSigma), as Alpha and Beta must (MaxAlpha,
	// MaxBeta): see Check.
	Sigma, AlphaSigma float64
	// SysSigma is the part of Sigma that is systematic: an error that
	// other edges may share (a path asymmetry the probes reveal, say),
	// which does not average out; 0 for none. It must lie in [0,
	// MaxSigma].
	SysSigma float64
	// SrcOrigin is the x origin of the fit in Src's own clock (ns, may be
	// < 0): the protocol fits at the middle of Src's window.
	SrcOrigin int64
}

// Bounds on an Edge's values. Solve refuses an edge outside them (wrapping
// ErrBadInput, naming the edge and the field), and so may anyone who takes
// edges from elsewhere (Edge.Check). They are far wider than any honest fit
// and narrow enough that the weights 1/Sigma² and 1/AlphaSigma², the
// products and the solution stay finite.
const (
	// MaxAlpha bounds |Alpha|: clocks whose rates differ by 10% are
	// broken, not drifting (quartz drifts by parts per million).
	MaxAlpha = 0.1
	// MaxBeta bounds |Beta|, ns: about 31.7 years.
	MaxBeta = 1e18
	// MinSigma and MaxSigma bound Sigma, ns: from a picosecond, below any
	// timestamp's resolution, to an hour. SysSigma lies in [0, MaxSigma].
	MinSigma = 1e-3
	MaxSigma = 3.6e12
	// MinAlphaSigma and MaxAlphaSigma bound AlphaSigma, a fraction of the
	// rate: from 1e-15, the estimators' own floor (a femtosecond a
	// second; beside a typical edge's 1e-9 its weight is 1e12 times
	// larger, about what float64 normal equations still hold), to 1, an
	// Alpha that says nothing.
	MinAlphaSigma = 1e-15
	MaxAlphaSigma = 1.0
)

// Check reports the first of e's values outside the bounds above (or not
// finite), naming the field and wrapping ErrBadInput, e.g. "Sigma is
// 1e-300, want finite and within [0.001, 3.6e+12]"; nil when every value is
// acceptable. It does not look at Src, Dst and SrcOrigin: which nodes a
// round has is the Input's to say.
func (e Edge) Check() error {
	for _, f := range []struct {
		name   string
		v      float64
		lo, hi float64
	}{
		{"Alpha", e.Alpha, -MaxAlpha, MaxAlpha},
		{"Beta", e.Beta, -MaxBeta, MaxBeta},
		{"Sigma", e.Sigma, MinSigma, MaxSigma},
		{"AlphaSigma", e.AlphaSigma, MinAlphaSigma, MaxAlphaSigma},
		{"SysSigma", e.SysSigma, 0, MaxSigma},
	} {
		// NaN fails both comparisons; ±Inf is beyond every bound.
		if !(f.v >= f.lo && f.v <= f.hi) {
			return fmt.Errorf("%s is %v, want finite and within [%v, %v]: %w", f.name, f.v, f.lo, f.hi, ErrBadInput)
		}
	}
	return nil
}

// Input is one round's measurements.
type Input struct {
	// Round is carried into the summary and every error message.
	Round uint64
	// Reference is the node whose clock defines global time g.
	Reference int
	// Origin is G0, the reference's fit origin in its own clock (ns): the
	// middle of its window in the protocol.
	Origin int64
	// Nodes lists every node expected this round, in any order, without
	// duplicates; it must include Reference.
	Nodes []int
	// Edges are the round's fitted lines, each naming nodes of Nodes.
	Edges []Edge
}

// Options tune Solve. The zero value selects every default; negative
// values other than MaxRejectRounds wrap ErrBadInput.
type Options struct {
	// ConsistencyP is the p-value below which a fit is inconsistent: a χ²
	// of the offset residuals that honest Sigmas would reach less often;
	// 0 means 1e-3.
	ConsistencyP float64
	// RejectMargin is how much lower the χ² without a link must be than
	// without any other link (in units of the remaining fit's χ²/DOF where
	// that exceeds 1) for the link to be rejected; 0 means the χ² that one
	// degree of freedom exceeds with probability ConsistencyP (10.8 at
	// 1e-3).
	RejectMargin float64
	// Candidates is the number of links, those carrying the most χ², whose
	// removal is tried; 0 means 8.
	Candidates int
	// MaxRejectRounds bounds the links rejected; 0 means 3 and a negative
	// value turns rejection off.
	MaxRejectRounds int
	// ExactCovarianceLimit is the number of unknowns (component nodes less
	// the reference) up to which the covariance diagonal is exact (dense
	// Cholesky); 0 means 256.
	ExactCovarianceLimit int
	// SketchDim is the number of random ±1 projections of the approximate
	// covariance used above ExactCovarianceLimit; 0 means 16.
	SketchDim int
	// Seed seeds the PCG that draws the sketch's projections.
	Seed uint64
}

// Model is one node's solved clock: C_i(g) = G0 + U + Rate·(g − G0).
type Model struct {
	// Node is the node id.
	Node int
	// Origin is G0, the reference's fit origin (ns).
	Origin int64
	// U is C_i(G0) − G0 in ns.
	U float64
	// Rate is dC_i/dg.
	Rate float64
	// Sigma is the 1σ uncertainty of U (ns), inflated to cover the
	// round's inconsistency (see Consistency) and with the edges'
	// systematic uncertainties at their worst (SysSigma, see the package
	// doc); FitSigma is the least-squares value it grew from.
	Sigma, FitSigma, SysSigma float64
	// RateSigma is the 1σ uncertainty of Rate.
	RateSigma float64
}

// Linear is the model as a map from the node's clock to global time,
// anchored at G0: global = local − OffsetAt(G0) − (1 − 1/Rate)·(local − G0),
// which is G0 + (local − G0 − U)/Rate exactly, computed without losing
// precision for clocks far from zero.
func (m Model) Linear() globaltime.Linear {
	return globaltime.Linear{Anchor: m.Origin, Offset: m.OffsetAt(m.Origin), Drift: (m.Rate - 1) / m.Rate}
}

// OffsetAt returns local − Linear().Global(local): how far the node's clock is ahead
// of global time when it reads local, in ns. It is computed from local − G0
// in integers, so it keeps full precision for any clock value, and in the
// form (U + (local − G0)·(Rate − 1))/Rate, whose terms are all small.
func (m Model) OffsetAt(local int64) float64 {
	d := diff(local, m.Origin)
	return (m.U + d*(m.Rate-1)) / m.Rate
}

// DriftPPM returns d(C_i − g)/dC_i in ppm, (1 − 1/Rate)·1e6, so that
//
//	g = local − OffsetAt(ws) − DriftPPM()·1e-6·(local − ws)
//
// holds exactly for every window start ws.
func (m Model) DriftPPM() float64 {
	return (m.Rate - 1) / m.Rate * 1e6
}

// EdgeResult is the fate of one input edge.
type EdgeResult struct {
	// Src and Dst repeat the edge's ends.
	Src, Dst int
	// Residual is measured minus solved of the offset equation, ns: the
	// loop inconsistency the edge carries (for a rejected edge, against
	// the solution without it). It is 0 for edges outside the reference's
	// component, which are not solved.
	Residual float64
	// Normalized is Residual / Sigma.
	Normalized float64
	// Rejected reports that outlier rejection dropped the edge.
	Rejected bool
}

// RoundSummary is the solution of one round.
type RoundSummary struct {
	// Round, Reference and Origin repeat the input's.
	Round     uint64
	Reference int
	Origin    int64
	// Nodes holds the models of the reference's component, sorted by Node.
	Nodes []Model
	// Edges holds one result per input edge, in input order.
	Edges []EdgeResult
	// Consistency is the goodness of fit of the offsets.
	Consistency Consistency
	// RMSResidual and MaxResidual (of |Residual|) are over kept edges, ns.
	RMSResidual float64
	MaxResidual float64
	// Rejected counts the rejected edges.
	Rejected int
	// Passes counts the solves of both problems: 1, and 2 when links were
	// rejected (the solutions without them).
	Passes int
	// Components are the connected components of the kept edges, each
	// sorted, the reference's first and then by smallest node; it has one
	// element when the graph is connected.
	Components [][]int
}

// Model returns the model of node, and false when node is not in the
// reference's component.
func (s *RoundSummary) Model(node int) (Model, bool) {
	i := sort.Search(len(s.Nodes), func(i int) bool { return s.Nodes[i].Node >= node })
	if i < len(s.Nodes) && s.Nodes[i].Node == node {
		return s.Nodes[i], true
	}
	return Model{}, false
}

var (
	// ErrBadInput is wrapped by every validation error of Input or Options.
	ErrBadInput = errors.New("bad input")
	// ErrNoEdges is wrapped when a round has no edges at all.
	ErrNoEdges = errors.New("no edges")
	// ErrNotConverged is wrapped when the iterative solver fails on a
	// system too large for the dense fallback.
	ErrNotConverged = errors.New("solver did not converge")
	// ErrNotFinite is wrapped when the solution holds a NaN or an
	// infinity, which Solve never returns as a result.
	ErrNotFinite = errors.New("solution not finite")
)

// DisconnectedError reports a probe graph in several pieces. Solve returns
// it together with the summary of the reference's component.
type DisconnectedError struct {
	// Round and Reference repeat the input's.
	Round     uint64
	Reference int
	// Components are as in RoundSummary.Components.
	Components [][]int
}

// Error names every component with ranges of consecutive ids, e.g.
// "graphcalc: round 3: probe graph is disconnected into 3 components:
// {0-15} (reference 0), {16-30}, {31}".
func (e *DisconnectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graphcalc: round %d: probe graph is disconnected into %d components: ", e.Round, len(e.Components))
	for k, c := range e.Components {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(formatRanges(c))
		if k == 0 {
			fmt.Fprintf(&b, " (reference %d)", e.Reference)
		}
	}
	return b.String()
}

// formatRanges writes a sorted id list as "{0-3,5,7-9}".
func formatRanges(ids []int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	b.WriteByte('}')
	return b.String()
}
