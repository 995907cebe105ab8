package peers

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The plot's geometry: one panel per scenario, stacked.
const (
	plotWidth    = 11 * vg.Inch
	panelHeight  = 4.5 * vg.Inch
	barWidth     = 0.36 // of the distance between two tools
	minPlottedUS = 1e-3 // 1 ns: a zero error is drawn this high on the log axis
)

// WritePlot draws, per scenario, the p50 and p99 |error| of every measured
// tool as grouped bars on a log-scale axis in µs, each bar labelled with
// its value, and writes it atomically to path as PNG or SVG, chosen by the
// extension (.png or .svg). Rows without samples are left out.
func (t *Table) WritePlot(path string) error {
	var newCanvas func(w, h vg.Length) vg.CanvasWriterTo
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgimg.PngCanvas{Canvas: vgimg.New(w, h)} }
	case ".svg":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }
	default:
		return fmt.Errorf("peers: plot %s: unknown format %q (want .png or .svg)", path, ext)
	}
	names := t.scenarios()
	if len(names) == 0 {
		return fmt.Errorf("peers: plot %s: the table has no rows", path)
	}
	plots := make([][]*plot.Plot, len(names))
	for i, name := range names {
		plots[i] = []*plot.Plot{t.panel(name)}
	}
	c := newCanvas(plotWidth, panelHeight*vg.Length(len(names)))
	tiles := draw.Tiles{Rows: len(names), Cols: 1, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadY: 12}
	for i, cs := range plot.Align(plots, tiles, draw.New(c)) {
		plots[i][0].Draw(cs[0])
	}
	return writeAtomic(path, func(w io.Writer) error {
		if _, err := c.WriteTo(w); err != nil {
			return fmt.Errorf("peers: plot %s: %w", path, err)
		}
		return nil
	})
}

// scenarios returns the table's scenario names in order of appearance.
func (t *Table) scenarios() []string {
	var names []string
	for _, r := range t.Rows {
		if !slices.Contains(names, r.Scenario) {
			names = append(names, r.Scenario)
		}
	}
	return names
}

// panel is the plot of one scenario.
func (t *Table) panel(name string) *plot.Plot {
	p := plot.New()
	p.Title.Text = "scenario " + name + ": |offset error| (p50 light, p99 dark)"
	p.Y.Label.Text = "|error| (µs, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())

	var tools []string
	// p50 light, p99 dark, both blue (colour-blind safe).
	p50 := &logBars{colour: color.RGBA{R: 0x9e, G: 0xca, B: 0xe1, A: 0xff}, offset: -barWidth / 2, width: barWidth}
	p99 := &logBars{colour: color.RGBA{R: 0x08, G: 0x51, B: 0x9c, A: 0xff}, offset: barWidth / 2, width: barWidth}
	lo, hi := math.Inf(1), math.Inf(-1)
	var absent []float64 // the x of each daemon that did not run
	for _, r := range t.Rows {
		if r.Scenario != name {
			continue
		}
		x := float64(len(tools))
		// Two lines, chronosync / svm, so that long names do not collide.
		tools = append(tools, strings.Replace(r.Tool, "-", "\n", 1))
		if r.Samples == 0 {
			// No bar, but the daemon keeps its place, marked.
			absent = append(absent, x)
			continue
		}
		a, b := max(r.P50/1e3, minPlottedUS), max(r.P99/1e3, minPlottedUS)
		p50.add(x, a, r.P50/1e3)
		p99.add(x, b, r.P99/1e3)
		lo, hi = min(lo, a, b), max(hi, a, b)
	}
	if len(tools) == 0 {
		p.Title.Text += " (nothing measured)"
		tools = []string{"-"}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 1
	}
	label := p.X.Tick.Label
	label.Font.Size = 9
	label.XAlign, label.YAlign = draw.XCenter, draw.YBottom
	p50.label, p99.label = label, label
	p.Add(p50, p99)
	p.Legend.Add("p50", p50)
	p.Legend.Add("p99", p99)
	p.NominalX(tools...)
	p.X.Tick.Label.Font.Size = 11
	p.X.Min, p.X.Max = -0.6, float64(len(tools))-0.4
	// Whole decades, with room above the highest bar for its label.
	lowest, highest := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi*1.6)))
	p.Y.Min, p.Y.Max = math.Pow10(lowest), math.Pow10(highest)
	p.Y.Tick.Marker = decadeTicks(lowest, highest)
	p50.floor, p99.floor = p.Y.Min, p.Y.Min
	if len(absent) > 0 {
		// "did not run" over each absent daemon, a decade above the axis.
		xy := make(plotter.XYs, len(absent))
		for i, x := range absent {
			xy[i] = plotter.XY{X: x, Y: p.Y.Min * 10}
		}
		labels := make([]string, len(absent))
		for i := range labels {
			labels[i] = "did not run"
		}
		if l, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: labels}); err == nil {
			for i := range l.TextStyle {
				l.TextStyle[i].Color = color.RGBA{R: 0xc0, A: 0xff}
				l.TextStyle[i].XAlign = draw.XCenter
			}
			p.Add(l)
		}
	}
	return p
}

// logBars are bars from the axis' minimum (floor) up to their value, which
// plotter.BarChart cannot draw on a log scale since it starts at zero.
type logBars struct {
	xs, ys        []float64
	values        []float64 // ys before clamping to minPlottedUS, for the labels
	offset, width float64   // in x units
	floor         float64
	colour        color.Color
	label         draw.TextStyle // of the value printed above each bar
}

func (b *logBars) add(x, y, value float64) {
	b.xs = append(b.xs, x)
	b.ys = append(b.ys, y)
	b.values = append(b.values, value)
}

// Plot draws the bars and their values.
func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, y := range b.ys {
		x0, x1 := trX(b.xs[i]+b.offset-b.width/2), trX(b.xs[i]+b.offset+b.width/2)
		y0, y1 := trY(b.floor), trY(y)
		rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(b.colour, c.ClipPolygonXY(rect))
		c.FillText(b.label, vg.Point{X: (x0 + x1) / 2, Y: y1 + 2}, valueLabel(b.values[i]))
	}
}

// DataRange implements plot.DataRanger.
func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, y := range b.ys {
		xmin, xmax = min(xmin, b.xs[i]+b.offset-b.width/2), max(xmax, b.xs[i]+b.offset+b.width/2)
		ymin, ymax = min(ymin, y), max(ymax, y)
	}
	return xmin, xmax, ymin, ymax
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (b *logBars) Thumbnail(c *draw.Canvas) {
	rect := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(b.colour, c.ClipPolygonXY(rect))
}

// decadeTicks marks 10^lowest to 10^highest on a log axis: labelled
// decades and unlabelled 2..9 between them. (plot.LogTicks misses the
// lowest decade when it is below 1, by rounding.)
func decadeTicks(lowest, highest int) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for e := lowest; e <= highest; e++ {
		decade := math.Pow10(e)
		ticks = append(ticks, plot.Tick{Value: decade, Label: strconv.FormatFloat(decade, 'f', -1, 64)})
		for m := 2; m < 10 && e < highest; m++ {
			ticks = append(ticks, plot.Tick{Value: float64(m) * decade})
		}
	}
	return ticks
}

// valueLabel formats µs with three significant digits, at most to the ns.
func valueLabel(us float64) string {
	prec := 3
	switch {
	case us >= 100:
		prec = 0
	case us >= 10:
		prec = 1
	case us >= 1:
		prec = 2
	}
	return strconv.FormatFloat(us, 'f', prec, 64)
}
