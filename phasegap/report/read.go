package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/infile"
)

// Record is one row of a results.csv as read back: its cells by column
// name, and where it came from (for errors).
type Record struct {
	File string // the file it was read from, "" for a reader
	Line int    // its line in that file
	cell map[string]string
}

// The transports a row can come from, as Transport classifies them.
const (
	WorldMPI  = "mpi"  // the MPI benchmark (its transport column: auto, shm or tcp)
	WorldSim  = "sim"  // the simulator's model (package workload/halo)
	WorldReal = "real" // the model's orchestration over the real backend's TCP streams
)

// Str is the cell of column name ("" when the row has none).
func (r Record) Str(name string) string { return r.cell[name] }

// Has says whether the row's file has column name (a file of an earlier
// release of the schema lacks the columns appended since).
func (r Record) Has(name string) bool {
	_, ok := r.cell[name]
	return ok
}

// Float is the cell of column name as a number; an empty cell is NaN.
func (r Record) Float(name string) (float64, error) {
	s, ok := r.cell[name]
	if !ok {
		return math.NaN(), fmt.Errorf("%s: no column %q", r.where(), name)
	}
	if s == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN(), fmt.Errorf("%s: column %s: %q: expected a number", r.where(), name, s)
	}
	return v, nil
}

// Int is the cell of column name as an integer.
func (r Record) Int(name string) (int, error) {
	s, ok := r.cell[name]
	if !ok {
		return 0, fmt.Errorf("%s: no column %q", r.where(), name)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: column %s: %q: expected an integer", r.where(), name, s)
	}
	return v, nil
}

// Transport classifies the row's run: WorldSim, WorldReal or WorldMPI.
func (r Record) Transport() string {
	switch t := r.cell["transport"]; t {
	case WorldSim, WorldReal:
		return t
	}
	return WorldMPI
}

func (r Record) where() string {
	if r.File == "" {
		return fmt.Sprintf("line %d", r.Line)
	}
	return fmt.Sprintf("%s:%d", r.File, r.Line)
}

// firstColumns is how many columns schema_version 1 had when first
// released (through smb_availability_pct): a header must have at least
// these.
var firstColumns = slices.Index(Columns(), "smb_availability_pct") + 1

// ReadCSV reads a results CSV written by WriteCSV or AppendCSV: its header
// must be Columns() (schema_version SchemaVersion), or a prefix of it of
// at least the first release's columns (a column appended since is then
// absent: Float and Int say so), and every row must have as many cells.
// file names the input in errors.
func ReadCSV(rd io.Reader, file string) ([]Record, error) {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty; expected a results CSV with a header", file)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// A file of an earlier release of schema_version 1 has fewer columns,
	// the same ones first: its rows read, the later columns absent.
	if want := Columns(); len(head) < firstColumns || len(head) > len(want) || !slices.Equal(head, want[:len(head)]) {
		return nil, fmt.Errorf("%s:1: header is not schema_version %d's (%d columns, expected %d starting %q); was it written by another version?",
			file, SchemaVersion, len(head), len(want), want[0])
	}
	var out []Record
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d cells; expected %d", file, line, len(rec), len(head))
		}
		if rec[0] != strconv.Itoa(SchemaVersion) {
			return nil, fmt.Errorf("%s:%d: schema_version %q; expected %d", file, line, rec[0], SchemaVersion)
		}
		r := Record{File: file, Line: line, cell: make(map[string]string, len(head))}
		for i, name := range head {
			r.cell[name] = rec[i]
		}
		out = append(out, r)
	}
}

// ReadCSVFile reads the results CSV at path (see ReadCSV).
func ReadCSVFile(path string) ([]Record, error) {
	f, err := infile.Open(path, infile.Results)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCSV(f, path)
}

// ResultsFile is the name of a run directory's results CSV.
const ResultsFile = "results.csv"

// FindResults lists the results CSVs that args name. An argument is a CSV
// file, or a directory searched recursively, in lexical order, for files
// named results.csv (a run directory, or a sweep directory of run
// directories); directories whose names start with "." (such as a run
// still being staged, .DIR.tmp-*) are skipped. A file reached twice is
// listed once. An argument that names nothing, or a directory with no
// results.csv, is an error naming it.
func FindResults(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		found, err := findResults(arg)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files, nil
}

// findResults lists the results CSVs that arg names.
func findResults(arg string) ([]string, error) {
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
