package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
)

// syncSection is the figures of a sync run: offsets.jsonl, rounds.jsonl
// and truth.jsonl.
func syncSection(r *Run) (*Section, error) {
	if len(r.Offsets) == 0 && len(r.Rounds) == 0 {
		return nil, nil
	}
	s := &Section{ID: "sync", Title: "Clock synchronization"}
	s.Intro = append(s.Intro, fmt.Sprintf("%d clock models of %d nodes over %d rounds; reference node %d.",
		len(r.Offsets), len(nodesOf(r.Offsets)), len(r.Rounds), r.RefNode))
	steps := stepsByNode(r.Offsets)
	var all []float64
	for _, n := range slices.Sorted(maps.Keys(steps)) {
		all = append(all, steps[n]...)
	}
	if len(all) > 0 {
		s.Intro = append(s.Intro, fmt.Sprintf("%d clock steps, marked by dashed red lines.", len(all)))
	}
	for _, f := range []func(*Run, map[int][]float64) (Figure, error){errorFigure, driftFigure} {
		fig, err := f(r, steps)
		if err != nil {
			return nil, err
		}
		s.Figures = append(s.Figures, fig)
	}
	for _, f := range []func(*Run) (Figure, error){latencyFigure, residualFigure, lossFigure} {
		fig, err := f(r)
		if err != nil {
			return nil, err
		}
		s.Figures = append(s.Figures, fig)
	}
	if t := rejectedTable(r.Edges); t != nil {
		s.Tables = append(s.Tables, *t)
	}
	return s, nil
}

