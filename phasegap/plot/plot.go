// Package plot draws PhaseGap's results against T, the threads per rank,
// and finds where more threads stop paying: the knee.
//
// Load reads results.csv files (of run directories, sweep directories or
// named CSV files); Plot groups their rows into panels, one per halo width
// H, intensity (flops_per_point, bytes_per_point) and mode, each holding
// one series per transport (with its impairment, and P when the panel
// holds several), and writes one figure per metric (wait_frac,
// overlap_ratio, wait_skew) as PNG and SVG, and the knees as knees.csv and
// knees.md. Several runs of one series at the same T are averaged. Every
// output is written atomically, and the same rows give the same bytes.
package plot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/chronosync/chronosync/phasegap/report"
)

// ResultsFile is the name of a run directory's results CSV.
const ResultsFile = "results.csv"

// Load reads the rows of every results CSV that args name. An argument is
// a CSV file, or a directory searched recursively, in lexical order, for
// files named results.csv (a run directory, or a sweep directory of run
// directories); directories whose names start with "." (such as a run
// still being staged, .DIR.tmp-*) are skipped. A file reached twice is read
// once. An argument that names nothing, or a directory with no results.csv,
// is an error naming it.
func Load(args []string) ([]report.Record, error) {
	var files []string
	for _, arg := range args {
		found, err := find(arg)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
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

// find lists the results CSVs that arg names.
func find(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or directory (expected a run directory, a sweep directory or a results CSV)", arg)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{filepath.Clean(arg)}, nil
	}
	var files []string
	err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != arg && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == ResultsFile {
			files = append(files, filepath.Clean(path))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s in it or below (expected a run directory, a sweep directory or a results CSV)", arg, ResultsFile)
	}
	return files, nil
}

// Result is what Plot wrote.
type Result struct {
	Files []string  // the paths written, in the order written
	Knees []KneeRow // every series' knee, in panel and series order
}

// Plot groups records into panels (see Group) and writes into outDir,
// creating it if missing: for each metric M of wait_frac, overlap_ratio
// and wait_skew, M.png and M.svg (a grid of panels; the wait_frac panels
// mark each series' knee); then knees.csv and knees.md (see Knee).
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
	for _, m := range metrics() {
		for _, png := range []bool{true, false} {
			data, err := render(panels, m, png)
			if err != nil {
				return res, fmt.Errorf("phasegap plot: %w", err)
			}
			name := m.name + ".svg"
			if png {
				name = m.name + ".png"
			}
			if err := write(name, data); err != nil {
				return res, err
			}
		}
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
	return res, nil
}
