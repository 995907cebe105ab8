package plot

import (
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Figure is one of Plot's figures as SVG, for a page that inlines it
// (chronosync report).
type Figure struct {
	Name  string // the metric: wait_frac, overlap_ratio, hidden_frac or wait_skew
	Title string // what the figure shows
	SVG   []byte // the SVG document, as Plot writes it to Name.svg
}

// Figures is Plot without files: the same figures, as SVG, in Plot's
// order, and the knees. The same rows give the same bytes.
func Figures(records []report.Record) ([]Figure, []KneeRow, error) {
	if len(records) == 0 {
		return nil, nil, errors.New("phasegap plot: no rows to plot")
	}
	panels, err := Group(records)
	if err != nil {
		return nil, nil, err
	}
	var figs []Figure
	for _, m := range metrics() {
		data, err := render(panels, m, false)
		if err != nil {
			return nil, nil, fmt.Errorf("phasegap plot: %w", err)
		}
		figs = append(figs, Figure{Name: m.name, Title: m.name + " against T: " + m.title, SVG: data})
	}
	return figs, Knees(panels), nil
}
