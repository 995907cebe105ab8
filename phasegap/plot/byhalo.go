package plot

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Axis is a panel's x axis: T, the threads per rank (the zero value), or
// H, the halo width (the message-size sweep, the plan's sweep 3).
type Axis string

// The axes.
const (
	AxisT Axis = ""
	AxisH Axis = "H"
)

// name is the axis' name in a figure's title.
func (a Axis) name() string {
	if a == AxisH {
		return "H"
	}
	return "T"
}

// label is the axis' label.
func (a Axis) label() string {
	if a == AxisH {
		return "H (halo width, elements: a message of 8·H bytes; log scale)"
	}
	return "T (threads per rank, log scale)"
}

// hMetrics are the figures against H: the exposed wait in µs (OSU's
// latency-against-size view), its share of the iteration, and the
// overlap; no knees (a knee is a T).
func hMetrics() []metric {
	return []metric{
		{name: "t_wait_vs_H", label: "t_wait_mean_avg (µs)", floor: 1,
			title: "exposed wait per iteration against the message size",
			value: func(p Point) float64 { return p.TWait }},
		{name: "wait_frac_vs_H", label: "wait_frac = t_wait / t_iter", floor: 0.05,
			title: "exposed wait as a share of the iteration",
			value: func(p Point) float64 { return p.WaitFrac }},
		{name: "overlap_ratio_vs_H", label: "overlap_ratio = Σ hidden / Σ ideal", floor: 1.05,
			title: "share of the hideable exchange that was hidden",
			value: func(p Point) float64 { return p.OverlapRatio }},
	}
}

// GroupByH sorts records into panels against H: one per T, intensity and
// mode (Facet.T set, Facet.H 0), each series' points one per H (Point.T
// holds the H; the runs of a series at one H averaged). Where P varies
// within a panel each P is a series of its own. Only panels where some
// series has two H values or more are kept: the others have no line to
// draw. A cell that is not a number fails with the record's file:line.
func GroupByH(records []report.Record) ([]Panel, error) {
	var rows []row
	for _, r := range records {
		x, err := readRow(r)
		if err != nil {
			return nil, err
		}
		if x.facet.H < 1 {
			continue // no place on a log axis
		}
		x.facet.T, x.point.T, x.facet.H = x.point.T, x.facet.H, 0
		rows = append(rows, x)
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(a.facet.compare(b.facet), a.key.compare(b.key), cmp.Compare(a.point.T, b.point.T))
	})
	var panels []Panel
	for lo := 0; lo < len(rows); {
		hi := lo + 1
		for hi < len(rows) && rows[hi].facet == rows[lo].facet {
			hi++
		}
		if pn, ok := panelByH(rows[lo:hi]); ok {
			panels = append(panels, pn)
		}
		lo = hi
	}
	return panels, nil
}

// panelByH builds one facet's panel against H from its rows, sorted by
// series then H; ok is false when no series has two H values.
func panelByH(rows []row) (Panel, bool) {
	withP := slices.ContainsFunc(rows, func(r row) bool { return r.key.p != rows[0].key.p })
	rows = slices.Clone(rows)
	if !withP {
		for i := range rows {
			rows[i].key.p = 0
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(a.key.compare(b.key), cmp.Compare(a.point.T, b.point.T))
	})
	pn := Panel{Facet: rows[0].facet, Axis: AxisH, Series: seriesOf(rows, withP)}
	ok := false
	for _, s := range pn.Series {
		ok = ok || len(s.Points) > 1
	}
	return pn, ok
}

// titleT is a panel-against-H facet's title, "T=1 F=0 B=0 phase_nb".
func (f Facet) titleT() string {
	return "T=" + strconv.Itoa(f.T) + " " + f.Intensity() + " " + f.Mode
}
