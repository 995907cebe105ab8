package plot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Facet is what one panel holds: the runs of one halo width, one
// intensity and one mode.
type Facet struct {
	H     int    // halo width, elements
	Flops int    // flops_per_point
	Bytes int    // bytes_per_point
	Mode  string // orchestration mode
	// T is the threads per rank of a panel against H (GroupByH), whose
	// H is then 0; 0 in a panel against T.
	T int
}

// Intensity is the facet's intensity as a label, "F=64 B=0".
func (f Facet) Intensity() string { return fmt.Sprintf("F=%d B=%d", f.Flops, f.Bytes) }

// Title is the panel's title, "H=256 F=64 B=0 phase_nb".
func (f Facet) Title() string {
	if f.T > 0 {
		return f.titleT()
	}
	return fmt.Sprintf("H=%d %s %s", f.H, f.Intensity(), f.Mode)
}

func (f Facet) compare(g Facet) int {
	return cmp.Or(cmp.Compare(f.H, g.H), cmp.Compare(f.Flops, g.Flops),
		cmp.Compare(f.Bytes, g.Bytes), cmp.Compare(f.Mode, g.Mode), cmp.Compare(f.T, g.T))
}

// Point is one series at one T: the means of the runs at that T (several
// runs of the same series and T are averaged; an empty cell is left out of
// its mean, and a mean of no values is NaN). Times are in µs.
type Point struct {
	T            int     // T; in a panel against H (Panel.Axis), the H
	WaitFrac     float64 // wait_frac
	OverlapRatio float64 // overlap_ratio
	HiddenFrac   float64 // hidden_frac (NaN without a pure-communication pass)
	WaitSkew     float64 // wait_skew
	TWait        float64 // t_wait_mean_avg
	TInterior    float64 // t_interior_mean_avg
	TIter        float64 // t_iter_mean
	Runs         int     // the runs averaged
	// Degraded counts the runs whose results say degraded (status: the
	// machine was loaded or oversubscribed around an MPI run).
	Degraded int
}

// Series is one line of a panel: the points of one transport (and
// impairment, and P where the panel holds several), in ascending T.
type Series struct {
	Name      string // "sim", "mpi lat_1ms", "real P=4"
	Transport string // report.WorldMPI, WorldReal or WorldSim
	Points    []Point
}

// Panel is one facet's series, ordered by transport, impairment, then P.
type Panel struct {
	Facet  Facet
	Series []Series
	// Axis is the x axis: T (the zero value) or H (GroupByH).
	Axis Axis
}

// seriesKey identifies a series within a facet, in its sort order.
type seriesKey struct {
	transport string
	// btl is "tcp" for an MPI run over OpenMPI's TCP transport (between
	// network namespaces, through the shaper: phasegap sweep's mpi-net),
	// another series than MPI on one machine's shared memory ("").
	btl        string
	impairment string
	p          int
}

func (k seriesKey) compare(l seriesKey) int {
	return cmp.Or(cmp.Compare(transportRank(k.transport), transportRank(l.transport)),
		cmp.Compare(k.btl, l.btl), cmp.Compare(k.impairment, l.impairment), cmp.Compare(k.p, l.p))
}

// name is the series' name; withP adds "P=n", a series of constant P·T
// (p < 0, see panel) "P·T=n".
func (k seriesKey) name(withP bool) string {
	s := k.transport
	if k.btl != "" {
		s += " " + k.btl
	}
	if k.impairment != "" {
		s += " " + k.impairment
	}
	switch {
	case withP:
		s += " P=" + strconv.Itoa(k.p)
	case k.p < 0:
		s += " P·T=" + strconv.Itoa(-k.p)
	}
	return s
}

// budgets gives each series (keyed without P) its constant P·T where its
// P varies (0 where it has one P), and reports whether some series' P
// varies otherwise: then every series is split by P.
func budgets(rows []row) (map[seriesKey]int, bool) {
	type series struct {
		p, pt       int
		varies, bad bool
	}
	seen := map[seriesKey]*series{}
	for _, r := range rows {
		k := r.key
		k.p = 0
		pt := r.key.p * r.point.T
		s, ok := seen[k]
		if !ok {
			seen[k] = &series{p: r.key.p, pt: pt}
			continue
		}
		s.varies = s.varies || r.key.p != s.p
		s.bad = s.bad || pt != s.pt
	}
	out := map[seriesKey]int{}
	for k, s := range seen {
		if s.varies && s.bad {
			return nil, true
		}
		if s.varies {
			out[k] = s.pt
		}
	}
	return out, false
}

// transportRank orders the transports: measured first, then the model.
func transportRank(t string) int {
	switch t {
	case report.WorldMPI:
		return 0
	case report.WorldReal:
		return 1
	}
	return 2
}

// row is one record's keys and values.
type row struct {
	facet Facet
	key   seriesKey
	point Point
}

// Group sorts records into panels (by H, flops, bytes, then mode) and
// their series, averaging the runs of a series at the same T. A cell that
// is not a number fails with the record's file:line.
func Group(records []report.Record) ([]Panel, error) {
	rows := make([]row, 0, len(records))
	for _, r := range records {
		x, err := readRow(r)
		if err != nil {
			return nil, err
		}
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
		panels = append(panels, panel(rows[lo:hi]))
		lo = hi
	}
	return panels, nil
}

