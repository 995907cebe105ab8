package report

import (
	"fmt"
	"strconv"

	pgplot "github.com/chronosync/chronosync/phasegap/plot"
)

// phasegapSection is the plan's plots of a PhaseGap run or sweep (wait_frac,
// overlap_ratio, hidden_frac and wait_skew against T, as chronosync phasegap plot draws
// them) and the knee table.
func phasegapSection(r *Run) (*Section, error) {
	if len(r.Phasegap) == 0 {
		return nil, nil
	}
	s := &Section{ID: "phasegap", Title: "PhaseGap: wait and overlap against threads per rank (T)"}
	s.Intro = append(s.Intro, fmt.Sprintf("%d result rows (results.csv) of this directory; several runs of one series at the same T are averaged.", len(r.Phasegap)))
	figs, knees, err := pgplot.Figures(r.Phasegap)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, f := range figs {
		s.Figures = append(s.Figures, Figure{ID: "phasegap-" + f.Name, Caption: f.Title + ". One panel per halo width, intensity and mode; one series per transport.", SVG: inline(f.SVG)})
	}
	t := Table{Caption: "Knees: the T past which more threads stop paying (wait_frac grows faster than the interior shrinks)",
		Head: []string{"H", "flops/pt", "bytes/pt", "mode", "series", "T knee", "wait_frac", "t_wait (µs)", "t_interior (µs)", "T values"}}
	for _, k := range knees {
		row := cells(strconv.Itoa(k.Facet.H), strconv.Itoa(k.Facet.Flops), strconv.Itoa(k.Facet.Bytes), k.Facet.Mode, k.Series,
			"none in range", "-", "-", "-", strconv.Itoa(k.NT))
		if k.Found {
			row[5].Text, row[6].Text = strconv.Itoa(k.At.T), short(k.At.WaitFrac)
			row[7].Text, row[8].Text = short(k.At.TWait), short(k.At.TInterior)
		}
		t.Rows = append(t.Rows, row)
	}
	s.Tables = append(s.Tables, t)
	return s, nil
}

// short is v to three significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
