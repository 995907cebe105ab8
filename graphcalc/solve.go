package graphcalc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Solve fits the round's global clock model (see the package doc). When
// the probe graph is disconnected it returns the summary of the
// reference's component together with a *DisconnectedError. Invalid input
// (an edge outside the bounds of Edge.Check, among others) wraps
// ErrBadInput, naming the edge and the field; a round without edges
// ErrNoEdges. It never returns a NaN or an infinity in a summary: such a
// solution wraps ErrNotFinite instead.
func Solve(in Input, o Options) (*RoundSummary, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("graphcalc: round %d: %w", in.Round, err)
	}
	nodes, ends, err := validate(in)
	if err != nil {
		return nil, fmt.Errorf("graphcalc: round %d: %w", in.Round, err)
	}
	if len(in.Edges) == 0 {
		return nil, fmt.Errorf("graphcalc: round %d: %d nodes: %w", in.Round, len(nodes), ErrNoEdges)
	}
	comps, label := components(nodes, ends, in.Reference)
	sum := &RoundSummary{
		Round: in.Round, Reference: in.Reference, Origin: in.Origin,
		Edges: make([]EdgeResult, len(in.Edges)), Components: comps,
	}
	for e, ed := range in.Edges {
		sum.Edges[e] = EdgeResult{Src: ed.Src, Dst: ed.Dst}
	}
	if err := solveComponent(in, o, ends, label, sum); err != nil {
		return nil, fmt.Errorf("graphcalc: round %d: %w", in.Round, err)
	}
	if err := checkFinite(sum); err != nil {
		return nil, fmt.Errorf("graphcalc: round %d: %w", in.Round, err)
	}
	if len(comps) > 1 {
		return sum, &DisconnectedError{Round: in.Round, Reference: in.Reference, Components: comps}
	}
	return sum, nil
}

// solveComponent solves the reference's component (the nodes labelled 0;
// ends are the edges' ends as positions among the sorted nodes) and fills
// sum's Nodes, Edges and figures.
func solveComponent(in Input, o Options, ends [][2]int32, label []int32, sum *RoundSummary) error {
	comp := sum.Components[0]
	n := len(comp)
	local := make([]int32, len(label)) // position → index within comp
	k := int32(0)
	for p, l := range label {
		if l == 0 {
			local[p], k = k, k+1
		}
	}
	ref, _ := slices.BinarySearch(comp, in.Reference)
	rate, off := newRows(len(in.Edges)), newRows(len(in.Edges))
	sigma := make([]float64, 0, len(in.Edges))
	for e, ed := range in.Edges {
		if label[ends[e][0]] != 0 {
			continue
		}
		i, j := local[ends[e][0]], local[ends[e][1]]
		rate.add(i, j, 1, 1/(ed.AlphaSigma*ed.AlphaSigma), math.Log1p(ed.Alpha), e)
		t := ed.Alpha*diff(in.Origin, ed.SrcOrigin) + ed.Beta
		// The weight counts the statistical part of Sigma only (see
		// SysSigma in the package doc).
		stat := math.Sqrt(max(ed.Sigma*ed.Sigma-ed.SysSigma*ed.SysSigma, 1))
		off.add(i, j, 1+ed.Alpha, 1/(stat*stat), t, e)
		off.sys = append(off.sys, ed.SysSigma)
		sigma = append(sigma, stat)
	}
	kept := make([]bool, len(off.src))
	for e := range kept {
		kept[e] = true
	}
	xr, xo := make([]float64, n), make([]float64, n)
	rsys, osys := newSystem(n, ref, &rate, kept), newSystem(n, ref, &off, kept)
	rsys.treeStart(xr)
	osys.treeStart(xo)
	solveBoth := func() error {
		if err := rsys.solve(xr); err != nil {
			return fmt.Errorf("rates: %w", err)
		}
		if err := osys.solve(xo); err != nil {
			return fmt.Errorf("offsets: %w", err)
		}
		sum.Passes++
		return nil
	}
	if err := solveBoth(); err != nil {
		return err
	}
	f := &fitter{n: n, ref: ref, all: &off, kept: kept, o: o}
	rejected := f.reject(xo, comp)
	if len(rejected) > 0 {
		rsys, osys = newSystem(n, ref, &rate, kept), newSystem(n, ref, &off, kept)
		if err := solveBoth(); err != nil {
			return err
		}
	}
	res := residuals(&off, xo)
	vr, vo, err := variances(rsys, osys, o)
	if err != nil {
		return err
	}
	con, extra := f.assess(&rate, xo, xr, comp)
	con.Rejected = rejected
	sys, err := systematicOf(osys, &off, kept, o)
	if err != nil {
		return err
	}
	sum.Consistency = con
	sum.Nodes = make([]Model, n)
	for i, id := range comp {
		r := math.Exp(xr[i])
		m := Model{
			Node: id, Origin: in.Origin, U: xo[i], Rate: r,
			FitSigma:  math.Sqrt(vo[i]),
			RateSigma: r * math.Sqrt(vr[i]) * con.RateScale,
		}
		if sys != nil {
			m.SysSigma = sys[i]
		}
		m.Sigma = math.Sqrt(vo[i]*con.Scale*con.Scale + extra[i] + m.SysSigma*m.SysSigma)
		sum.Nodes[i] = m
	}
	var ss float64
	nk := 0
	for e, orig := range off.orig {
		er := &sum.Edges[orig]
		er.Residual, er.Normalized, er.Rejected = res[e], res[e]/sigma[e], !kept[e]
		if !kept[e] {
			sum.Rejected++
			continue
		}
		ss += res[e] * res[e]
		nk++
		sum.MaxResidual = max(sum.MaxResidual, math.Abs(res[e]))
	}
	if nk > 0 {
		sum.RMSResidual = math.Sqrt(ss / float64(nk))
	}
	return nil
}

