package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/chronosync/chronosync/phasegap/report"
)

// The figures' geometry.
const (
	panelWidth  = 5.5 * vg.Inch
	panelHeight = 4 * vg.Inch
	maxCols     = 4
	maxHeight   = 44 * vg.Inch // past 11 rows, the panels shrink instead
	titleSpace  = 30           // points above the grid for the figure's title
	pngDPI      = 128
	tPad        = 1.25 // the x axis reaches this factor beyond the extreme Ts
)

// metric is the quantity of one figure.
type metric struct {
	name  string // the column, and the files' base name
	label string // the y axis
	title string // the figure's
	floor float64
	value func(p Point) float64
	knees bool // mark each series' knee
}

// metrics are the figures, in the order they are written.
func metrics() []metric {
	return []metric{
		{name: "wait_frac", label: "wait_frac = t_wait / t_iter", floor: 0.05, knees: true,
			title: "exposed wait as a share of the iteration (o knee: the wait grows faster than the interior shrinks)",
			value: func(p Point) float64 { return p.WaitFrac }},
		{name: "overlap_ratio", label: "overlap_ratio = Σ hidden / Σ ideal", floor: 1.05,
			title: "share of the hideable exchange that was hidden",
			value: func(p Point) float64 { return p.OverlapRatio }},
		{name: "hidden_frac", label: "hidden_frac = 1 − t_wait / t_pure_comm", floor: 1.05,
			title: "share of the exchange's own time that was hidden (falls as the exchange stops hiding)",
			value: func(p Point) float64 { return p.HiddenFrac }},
		{name: "wait_skew", label: "wait_skew = max / mean rank t_wait", floor: 2,
			title: "how unevenly the ranks wait",
			value: func(p Point) float64 { return p.WaitSkew }},
	}
}

// grid is the panel grid's columns and rows for n panels.
func grid(n int) (cols, rows int) {
	cols = min(int(math.Ceil(math.Sqrt(float64(n)))), maxCols)
	return cols, (n + cols - 1) / cols
}

// render draws m's figure of panels as PNG (png true) or SVG.
func render(panels []Panel, m metric, png bool) ([]byte, error) {
	cols, rows := grid(len(panels))
	w := panelWidth * vg.Length(cols)
	h := min(panelHeight*vg.Length(rows), maxHeight) + titleSpace
	var c vg.CanvasWriterTo
	if png {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	} else {
		c = vgsvg.New(w, h)
	}
	dc := draw.New(c)
	title := text.Style{Font: font.From(plotter.DefaultFont, 13), Handler: gplot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YTop, Color: color.Black}
	against := AxisT
	if len(panels) > 0 {
		against = panels[0].Axis
	}
	dc.FillText(title, vg.Point{X: w / 2, Y: h - 6}, m.name+" against "+against.name()+": "+m.title)

	styles := seriesStyles(panels)
	plots := make([][]*gplot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*gplot.Plot, cols)
	}
	for i, pn := range panels {
		p, err := drawPanel(pn, m, styles, panelH(h, rows))
		if err != nil {
			return nil, fmt.Errorf("%s: panel %s: %w", m.name, pn.Facet.Title(), err)
		}
		plots[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: titleSpace, PadBottom: 6, PadLeft: 6, PadRight: 12, PadX: 18, PadY: 14}
	for j, row := range gplot.Align(plots, tiles, dc) {
		for i, cv := range row {
			if plots[j][i] != nil {
				plots[j][i].Draw(cv)
			}
		}
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	return b.Bytes(), nil
}

// panelH is one panel's height.
func panelH(h vg.Length, rows int) vg.Length {
	return (h - titleSpace) / vg.Length(rows)
}

// style is how one series is drawn, the same in every panel and figure.
type style struct {
	colour color.Color
	glyph  draw.GlyphDrawer
	dashes []vg.Length
}

// seriesStyles gives every series name a style, in order of first
// appearance across the panels.
func seriesStyles(panels []Panel) map[string]style {
	out := make(map[string]style)
	var names []string
	for _, pn := range panels {
		for _, s := range pn.Series {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
				out[s.Name] = style{colour: palette(len(names) - 1), glyph: glyph(len(names) - 1), dashes: dashes(s.Transport)}
			}
		}
	}
	return out
}

