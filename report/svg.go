package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The figures' geometry and the longest series drawn.
const (
	figWidth   = 7.5 * vg.Inch
	figHeight  = 3.2 * vg.Inch
	panelW     = 3.6 * vg.Inch
	panelH     = 2.2 * vg.Inch
	maxCols    = 4
	maxPoints  = 600 // a longer series is thinned, deterministically (thin)
	maxGlyphs  = 4000
	svgPadding = 4
)

// inline turns an SVG document from vgsvg into markup for an HTML page:
// the XML prelude and comment go, and the fixed size in points becomes a
// viewBox the page scales (the CSS gives svg a max-width).
func inline(doc []byte) template.HTML {
	if i := bytes.Index(doc, []byte("<svg")); i >= 0 {
		doc = doc[i:]
	}
	// The markup comes from gonum/plot's SVG canvas, whose text it
	// escapes itself (svgo), never from the run directory's raw bytes.
	return template.HTML(doc) //nolint:gosec // generated SVG, see above
}

// render draws p as an SVG of w × h. A legend at the top gets room of
// its own above the data, so that it covers none of it.
func render(p *gplot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	if p.Legend.Top && p.Y.Max > p.Y.Min {
		// The legend's share of the data area (about 70 % of the
		// figure's height), plus a margin.
		r := p.Legend.Rectangle(draw.New(c))
		if lh := r.Max.Y - r.Min.Y; lh > 0 {
			f := min(0.6, float64(lh+6)/float64(0.7*h))
			p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/(1-f)
		}
	}
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("draw %q: %w", p.Title.Text, err)
	}
	return inline(b.Bytes()), nil
}

// renderTiles draws plots (nil entries left blank) in a grid of cols
// columns, each panel pw × ph.
func renderTiles(plots []*gplot.Plot, cols int, pw, ph vg.Length) (template.HTML, error) {
	rows := (len(plots) + cols - 1) / cols
	w, h := pw*vg.Length(cols), ph*vg.Length(rows)
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	grid := make([][]*gplot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*gplot.Plot, cols)
	}
	for i, p := range plots {
		grid[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: svgPadding, PadBottom: svgPadding,
		PadLeft: svgPadding, PadRight: 10, PadX: 14, PadY: 10}
	for j, row := range gplot.Align(grid, tiles, dc) {
		for i, cv := range row {
			if grid[j][i] != nil {
				grid[j][i].Draw(cv)
			}
		}
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("draw tiles: %w", err)
	}
	return inline(b.Bytes()), nil
}

// columns is how many columns a grid of n panels gets.
func columns(n int) int {
	return max(1, min(n, maxCols))
}

// thin keeps at most maxPoints of xy: every k-th point and the last, the
// same points for the same input.
func thin(xy plotter.XYs) plotter.XYs {
	if len(xy) <= maxPoints {
		return xy
	}
	k := (len(xy) + maxPoints - 1) / maxPoints
	out := make(plotter.XYs, 0, maxPoints+1)
	for i := 0; i < len(xy); i += k {
		out = append(out, xy[i])
	}
	if last := xy[len(xy)-1]; out[len(out)-1] != last {
		out = append(out, last)
	}
	return out
}

// newPlot is a plot with the report's fonts and its axes' labels.
func newPlot(title, x, y string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker = distinctTicks{}
	p.Y.Tick.Marker = distinctTicks{}
	return p
}

// distinctTicks are gonum's default ticks, labelled with as many digits
// as it takes to tell them apart (the default's few digits label the
// ticks of 49.998 to 50.004 ppm all "50").
type distinctTicks struct{}

// Ticks returns the ticks between lo and hi.
func (distinctTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for prec := 0; prec <= 12; prec++ {
		seen := map[string]bool{}
		ok := true
		for _, t := range ticks {
			if t.Label == "" {
				continue
			}
			l := strconv.FormatFloat(t.Value, 'f', prec, 64)
			if seen[l] {
				ok = false
				break
			}
			seen[l] = true
		}
		if ok {
			for i := range ticks {
				if ticks[i].Label != "" {
					ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', prec, 64)
				}
			}
			return ticks
		}
	}
	return ticks
}

// colour is Okabe and Ito's colour-blind safe palette, cycled.
func colour(i int) color.Color {
	cs := [...]color.RGBA{
		{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xcc, 0x79, 0xa7, 0xff},
		{0xe6, 0x9f, 0x00, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0x55, 0x55, 0x55, 0xff}, {0xf0, 0xe4, 0x42, 0xff},
	}
	return cs[i%len(cs)]
}

// light is c at a quarter of its opacity, for bands.
func light(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x40}
}

// addLine adds a line of xy in colour i, named name in the legend when
// name is not "".
func addLine(p *gplot.Plot, xy plotter.XYs, i int, name string, points bool) error {
	xy = thin(xy)
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("line %s: %w", name, err)
	}
	l.Color = colour(i)
	l.Width = vg.Points(1.2)
	p.Add(l)
	if points && len(xy) <= maxGlyphs {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return fmt.Errorf("points %s: %w", name, err)
		}
		s.Color = colour(i)
		s.Radius = vg.Points(1.6)
		p.Add(s)
	}
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// addBand fills the band between lo and hi (the same xs) in colour i.
func addBand(p *gplot.Plot, lo, hi plotter.XYs, i int) error {
	lo, hi = thin(lo), thin(hi)
	ring := make(plotter.XYs, 0, len(lo)+len(hi))
	ring = append(ring, lo...)
	for j := len(hi) - 1; j >= 0; j-- {
		ring = append(ring, hi[j])
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return fmt.Errorf("band: %w", err)
	}
	poly.Color = light(colour(i))
	poly.LineStyle.Width = 0
	p.Add(poly)
	return nil
}

// addVLines marks xs with dashed vertical lines (clock steps); the y
// range is the plot's after everything else is added.
func addVLines(p *gplot.Plot, xs []float64, name string) {
	if len(xs) == 0 {
		return
	}
	for k, x := range xs {
		v := &vline{x: x}
		p.Add(v)
		if k == 0 && name != "" {
			p.Legend.Add(name, v)
		}
	}
}

// vline is a dashed red vertical line across the whole plot at x.
type vline struct{ x float64 }

// Plot draws the line.
func (v *vline) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(v.style(), x, c.Min.Y, x, c.Max.Y)
}

// DataRange keeps the line's x inside the axes and leaves y to the
// rest (an empty y range: +Inf to -Inf).
func (v *vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// Thumbnail draws the legend's entry.
func (v *vline) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style(), x, c.Min.Y, x, c.Max.Y)
}

func (v *vline) style() draw.LineStyle {
	return draw.LineStyle{Color: color.RGBA{0xc0, 0x00, 0x00, 0xff}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
}