// systematicOf is systematic over the offset system, with its exact
// inverse where the covariance is exact.
func systematicOf(osys *system, off *rows, kept []bool, o Options) ([]float64, error) {
	has := false
	for e, ok := range kept {
		has = has || ok && off.sys[e] > 0
	}
	if !has {
		return nil, nil
	}
	if osys.n-1 > o.ExactCovarianceLimit {
		return systematic(osys.n, off, kept, nil), nil
	}
	inv, err := osys.exactInverse()
	if err != nil {
		return nil, fmt.Errorf("offset covariance: %w", err)
	}
	return systematic(osys.n, off, kept, inv), nil
}

// variances returns the diagonals of the inverse normal matrices of the
// rate and offset problems: exact up to ExactCovarianceLimit unknowns,
// sketched above.
func variances(rsys, osys *system, o Options) (vr, vo []float64, err error) {
	if rsys.n-1 <= o.ExactCovarianceLimit {
		if vr, err = rsys.exactVariance(); err != nil {
			return nil, nil, fmt.Errorf("rate covariance: %w", err)
		}
		if vo, err = osys.exactVariance(); err != nil {
			return nil, nil, fmt.Errorf("offset covariance: %w", err)
		}
		return vr, vo, nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, sketchStream))
	return rsys.sketchVariance(o.SketchDim, rng), osys.sketchVariance(o.SketchDim, rng), nil
}

// diff returns a − b without int64 overflow.
func diff(a, b int64) float64 {
	d := a - b
	if (d < a) != (b > 0) { // overflowed
		return float64(a) - float64(b)
	}
	return float64(d)
}

// withDefaults fills the zero options and rejects negative ones.
func (o Options) withDefaults() (Options, error) {
	switch {
	case !(o.ConsistencyP >= 0 && o.ConsistencyP < 1):
		return o, fmt.Errorf("option ConsistencyP is %v, want in [0, 1): %w", o.ConsistencyP, ErrBadInput)
	case !(o.RejectMargin >= 0) || math.IsInf(o.RejectMargin, 0):
		return o, fmt.Errorf("option RejectMargin is %v, want finite ≥ 0: %w", o.RejectMargin, ErrBadInput)
	case o.Candidates < 0:
		return o, fmt.Errorf("option Candidates is %d, want ≥ 0: %w", o.Candidates, ErrBadInput)
	case o.ExactCovarianceLimit < 0:
		return o, fmt.Errorf("option ExactCovarianceLimit is %d, want ≥ 0: %w", o.ExactCovarianceLimit, ErrBadInput)
	case o.SketchDim < 0:
		return o, fmt.Errorf("option SketchDim is %d, want ≥ 0: %w", o.SketchDim, ErrBadInput)
	}
	if o.ConsistencyP == 0 {
		o.ConsistencyP = 1e-3
	}
	if o.Candidates == 0 {
		o.Candidates = 8
	}
	if o.MaxRejectRounds == 0 {
		o.MaxRejectRounds = 3
	}
	if o.ExactCovarianceLimit == 0 {
		o.ExactCovarianceLimit = 256
	}
	if o.SketchDim == 0 {
		o.SketchDim = 16
	}
	return o, nil
}

