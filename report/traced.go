package report

import (
	"fmt"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// tracedSection is the figures of a traced run: the collectives' skew
// before and after correction, and the violations by collective.
func tracedSection(r *Run) (*Section, error) {
	if len(r.Validations) == 0 && len(r.Skew) == 0 {
		return nil, nil
	}
	s := &Section{ID: "traces", Title: "Traces: collectives before and after correction"}
	for _, v := range r.Validations {
		s.Intro = append(s.Intro, fmt.Sprintf("%s: %d violations, %d overlaps, %d warnings.", v.Name, v.Violations, v.Overlaps, v.Warnings))
	}
	fig, err := skewFigure(r.Skew)
	if err != nil {
		return nil, err
	}
	s.Figures = append(s.Figures, fig)
	fig, err = violationsFigure(r.Validations)
	if err != nil {
		return nil, err
	}
	s.Figures = append(s.Figures, fig)
	if len(r.Skew) > 0 {
		t := Table{Caption: "Start spread of each collective's invocations across the ranks", Head: []string{"collective", "invocations", "raw p50", "raw max", "corrected p50", "corrected max"}}
		for _, k := range r.Skew {
			t.Rows = append(t.Rows, cells(k.Key, strconv.Itoa(k.Invocations), fmtNS(k.RawP50), fmtNS(k.RawMax), fmtNS(k.CombinedP50), fmtNS(k.CombMax)))
		}
		s.Tables = append(s.Tables, t)
	}
	return s, nil
}

// fmtNS formats nanoseconds with a unit.
func fmtNS(ns float64) string {
	switch a := max(ns, -ns); {
	case a >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'g', 4, 64) + " s"
	case a >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'g', 4, 64) + " ms"
	case a >= 1e3:
		return strconv.FormatFloat(ns/1e3, 'g', 4, 64) + " µs"
	}
	return strconv.FormatFloat(ns, 'g', 4, 64) + " ns"
}

// skewFigure is each collective's median start spread, raw and
// corrected, side by side (their scales differ by orders of magnitude).
func skewFigure(sk []Skew) (Figure, error) {
	const id, caption = "collective-skew", "Collective skew before and after correction: per collective, the median spread of the ranks' start times of an invocation (latest minus earliest), left raw (each node's own clock), right on the combined, corrected timeline. Note the different units."
	if len(sk) == 0 {
		return emptyFigure(id, caption, "No collective appears both in the per-node XSpace traces (traces.json) and in combined.xplane.pb."), nil
	}
	raw, comb := make([]float64, len(sk)), make([]float64, len(sk))
	names := make([]string, len(sk))
	for i, k := range sk {
		raw[i], comb[i], names[i] = k.RawP50, k.CombinedP50, k.Key
	}
	var plots []*gplot.Plot
	for i, vs := range [][]float64{raw, comb} {
		unit, div := unitOf(slices.Max(vs))
		title := []string{"raw: each node's own clock", "corrected: combined trace"}[i]
		p := newPlot(title, "", "median start spread ("+unit+")")
		vals := make(plotter.Values, len(vs))
		for j, v := range vs {
			vals[j] = v / div
		}
		b, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return Figure{}, fmt.Errorf("skew bars: %w", err)
		}
		b.Color = colour(i)
		b.LineStyle.Width = 0
		p.Add(b)
		barAxes(p, names)
		plots = append(plots, p)
	}
	svg, err := renderTiles(plots, 2, figWidth/2, figHeight+0.6*vg.Inch)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// unitOf is the unit to show values of up to peak ns in, and its size.
func unitOf(peak float64) (string, float64) {
	switch {
	case peak >= 1e9:
		return "s", 1e9
	case peak >= 1e6:
		return "ms", 1e6
	case peak >= 1e3:
		return "µs", 1e3
	}
	return "ns", 1
}

// violationsFigure is the happens-before violations per collective of
// every validation (raw, combined, their Kineto twins).
func violationsFigure(vs []Validation) (Figure, error) {
	const id, caption = "violations", "Happens-before violations by collective: invocation pairs that end on one rank before they start on another, for each validation of the run (raw: uncorrected traces; combined: after correction)."
	keys := map[string]int{}
	var names []string
	for _, v := range vs {
		for _, op := range v.Ops {
			if _, ok := keys[op.Key]; !ok {
				keys[op.Key] = len(names)
				names = append(names, op.Key)
			}
		}
	}
	if len(names) == 0 {
		return emptyFigure(id, caption, "The validations of this run compared no collectives."), nil
	}
	p := newPlot("violations per collective", "", "violations")
	w := vg.Points(min(24, 48/float64(len(vs))))
	for i, v := range vs {
		vals := make(plotter.Values, len(names))
		for _, op := range v.Ops {
			vals[keys[op.Key]] = float64(op.Violations)
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return Figure{}, fmt.Errorf("violation bars: %w", err)
		}
		b.Color = colour(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(vs)-1)/2) * w
		p.Add(b)
		p.Legend.Add(v.Name, b)
	}
	barAxes(p, names)
	svg, err := render(p, figWidth, figHeight+0.6*vg.Inch)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}

// barAxes sets a bar chart's axes: y from 0 (to at least 1 when every bar
// is 0), one slanted x label per bar.
func barAxes(p *gplot.Plot, names []string) {
	p.Y.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
}
