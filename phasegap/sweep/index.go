package sweep

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/google/renameio/v2"

	"github.com/chronosync/chronosync/infile"
)

// IndexFile is the sweep's index, in its output directory: one line per
// point, rewritten (atomically) after every point.
const IndexFile = "index.csv"

// indexColumns are the index's columns: the point, its status and run
// directory, then the results' main figures (empty until it finished).
var indexColumns = []string{"matrix", "sweep", "transport", "id", "status", "reason", "dir",
	"P", "T", "H", "flops_per_point", "bytes_per_point", "mode", "preset", "progress",
	"t_iter_mean", "t_interior_mean_avg", "t_wait_mean_avg", "wait_frac", "wait_skew", "overlap_ratio", "hidden_frac"}

// indexColumnsBefore is how many columns an index had before hidden_frac
// (2026-11-27): such an index is read with that cell empty.
const indexColumnsBefore = 21

// figures are the results' columns the index copies.
var figures = indexColumns[15:]

// key identifies a point across calls.
func key(p Point) string { return p.Sweep + "/" + p.Transport + "/" + p.ID() }

// index is a previous call's index: each point's line by key, in order.
type index struct {
	keys  []string
	lines map[string][]string
}

// status is a point's status in the index, "" if it has none.
func (ix index) status(k string) string {
	if l, ok := ix.lines[k]; ok {
		return l[4]
	}
	return ""
}

// writeIndex writes the index atomically: entries, then the lines of old
// whose points this call did not plan (other transports, left out with
// --transports), as they were.
func writeIndex(path, matrix string, entries []Entry, old index) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(indexColumns)
	planned := map[string]bool{}
	for _, e := range entries {
		planned[key(e.Point)] = true
	}
	for _, e := range entries {
		q := e.Params
		rec := []string{matrix, e.Sweep, e.Transport, e.ID(), e.Status, e.Reason, e.Dir,
			strconv.Itoa(q.Ranks), strconv.Itoa(q.Threads), strconv.Itoa(q.Halo), strconv.Itoa(q.Flops),
			strconv.Itoa(q.Bytes), q.Mode, e.Preset, q.Progress}
		for _, f := range figures {
			v := ""
			if e.Results != nil {
				v = e.Results.Str(f)
			}
			rec = append(rec, v)
		}
		w.Write(rec)
	}
	for _, k := range old.keys {
		if !planned[k] {
			w.Write(old.lines[k])
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return renameio.WriteFile(path, b.Bytes(), 0o644)
}

// readIndex reads a previous call's index; no index is an empty one.
func readIndex(path string) (index, error) {
	ix := index{lines: map[string][]string{}}
	b, err := infile.ReadFile(path, infile.SweepIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return ix, err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return ix, fmt.Errorf("%s: %w (delete it to rebuild it from the run directories)", path, err)
	}
	if len(recs) == 0 || (len(recs[0]) != len(indexColumns) && len(recs[0]) != indexColumnsBefore) || recs[0][0] != indexColumns[0] {
		return ix, fmt.Errorf("%s:1: not a sweep index of this version (delete it to rebuild it from the run directories)", path)
	}
	for _, r := range recs[1:] {
		for len(r) < len(indexColumns) {
			r = append(r, "")
		}
		k := r[1] + "/" + r[2] + "/" + r[3]
		if _, dup := ix.lines[k]; !dup {
			ix.keys = append(ix.keys, k)
		}
		ix.lines[k] = r
	}
	return ix, nil
}
