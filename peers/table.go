package peers

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"

	"github.com/chronosync/chronosync/analysis/stats"
)

// NotInstalled is the Note of a row whose daemon binary is not on $PATH.
const NotInstalled = "not installed"

// Row is one tool's |offset error| on one scenario, in nanoseconds.
type Row struct {
	Scenario string // the scenario's name
	Tool     string // chronosync-<estimator>, chronosync-exported, chrony-basic, chrony-xleave or ptp4l
	Samples  int    // how many errors the percentiles are of; 0 when not measured
	// P50, P95 and P99 are quantiles of |error| (stats.Summarize's
	// empirical quantiles, as in chronosync's own summaries), ns.
	P50, P95, P99 float64
	// Note qualifies the row: NotInstalled, or which nodes were compared.
	Note string
}

// Table is the comparison's result, one row per scenario and tool.
type Table struct {
	Rows []Row
}

// SampleRow summarises a daemon's samples into a row: the quantiles of
// |OffsetNS| over the samples reported at or after from (the end of the
// warm-up). chrony's report times are whole seconds, truncated, so a
// report in the second in which from falls is discarded too.
func SampleRow(scenarioName, tool string, samples []Sample, from time.Time) Row {
	var abs []float64
	for _, s := range samples {
		if !s.At.Before(from) {
			abs = append(abs, math.Abs(s.OffsetNS))
		}
	}
	return summaryRow(scenarioName, tool, stats.Summarize(abs))
}

// summaryRow makes a row of a summary of |error| in ns.
func summaryRow(scenarioName, tool string, s stats.Summary) Row {
	return Row{Scenario: scenarioName, Tool: tool, Samples: s.N, P50: s.P50, P95: s.P95, P99: s.P99}
}

// WriteText prints the table aligned, the quantiles in µs: names left,
// numbers right.
func (t *Table) WriteText(w io.Writer) error {
	lines := [][]string{{"scenario", "tool", "samples", "p50 (µs)", "p95 (µs)", "p99 (µs)", "note"}}
	for _, r := range t.Rows {
		p50, p95, p99 := "-", "-", "-"
		if r.Samples > 0 {
			p50, p95, p99 = micros(r.P50), micros(r.P95), micros(r.P99)
		}
		lines = append(lines, []string{r.Scenario, r.Tool, strconv.Itoa(r.Samples), p50, p95, p99, r.Note})
	}
	widths := make([]int, len(lines[0]))
	for _, l := range lines {
		for i, cell := range l {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		var line strings.Builder
		for i, cell := range l {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i < 2 || i == len(l)-1 { // names and the note to the left
				line.WriteString(cell + pad + "  ")
			} else {
				line.WriteString(pad + cell + "  ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("peers: write table: %w", err)
	}
	return nil
}

// micros formats ns as µs with three decimals (ns resolution).
func micros(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 3, 64) }

// WriteCSV writes the table as CSV with a header line, the quantiles in
// ns; a row without samples has empty quantiles.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"scenario", "tool", "samples", "p50_ns", "p95_ns", "p99_ns", "note"}); err != nil {
		return fmt.Errorf("peers: write CSV: %w", err)
	}
	for _, r := range t.Rows {
		rec := []string{r.Scenario, r.Tool, strconv.Itoa(r.Samples), "", "", "", r.Note}
		if r.Samples > 0 {
			for i, v := range []float64{r.P50, r.P95, r.P99} {
				rec[3+i] = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("peers: write CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("peers: write CSV: %w", err)
	}
	return nil
}

// SaveCSV writes the CSV to path atomically.
func (t *Table) SaveCSV(path string) error {
	return writeAtomic(path, t.WriteCSV)
}

// writeAtomic replaces path with what write writes, all or nothing: a
// temporary file in path's directory, synced, then renamed over path.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(0o644))
	if err != nil {
		return fmt.Errorf("peers: write %s: %w", path, err)
	}
	defer f.Cleanup()
	if err := write(f); err != nil {
		return err
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("peers: write %s: %w", path, err)
	}
	return nil
}