// nodesOf is the sorted node ids of offs.
func nodesOf(offs []offsets.Offset) []int {
	set := map[int]bool{}
	for _, o := range offs {
		set[o.NodeID] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// stepsByNode is each node's clock steps, in seconds of its clock.
func stepsByNode(offs []offsets.Offset) map[int][]float64 {
	out := map[int][]float64{}
	for _, o := range offs {
		for _, st := range o.Steps {
			out[o.NodeID] = append(out[o.NodeID], float64(st.AtNS)/1e9)
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// errorFigure is the offset error of every node but the reference over
// time with its ±3σ band: against the truth where the run has it, else
// the self-check's worst prediction per node-round in σ.
func errorFigure(r *Run, steps map[int][]float64) (Figure, error) {
	if r.HasTruth {
		return truthFigure(r, steps)
	}
	return selfCheckFigure(r, steps)
}

func truthFigure(r *Run, steps map[int][]float64) (Figure, error) {
	const id, caption = "offset-error", "Offset error over time per node against the ground truth (ns, the node's clock in s), with its reported ±3σ band (shaded); dashed red lines are clock steps."
	pts, _ := groundtruth.PointErrors(r.Offsets, r.Truth, r.RefNode)
	byNode := map[int][]groundtruth.PointError{}
	for _, p := range pts {
		if p.Node != r.RefNode {
			byNode[p.Node] = append(byNode[p.Node], p)
		}
	}
	if len(byNode) == 0 {
		return emptyFigure(id, caption, "No node other than the reference has a clock model with ground truth to judge it by."), nil
	}
	nodes := slices.Sorted(maps.Keys(byNode))
	var plots []*gplot.Plot
	for i, n := range nodes {
		ps := byNode[n]
		slices.SortStableFunc(ps, func(a, b groundtruth.PointError) int { return cmp.Compare(a.Local, b.Local) })
		line, lo, hi := make(plotter.XYs, len(ps)), make(plotter.XYs, len(ps)), make(plotter.XYs, len(ps))
		for j, p := range ps {
			x := float64(p.Local) / 1e9
			line[j] = plotter.XY{X: x, Y: p.ErrorNS}
			lo[j] = plotter.XY{X: x, Y: -3 * p.SigmaNS}
			hi[j] = plotter.XY{X: x, Y: 3 * p.SigmaNS}
		}
		p, err := bandPanel(n, i, "error (ns)", line, lo, hi, steps[n])
		if err != nil {
			return Figure{}, err
		}
		plots = append(plots, p)
	}
	return tiles(id, caption, plots)
}

// bandPanel is node n's panel of a per-node figure: line inside the band
// lo–hi, in the node's colour (the i-th), its clock steps dashed.
func bandPanel(n, i int, ylabel string, line, lo, hi plotter.XYs, steps []float64) (*gplot.Plot, error) {
	p := newPlot(fmt.Sprintf("node %d", n), "node clock (s)", ylabel)
	if err := addBand(p, lo, hi, i); err != nil {
		return nil, err
	}
	if err := addLine(p, line, i, "", true); err != nil {
		return nil, err
	}
	addVLines(p, steps, "")
	return p, nil
}

// tiles is a figure of panels in a grid.
func tiles(id, caption string, plots []*gplot.Plot) (Figure, error) {
	svg, err := renderTiles(plots, columns(len(plots)), panelW, panelH)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

func selfCheckFigure(r *Run, steps map[int][]float64) (Figure, error) {
	const id, caption = "offset-error", "Self-check per node over time (no ground truth in this run): the worst |measured − predicted| edge offset of each node-round in units of the prediction's σ; the shaded band is 3σ, the bound honest σ keep 99.73 % of predictions within. Dashed red lines are clock steps."
	byNode := map[int]plotter.XYs{}
	for _, o := range r.Offsets {
		if o.SelfCheck != nil && o.SelfCheck.Predictions > 0 {
			byNode[o.NodeID] = append(byNode[o.NodeID], plotter.XY{X: float64(o.WindowStartNS) / 1e9, Y: o.SelfCheck.MaxSigma})
		}
	}
	if len(byNode) == 0 {
		return emptyFigure(id, caption, "This run has neither ground truth nor self-check predictions (offsets.jsonl before schema 3, or too few rounds)."), nil
	}
	nodes := slices.Sorted(maps.Keys(byNode))
	var plots []*gplot.Plot
	for i, n := range nodes {
		xy := byNode[n]
		slices.SortStableFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		lo, hi := make(plotter.XYs, len(xy)), make(plotter.XYs, len(xy))
		for j, v := range xy {
			lo[j], hi[j] = plotter.XY{X: v.X, Y: 0}, plotter.XY{X: v.X, Y: 3}
		}
		p, err := bandPanel(n, i, "max |error| (σ)", xy, lo, hi, steps[n])
		if err != nil {
			return Figure{}, err
		}
		plots = append(plots, p)
	}
	return tiles(id, caption, plots)
}

// driftFigure is each node's drift against the reference per window.
func driftFigure(r *Run, steps map[int][]float64) (Figure, error) {
	const id, caption = "drift", "Drift per node over time: each window's clock rate against the reference's (ppm), at the window's start on the node's clock (s); dashed red lines are clock steps."
	byNode := map[int]plotter.XYs{}
	for _, o := range r.Offsets {
		if o.NodeID != r.RefNode {
			byNode[o.NodeID] = append(byNode[o.NodeID], plotter.XY{X: float64(o.WindowStartNS) / 1e9, Y: o.DriftPPM})
		}
	}
	if len(byNode) == 0 {
		return emptyFigure(id, caption, "No node other than the reference has a clock model."), nil
	}
	p := newPlot("drift against the reference", "node clock (s)", "drift (ppm)")
	for i, n := range slices.Sorted(maps.Keys(byNode)) {
		xy := byNode[n]
		slices.SortStableFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		if err := addLine(p, xy, i, "node "+strconv.Itoa(n), true); err != nil {
			return Figure{}, err
		}
	}
	var all []float64
	for _, n := range slices.Sorted(maps.Keys(steps)) {
		all = append(all, steps[n]...)
	}
	addVLines(p, all, "step")
	p.Legend.Left = true
	svg, err := render(p, figWidth, figHeight)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// latencyFigure is each round's control latencies from rounds.jsonl.
func latencyFigure(r *Run) (Figure, error) {
	const id, caption = "round-latency", "Round latency per round (µs): how long the master waited to gather the nodes' reports, the gap from a round's end to the next one's start, and the spread of the nodes' round starts."
	if len(r.Rounds) == 0 {
		return emptyFigure(id, caption, "This run has no rounds.jsonl records (a mode without a master, or no round finished)."), nil
	}
	rs := slices.Clone(r.Rounds)
	slices.SortStableFunc(rs, func(a, b offsets.Round) int { return cmp.Compare(a.RoundID, b.RoundID) })
	series := []struct {
		name string
		v    func(offsets.Round) int64
	}{
		{"gather wait", func(x offsets.Round) int64 { return x.GatherWaitNS }},
		{"end to start", func(x offsets.Round) int64 { return x.EndToStartNS }},
		{"sequence skew", func(x offsets.Round) int64 { return x.SequenceSkewNS }},
	}
	p := newPlot("round latency", "round", "µs")
	for i, s := range series {
		xy := make(plotter.XYs, len(rs))
		for j, x := range rs {
			xy[j] = plotter.XY{X: float64(x.RoundID), Y: float64(s.v(x)) / 1e3}
		}
		if err := addLine(p, xy, i, s.name, true); err != nil {
			return Figure{}, err
		}
	}
	svg, err := render(p, figWidth, figHeight)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// residualFigure is every edge's residual in the round's solution, the
// rejected edges marked.
func residualFigure(r *Run) (Figure, error) {
	const id, caption = "residuals", "Per-edge residuals of each round's solution (ns): one dot per directed edge and round (spread a little sideways by edge), the round's RMS residual as a line; red crosses are links the solver rejected as outliers (drawn at 0 where they carry no residual)."
	if len(r.Edges) == 0 {
		return emptyFigure(id, caption, "This run has no per-edge records in rounds.jsonl."), nil
	}
	type edge struct{ src, dst int }
	set := map[edge]bool{}
	for _, e := range r.Edges {
		set[edge{e.Src, e.Dst}] = true
	}
	keys := slices.SortedFunc(maps.Keys(set), func(a, b edge) int { return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.dst, b.dst)) })
	pos := map[edge]float64{}
	for i, k := range keys {
		pos[k] = 0.6 * (float64(i)/float64(max(1, len(keys)-1)) - 0.5)
	}
	var used, rejected plotter.XYs
	for _, e := range r.Edges {
		x := float64(e.RoundID) + pos[edge{e.Src, e.Dst}]
		switch {
		case e.Rejected:
			y := 0.0
			if e.Residual != nil {
				y = *e.Residual
			}
			rejected = append(rejected, plotter.XY{X: x, Y: y})
		case e.Residual != nil:
			used = append(used, plotter.XY{X: x, Y: *e.Residual})
		}
	}
	p := newPlot("edge residuals", "round", "residual (ns)")
	if len(used) > 0 {
		s, err := plotter.NewScatter(thinScatter(used))
		if err != nil {
			return Figure{}, fmt.Errorf("residuals: %w", err)
		}
		s.Color, s.Radius = colour(0), vg.Points(1.4)
		p.Add(s)
		p.Legend.Add("edge", s)
	}
	if len(r.Rounds) > 0 {
		rs := slices.Clone(r.Rounds)
		slices.SortStableFunc(rs, func(a, b offsets.Round) int { return cmp.Compare(a.RoundID, b.RoundID) })
		xy := make(plotter.XYs, len(rs))
		for j, x := range rs {
			xy[j] = plotter.XY{X: float64(x.RoundID), Y: x.RMSResidualNS}
		}
		if err := addLine(p, xy, 1, "RMS residual", false); err != nil {
			return Figure{}, err
		}
	}
	if len(rejected) > 0 {
		s, err := plotter.NewScatter(rejected)
		if err != nil {
			return Figure{}, fmt.Errorf("rejected: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{0xc0, 0, 0, 0xff}, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("rejected (%d)", len(rejected)), s)
	}
	if len(used) == 0 && len(rejected) == 0 {
		return emptyFigure(id, caption, "No edge of this run carries a residual (no round was solved)."), nil
	}
	svg, err := render(p, figWidth, figHeight)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// thinScatter keeps at most maxGlyphs points, every k-th.
func thinScatter(xy plotter.XYs) plotter.XYs {
	if len(xy) <= maxGlyphs {
		return xy
	}
	k := (len(xy) + maxGlyphs - 1) / maxGlyphs
	out := make(plotter.XYs, 0, maxGlyphs)
	for i := 0; i < len(xy); i += k {
		out = append(out, xy[i])
	}
	return out
}

// lossFigure is the probes lost per round, summed over the edges, as a
// share of the probes the round's edges sent.
func lossFigure(r *Run) (Figure, error) {
	caption := "Probe loss per round: the probes lost on all edges in the round's window as a share of those sent (%)."
	if s := r.Summary; s != nil && s.Sync != nil {
		pr := s.Sync.Probes
		caption += fmt.Sprintf(" Whole run (summary.json): %d probe pairs sent, %d probes answered, %d lost.", pr.PairsSent, pr.Answered, pr.Lost)
	}
	const id = "probe-loss"
	if len(r.Edges) == 0 {
		return emptyFigure(id, caption, "This run has no per-edge records to count lost probes by round."), nil
	}
	lost, sent := map[uint64]int{}, map[uint64]int{}
	for _, e := range r.Edges {
		lost[e.RoundID] += e.LostCount
		sent[e.RoundID] += e.LostCount + e.PairsCount
	}
	rounds := slices.Sorted(maps.Keys(lost))
	xy := make(plotter.XYs, len(rounds))
	peak := 0.0
	for i, rd := range rounds {
		v := 0.0
		if sent[rd] > 0 {
			v = 100 * float64(lost[rd]) / float64(sent[rd])
		}
		xy[i] = plotter.XY{X: float64(rd), Y: v}
		peak = math.Max(peak, v)
	}
	p := newPlot("probe loss", "round", "lost (%)")
	if err := addLine(p, xy, 4, "", true); err != nil {
		return Figure{}, err
	}
	p.Y.Min = 0
	if peak == 0 {
		p.Y.Max = 1
	}
	svg, err := render(p, figWidth, figHeight*0.8)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// rejectedTable lists the rejected and unfit links, or nil when none.
func rejectedTable(edges []offsets.Edge) *Table {
	t := &Table{Caption: "Links the solver rejected or could not fit", Head: []string{"round", "link", "why", "pairs", "lost"}}
	for _, e := range edges {
		why := ""
		switch {
		case e.Rejected:
			why = "rejected as an outlier"
		case e.Insufficient:
			why = "too few probes to fit"
		default:
			continue
		}
		t.Rows = append(t.Rows, []Cell{{Text: strconv.FormatUint(e.RoundID, 10)}, {Text: fmt.Sprintf("%d → %d", e.Src, e.Dst)},
			{Text: why, Mark: true}, {Text: strconv.Itoa(e.PairsCount)}, {Text: strconv.Itoa(e.LostCount)}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}