// validate checks the input and returns the sorted node ids and each
// edge's ends as positions among them.
func validate(in Input) ([]int, [][2]int32, error) {
	nodes := slices.Clone(in.Nodes)
	slices.Sort(nodes)
	for i := 1; i < len(nodes); i++ {
		if nodes[i-1] == nodes[i] {
			return nil, nil, fmt.Errorf("node %d is listed twice: %w", nodes[i], ErrBadInput)
		}
	}
	// Ids that run without gaps (the usual 0..n−1) are their own
	// positions less the first.
	dense := len(nodes) > 0 && nodes[len(nodes)-1]-nodes[0] == len(nodes)-1
	pos := func(id int) int32 {
		if dense {
			if id < nodes[0] || id > nodes[len(nodes)-1] {
				return -1
			}
			return int32(id - nodes[0])
		}
		i, ok := slices.BinarySearch(nodes, id)
		if !ok {
			return -1
		}
		return int32(i)
	}
	if pos(in.Reference) < 0 {
		return nil, nil, fmt.Errorf("reference %d is not among the %d nodes: %w", in.Reference, len(nodes), ErrBadInput)
	}
	ends := make([][2]int32, len(in.Edges))
	for e, ed := range in.Edges {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("edge %d (%d->%d): %s: %w", e, ed.Src, ed.Dst, fmt.Sprintf(format, args...), ErrBadInput)
		}
		ends[e] = [2]int32{pos(ed.Src), pos(ed.Dst)}
		switch {
		case ends[e][0] < 0:
			return nil, nil, bad("node %d is not among the round's nodes", ed.Src)
		case ends[e][1] < 0:
			return nil, nil, bad("node %d is not among the round's nodes", ed.Dst)
		case ed.Src == ed.Dst:
			return nil, nil, bad("src and dst are both node %d", ed.Src)
		}
		if err := ed.Check(); err != nil {
			return nil, nil, fmt.Errorf("edge %d (%d->%d): %w", e, ed.Src, ed.Dst, err)
		}
	}
	return nodes, ends, nil
}

// checkFinite reports the first NaN or infinity of the solution sum,
// naming the node or edge and the field, wrapping ErrNotFinite. Bounded
// input keeps the solution finite; this makes sure no fault elsewhere
// hands on a NaN offset as a result.
func checkFinite(sum *RoundSummary) error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for _, m := range sum.Nodes {
		for _, f := range []struct {
			name string
			v    float64
		}{{"U", m.U}, {"Rate", m.Rate}, {"Sigma", m.Sigma}, {"FitSigma", m.FitSigma}, {"SysSigma", m.SysSigma}, {"RateSigma", m.RateSigma}} {
			if !finite(f.v) {
				return fmt.Errorf("node %d: %s is %v: %w", m.Node, f.name, f.v, ErrNotFinite)
			}
		}
	}
	for e, r := range sum.Edges {
		if !finite(r.Residual) || !finite(r.Normalized) {
			return fmt.Errorf("edge %d (%d->%d): residual %v (%v σ): %w", e, r.Src, r.Dst, r.Residual, r.Normalized, ErrNotFinite)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"RMSResidual", sum.RMSResidual}, {"MaxResidual", sum.MaxResidual}} {
		if !finite(f.v) {
			return fmt.Errorf("%s is %v: %w", f.name, f.v, ErrNotFinite)
		}
	}
	return nil
}

// components returns the connected components of the undirected graph of
// the edges (ends as positions among nodes, which are sorted), each
// sorted, the reference's first and the rest by smallest node, and the
// component number of every position.
func components(nodes []int, ends [][2]int32, reference int) ([][]int, []int32) {
	uf := newUnionFind(len(nodes))
	for _, e := range ends {
		uf.union(int(e[0]), int(e[1]))
	}
	refRoot := uf.find(sort.SearchInts(nodes, reference))
	slot := make([]int32, len(nodes)) // root → component number + 1
	label := make([]int32, len(nodes))
	comps := [][]int{nil}
	slot[refRoot] = 1
	for i, id := range nodes {
		root := uf.find(i)
		if slot[root] == 0 {
			slot[root] = int32(len(comps)) + 1
			comps = append(comps, nil)
		}
		label[i] = slot[root] - 1
		comps[label[i]] = append(comps[label[i]], id)
	}
	return comps, label
}
