// Package plot draws PhaseGap's results against T, the threads per rank,
// and finds where more threads stop paying: the knee.
//
// Load reads results.csv files (of run directories, sweep directories or
// named CSV files); Plot groups their rows into panels, one per halo width
// H, intensity (flops_per_point, bytes_per_point) and mode, each holding
// one series per transport (with its impairment, and P when the panel
// holds several), and writes one figure per metric (wait_frac,
// overlap_ratio, hidden_frac, wait_skew) as PNG and SVG, and the knees as
// knees.csv and knees.md. Several runs of one series at the same T are averaged. Every
// output is written atomically, and the same rows give the same bytes.
package plot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Load reads the rows of every results CSV that args name (see
// report.FindResults).
func Load(args []string) ([]report.Record, error) {
	files, err := report.FindResults(args)
	if err != nil {
		return nil, err
	}
	var out []report.Record
	for _, f := range files {
		recs, err := report.ReadCSVFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// Result is what Plot wrote.
type Result struct {
	Files []string  // the paths written, in the order written
	Knees []KneeRow // every series' knee, in panel and series order
}

// Plot groups records into panels (see Group) and writes into outDir,
// creating it if missing: for each metric M of wait_frac, overlap_ratio,
// hidden_frac and wait_skew, M.png and M.svg (a grid of panels; the
// wait_frac panels mark each series' knee); then knees.csv and knees.md
// (see Knee); then, where some series has several halo widths (the
// message-size sweep), the same against H (GroupByH): t_wait_vs_H,
// wait_frac_vs_H and overlap_ratio_vs_H, PNG and SVG.
func Plot(records []report.Record, outDir string) (Result, error) {
	if len(records) == 0 {
		return Result{}, errors.New("phasegap plot: no rows to plot")
	}
	panels, err := Group(records)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("phasegap plot: %w", err)
	}
	var res Result
	write := func(name string, data []byte) error {
		path := filepath.Join(outDir, name)
		if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(outDir)); err != nil {
			return fmt.Errorf("phasegap plot: %w", err)
		}
		res.Files = append(res.Files, path)
		return nil
	}
	// drawAll writes each metric of ms over panels, as PNG and SVG.
	drawAll := func(panels []Panel, ms []metric) error {
		for _, m := range ms {
			for _, png := range []bool{true, false} {
				data, err := render(panels, m, png)
				if err != nil {
					return fmt.Errorf("phasegap plot: %w", err)
				}
				name := m.name + ".svg"
				if png {
					name = m.name + ".png"
				}
				if err := write(name, data); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := drawAll(panels, metrics()); err != nil {
		return res, err
	}
	res.Knees = Knees(panels)
	csv, err := KneesCSV(res.Knees)
	if err != nil {
		return res, fmt.Errorf("phasegap plot: knees.csv: %w", err)
	}
	if err := write("knees.csv", csv); err != nil {
		return res, err
	}
	if err := write("knees.md", KneesMarkdown(res.Knees)); err != nil {
		return res, err
	}
	// Against H, where some series has several (the message-size sweep).
	byH, err := GroupByH(records)
	if err != nil {
		return res, err
	}
	if len(byH) == 0 {
		return res, nil
	}
	return res, drawAll(byH, hMetrics())
}
