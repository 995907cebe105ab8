package plot

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"strings"
)

// KneeFloor is the least growth of the wait, and the least excess of it
// over the interior's shrinking, that can make a knee, as a fraction of
// the iteration before it (t_wait + t_interior at T_{k−1}):
// less is far inside any measurement's run-to-run noise (repeated MPI
// runs on the 2-CPU VM differ by a median 17 % in t_iter), and in the
// model it is the rank imbalance's share (imbalance_frac) of an interior
// that grew by one fork/join.
const KneeFloor = 0.001

// Knee finds a series' knee: taken in ascending T, the first point k whose
// exposed wait grew by more than its interior shrank since the point
// before, t_wait(T_k) − t_wait(T_{k−1}) > t_interior(T_{k−1}) −
// t_interior(T_k), the wait's growth and its excess over the interior's
// shrinking each more than KneeFloor of the iteration before: from there
// on, more threads expose more waiting than they save computing. A step
// where the interior grows (a fork/join at a memory ceiling) and the wait
// grows with it by a sliver is no knee, nor one where a latency-bound
// wait grows by what the interior shrank, give or take a rounding.
// points need not be sorted; a step with a NaN time is no knee. ok is
// false when no step qualifies (or there is only one point).
func Knee(points []Point) (knee Point, ok bool) {
	ps := slices.Clone(points)
	slices.SortStableFunc(ps, func(a, b Point) int { return cmp.Compare(a.T, b.T) })
	for k := 1; k < len(ps); k++ {
		grew := ps[k].TWait - ps[k-1].TWait
		shrank := ps[k-1].TInterior - ps[k].TInterior
		floor := KneeFloor * (ps[k-1].TWait + ps[k-1].TInterior)
		if grew > floor && grew-shrank > floor {
			return ps[k], true
		}
	}
	return Point{}, false
}

// KneeRow is the knee of one series.
type KneeRow struct {
	Facet  Facet
	Series string
	Found  bool
	At     Point // the knee's point, when Found
	NT     int   // how many T values the series has
	// Degraded is how many of the series' T values, up to the knee (all
	// of them without one), include a degraded run: a knee on such
	// points may be the machine's, not the exchange's.
	Degraded int
}

// Knees finds the knee of every series of panels, in panel and series
// order.
func Knees(panels []Panel) []KneeRow {
	var out []KneeRow
	for _, pn := range panels {
		for _, s := range pn.Series {
			at, ok := Knee(s.Points)
			k := KneeRow{Facet: pn.Facet, Series: s.Name, Found: ok, At: at, NT: len(s.Points)}
			for _, p := range s.Points {
				if ok && p.T > at.T {
					break
				}
				if p.Degraded > 0 {
					k.Degraded++
				}
			}
			out = append(out, k)
		}
	}
	return out
}

// kneeHeader is knees.csv's header; KneesMarkdown uses the same columns.
func kneeHeader() []string {
	return []string{"H", "flops_per_point", "bytes_per_point", "mode", "series",
		"T_knee", "wait_frac", "t_wait", "t_interior", "n_T", "degraded_T"}
}

// cells is the row's cells, numbers formatted by num.
func (k KneeRow) cells(num func(float64) string) []string {
	c := []string{strconv.Itoa(k.Facet.H), strconv.Itoa(k.Facet.Flops), strconv.Itoa(k.Facet.Bytes),
		k.Facet.Mode, k.Series, "", "", "", "", strconv.Itoa(k.NT), strconv.Itoa(k.Degraded)}
	if k.Found {
		c[5], c[6], c[7], c[8] = strconv.Itoa(k.At.T), num(k.At.WaitFrac), num(k.At.TWait), num(k.At.TInterior)
	}
	return c
}

// KneesCSV is knees.csv: kneeHeader, then one row per series; the knee's
// cells are empty where it has none. Numbers keep every digit (times in
// µs); a NaN is an empty cell.
func KneesCSV(knees []KneeRow) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(kneeHeader()); err != nil {
		return nil, err
	}
	for _, k := range knees {
		if err := w.Write(k.cells(fullNum)); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// KneesMarkdown is knees.md: the same columns as knees.csv as a Markdown
// table, numbers to three significant digits (whole from 100 up), "none
// in range" where a series has no knee.
func KneesMarkdown(knees []KneeRow) []byte {
	var b bytes.Buffer
	head := kneeHeader()
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	for _, k := range knees {
		c := k.cells(shortNum)
		if !k.Found {
			c[5], c[6], c[7], c[8] = "none in range", "-", "-", "-"
		}
		for i := range c {
			c[i] = escapeCell(c[i])
		}
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	return b.Bytes()
}

// escapeCell keeps a cell from breaking its Markdown table.
func escapeCell(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '|':
			b.WriteString(`\|`)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fullNum writes v with every digit; NaN is "".
func fullNum(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// shortNum writes v to three significant digits, without an exponent
// from 100 up.
func shortNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case a >= 100 && !math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