// panel builds one facet's panel from its rows, sorted by series and T.
// A series whose P varies with T at a constant P·T (the rank/thread split
// at a constant core budget) stays one line, named by its P·T; where P
// varies otherwise, each P is a series of its own.
func panel(rows []row) Panel {
	budgets, withP := budgets(rows)
	if !withP {
		rows = slices.Clone(rows)
		for i := range rows {
			k := rows[i].key
			k.p = 0
			rows[i].key.p = -budgets[k] // negative: a P·T budget (0: one P)
		}
		slices.SortStableFunc(rows, func(a, b row) int {
			return cmp.Or(a.key.compare(b.key), cmp.Compare(a.point.T, b.point.T))
		})
	}
	return Panel{Facet: rows[0].facet, Series: seriesOf(rows, withP)}
}

// seriesOf splits rows, sorted by series key and then by x, into the
// series, each point the average of the rows at one x.
func seriesOf(rows []row, withP bool) []Series {
	var out []Series
	for lo := 0; lo < len(rows); {
		hi := lo + 1
		for hi < len(rows) && rows[hi].key == rows[lo].key {
			hi++
		}
		s := Series{Name: rows[lo].key.name(withP), Transport: rows[lo].key.transport}
		for a := lo; a < hi; {
			b := a + 1
			for b < hi && rows[b].point.T == rows[a].point.T {
				b++
			}
			s.Points = append(s.Points, average(rows[a:b]))
			a = b
		}
		out = append(out, s)
		lo = hi
	}
	return out
}

// average is the mean point of rows of the same T.
func average(rows []row) Point {
	degraded := 0
	for i := range rows {
		degraded += rows[i].point.Degraded
	}
	mean := func(f func(p *Point) float64) float64 {
		sum, n := 0.0, 0
		for i := range rows {
			if v := f(&rows[i].point); !math.IsNaN(v) {
				sum, n = sum+v, n+1
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	return Point{
		T:            rows[0].point.T,
		WaitFrac:     mean(func(p *Point) float64 { return p.WaitFrac }),
		OverlapRatio: mean(func(p *Point) float64 { return p.OverlapRatio }),
		HiddenFrac:   mean(func(p *Point) float64 { return p.HiddenFrac }),
		WaitSkew:     mean(func(p *Point) float64 { return p.WaitSkew }),
		TWait:        mean(func(p *Point) float64 { return p.TWait }),
		TInterior:    mean(func(p *Point) float64 { return p.TInterior }),
		TIter:        mean(func(p *Point) float64 { return p.TIter }),
		Runs:         len(rows),
		Degraded:     degraded,
	}
}

// readRow reads the columns the plots use from one record.
func readRow(r report.Record) (row, error) {
	var x row
	ints := []struct {
		col string
		to  *int
	}{{"H", &x.facet.H}, {"flops_per_point", &x.facet.Flops}, {"bytes_per_point", &x.facet.Bytes},
		{"P", &x.key.p}, {"T", &x.point.T}}
	for _, c := range ints {
		v, err := r.Int(c.col)
		if err != nil {
			return row{}, err
		}
		*c.to = v
	}
	if x.point.T < 1 {
		return row{}, fmt.Errorf("%s: column T: %d; expected at least 1 thread", where(r), x.point.T)
	}
	floats := []struct {
		col string
		to  *float64
	}{{"wait_frac", &x.point.WaitFrac}, {"overlap_ratio", &x.point.OverlapRatio},
		{"wait_skew", &x.point.WaitSkew}, {"t_wait_mean_avg", &x.point.TWait},
		{"t_interior_mean_avg", &x.point.TInterior}, {"t_iter_mean", &x.point.TIter}}
	for _, c := range floats {
		v, err := r.Float(c.col)
		if err != nil {
			return row{}, err
		}
		*c.to = v
	}
	// hidden_frac: a file of an earlier release lacks the column; its
	// inputs are in every release's.
	hidden, err := hiddenFrac(r)
	if err != nil {
		return row{}, err
	}
	x.point.HiddenFrac = hidden
	x.facet.Mode = r.Str("mode")
	x.key.transport = r.Transport()
	if btl := r.Str("transport"); x.key.transport == report.WorldMPI && btl == "tcp" {
		x.key.btl = btl
	}
	if imp := r.Str("impairment"); imp != "none" {
		x.key.impairment = imp
	}
	x.point.Runs = 1
	if r.Str("status") == report.StatusDegraded {
		x.point.Degraded = 1
	}
	return x, nil
}

// hiddenFrac is a record's hidden_frac: its column, or, in results
// written before it was one, computed from t_wait_mean_avg and
// t_pure_comm_mean.
func hiddenFrac(r report.Record) (float64, error) {
	if r.Has("hidden_frac") {
		return r.Float("hidden_frac")
	}
	wait, err := r.Float("t_wait_mean_avg")
	if err != nil {
		return 0, err
	}
	pure, err := r.Float("t_pure_comm_mean")
	if err != nil {
		return 0, err
	}
	return report.HiddenFrac(wait, pure), nil
}

// where names a record's origin, FILE:LINE.
func where(r report.Record) string {
	if r.File == "" {
		return fmt.Sprintf("line %d", r.Line)
	}
	return fmt.Sprintf("%s:%d", r.File, r.Line)
}
