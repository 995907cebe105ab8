package report

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// peersSection is a peers comparison (chronosync peers: peers.csv): the
// |offset error| percentiles of every daemon per scenario, a daemon that
// did not run marked as such.
func peersSection(r *Run) (*Section, error) {
	if len(r.Peers) == 0 {
		return nil, nil
	}
	s := &Section{ID: "peers", Title: "Peers: chronosync against chrony and ptp4l"}
	var scenarios []string
	byScenario := map[string][]PeerRow{}
	for _, row := range r.Peers {
		if _, ok := byScenario[row.Scenario]; !ok {
			scenarios = append(scenarios, row.Scenario)
		}
		byScenario[row.Scenario] = append(byScenario[row.Scenario], row)
	}
	for i, sc := range scenarios {
		fig, err := peersFigure(fmt.Sprintf("peers-%d", i), sc, byScenario[sc])
		if err != nil {
			return nil, err
		}
		s.Figures = append(s.Figures, fig)
	}
	t := Table{Caption: "Every daemon's |offset error| (ns)", Head: []string{"scenario", "tool", "samples", "p50", "p95", "p99", "note"}}
	for _, row := range r.Peers {
		if row.Samples == 0 {
			t.Rows = append(t.Rows, append(cells(row.Scenario, row.Tool, "0"), Cell{Text: "did not run", Mark: true}, Cell{Text: "-"}, Cell{Text: "-"}, Cell{Text: row.Note}))
			continue
		}
		t.Rows = append(t.Rows, cells(row.Scenario, row.Tool, strconv.Itoa(row.Samples), short(row.P50), short(row.P95), short(row.P99), row.Note))
	}
	s.Tables = append(s.Tables, t)
	return s, nil
}

// peersFigure draws one scenario's daemons: p50, p95 and p99 bars, and a
// "did not run" label where a daemon has no samples.
func peersFigure(id, scenario string, rows []PeerRow) (Figure, error) {
	caption := fmt.Sprintf("Offset error per daemon on %s: |error| p50, p95 and p99 (ns) of each tool; a daemon with no samples is labelled \"did not run\" (with why, in the table below).", scenario)
	names := make([]string, len(rows))
	peak := 0.0
	for i, row := range rows {
		names[i] = row.Tool
		if row.Samples > 0 {
			peak = max(peak, row.P99)
		}
	}
	p := newPlot(scenario, "", "|offset error| (ns)")
	if peak > 0 {
		w := vg.Points(9)
		for q, name := range []string{"p50", "p95", "p99"} {
			vals := make(plotter.Values, len(rows))
			for i, row := range rows {
				if row.Samples > 0 {
					vals[i] = []float64{row.P50, row.P95, row.P99}[q]
				}
			}
			b, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return Figure{}, fmt.Errorf("peers bars: %w", err)
			}
			b.Color = colour(q)
			b.LineStyle.Width = 0
			b.Offset = vg.Length(q-1) * w
			p.Add(b)
			p.Legend.Add(name, b)
		}
	}
	p.Y.Min = 0
	p.Y.Max = max(peak*1.15, 1)
	var labels plotter.XYLabels
	for i, row := range rows {
		if row.Samples == 0 {
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: p.Y.Max * 0.05})
			labels.Labels = append(labels.Labels, "did not run")
		}
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return Figure{}, fmt.Errorf("peers labels: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Color = color.RGBA{0xc0, 0, 0, 0xff}
			l.TextStyle[i].XAlign = draw.XCenter
			l.TextStyle[i].Rotation = 1.5708
			l.TextStyle[i].Font.Size = vg.Points(10)
		}
		p.Add(l)
	}
	p.NominalX(names...)
	svg, err := render(p, figWidth, figHeight)
	if err != nil {
		return Figure{}, err
	}
	return Figure{ID: id, Caption: caption, SVG: svg}, nil
}