// palette is Okabe and Ito's colour-blind safe palette, black left for the
// knees.
func palette(i int) color.Color {
	cs := [...]color.RGBA{
		{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xcc, 0x79, 0xa7, 0xff},
		{0xe6, 0x9f, 0x00, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0x99, 0x99, 0x99, 0xff}, {0xf0, 0xe4, 0x42, 0xff},
	}
	return cs[i%len(cs)]
}

func glyph(i int) draw.GlyphDrawer {
	gs := [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
		draw.CrossGlyph{}, draw.PlusGlyph{}, draw.SquareGlyph{}}
	return gs[i%len(gs)]
}

// dashes tells the transports apart in grey: MPI solid, the real
// backend dash-dot, the simulator dashed.
func dashes(transport string) []vg.Length {
	switch transport {
	case report.WorldReal:
		return []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}
	case report.WorldSim:
		return []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return nil
}

// drawPanel is one facet's plot of m: a line and points per series, its
// knees marked when m.knees.
func drawPanel(pn Panel, m metric, styles map[string]style, height vg.Length) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = pn.Facet.Title()
	p.X.Label.Text = pn.Axis.label()
	p.Y.Label.Text = m.label
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = 9
	p.Add(plotter.NewGrid())

	var ts []int
	top, entries := 0.0, 0
	for _, s := range pn.Series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if v := m.value(pt); !math.IsNaN(v) && !math.IsInf(v, 0) {
				xys = append(xys, plotter.XY{X: float64(pt.T), Y: v})
				top = max(top, v)
				if !slices.Contains(ts, pt.T) {
					ts = append(ts, pt.T)
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		st := styles[s.Name]
		line.Color, line.Width, line.Dashes = st.colour, vg.Points(1.5), st.dashes
		points.Color, points.Shape, points.Radius = st.colour, st.glyph, vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		entries++
	}
	if m.knees {
		n, err := addKnees(p, pn, m)
		if err != nil {
			return nil, err
		}
		entries += n
	}
	if len(ts) == 0 {
		p.Title.Text += " (no values)"
		ts = []int{1}
	}
	slices.Sort(ts)
	p.X.Scale = gplot.LogScale{}
	p.X.Min, p.X.Max = float64(ts[0])/tPad, float64(ts[len(ts)-1])*tPad
	ticks := make(gplot.ConstantTicks, len(ts))
	for i, t := range ts {
		ticks[i] = gplot.Tick{Value: float64(t), Label: strconv.Itoa(t)}
	}
	p.X.Tick.Marker = ticks
	// Head room for the legend, in the top left corner.
	legend := min(0.5, float64(entries*13+8)/max(float64(height.Points())-90, 60))
	p.Y.Min, p.Y.Max = 0, max(top*1.05, m.floor)/(1-legend)
	return p, nil
}

// addKnees marks each series' knee on p with a ring and "knee T=k"; it
// returns the legend entries added (one, or none where no series has a
// knee).
func addKnees(p *gplot.Plot, pn Panel, m metric) (int, error) {
	var xys plotter.XYs
	var labels []string
	maxT := 0
	for _, s := range pn.Series {
		for _, pt := range s.Points {
			maxT = max(maxT, pt.T)
		}
	}
	for _, s := range pn.Series {
		k, ok := Knee(s.Points)
		if v := m.value(k); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			xys = append(xys, plotter.XY{X: float64(k.T), Y: v})
			labels = append(labels, "knee T="+strconv.Itoa(k.T))
		}
	}
	if len(xys) == 0 {
		return 0, nil
	}
	ring, err := plotter.NewScatter(xys)
	if err != nil {
		return 0, err
	}
	ring.Shape, ring.Radius, ring.Color = draw.RingGlyph{}, vg.Points(7), color.Black
	p.Add(ring)
	// The legend's ring is smaller, to fit its line.
	thumb := *ring
	thumb.Radius = vg.Points(4)
	p.Legend.Add("knee", &thumb)
	for i, xy := range xys {
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys[i : i+1], Labels: labels[i : i+1]})
		if err != nil {
			return 0, err
		}
		st := &lab.TextStyle[0]
		st.Font.Size, st.YAlign = 9, draw.YBottom
		if int(xy.X) == maxT {
			// At the right edge: the label goes to the ring's left.
			st.XAlign = draw.XRight
		}
		// Knees at the same T stack their labels.
		same := 0
		for _, o := range xys[:i] {
			if o.X == xy.X {
				same++
			}
		}
		lab.Offset = vg.Point{Y: vg.Points(8 + 11*float64(same))}
		p.Add(lab)
	}
	return 1, nil
}
