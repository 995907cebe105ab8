package plot

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sweep writes a sweep directory: one run directory per run of two
// facets, sim and mpi, T = 1..8; the sim series of phase_nb has its knee
// at T = 4 (the wait grows by 100 µs, the interior shrinks by 50).
func sweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	interior := map[int]float64{1: 800, 2: 400, 4: 350, 8: 340}
	simWait := map[int]float64{1: 10, 2: 20, 4: 120, 8: 300}
	n := 0
	for _, mode := range []string{"phase_blk", "phase_nb"} {
		for _, tt := range []int{1, 2, 4, 8} {
			for _, tr := range []string{"sim", "shm"} {
				wait := simWait[tt]
				if tr == "shm" || mode == "phase_blk" {
					wait = 10 // flat: no knee
				}
				n++
				writeResults(t, filepath.Join(dir, fmt.Sprintf("run%02d", n)),
					run{mode: mode, transport: tr, impairment: "none", h: 256, flops: 64, p: 2, t: tt, wait: wait, interior: interior[tt]})
			}
		}
	}
	return dir
}

func TestPlot(t *testing.T) {
	recs, err := Load([]string{sweep(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 16 {
		t.Fatalf("Load: %d records, want 16", len(recs))
	}
	out := filepath.Join(t.TempDir(), "new", "plots")
	res, err := Plot(recs, out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"wait_frac.png", "wait_frac.svg", "overlap_ratio.png", "overlap_ratio.svg",
		"hidden_frac.png", "hidden_frac.svg", "wait_skew.png", "wait_skew.svg", "knees.csv", "knees.md"}
	if !slices.Equal(names, want) {
		t.Errorf("files = %v, want %v", names, want)
	}
	for _, f := range res.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			// Two panels side by side, 5.5 × 4 in plus the title, at 128 dpi.
			if b := img.Bounds(); b.Dx() != 1408 || b.Dy() < 512 || b.Dy() > 600 {
				t.Errorf("%s: %v, want 1408 wide and about 512 high", f, b)
			}
		case ".svg":
			var root struct{ XMLName xml.Name }
			if err := xml.Unmarshal(data, &root); err != nil || root.XMLName.Local != "svg" {
				t.Errorf("%s: root %v, %v; want <svg>", f, root.XMLName, err)
			}
		}
	}
	rows := readCSV(t, filepath.Join(out, "knees.csv"))
	wantRows := [][]string{
		{"256", "64", "0", "phase_blk", "mpi", "", "4"},
		{"256", "64", "0", "phase_blk", "sim", "", "4"},
		{"256", "64", "0", "phase_nb", "mpi", "", "4"},
		{"256", "64", "0", "phase_nb", "sim", "4", "4"},
	}
	if len(rows) != len(wantRows)+1 {
		t.Fatalf("knees.csv has %d rows, want %d", len(rows), len(wantRows)+1)
	}
	for i, w := range wantRows {
		r := rows[i+1]
		got := []string{r[0], r[1], r[2], r[3], r[4], r[5], r[9]}
		if !slices.Equal(got, w) {
			t.Errorf("knees.csv row %d = %v, want %v", i+1, got, w)
		}
	}
	if k := rows[4]; k[7] != "120" || k[8] != "350" {
		t.Errorf("knee t_wait, t_interior = %s, %s; want 120, 350", k[7], k[8])
	}
	md, err := os.ReadFile(filepath.Join(out, "knees.md"))
	if err != nil || !strings.Contains(string(md), "none in range") {
		t.Errorf("knees.md: %v, lacks \"none in range\":\n%s", err, md)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPlotDeterministic: the same rows give the same bytes.
func TestPlotDeterministic(t *testing.T) {
	recs, err := Load([]string{sweep(t)})
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if _, err := Plot(recs, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"knees.csv", "knees.md", "wait_frac.svg", "overlap_ratio.svg", "wait_frac.png"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", name, len(x), len(y))
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	one := run{mode: "phase_nb", transport: "sim", h: 256, p: 2, t: 1}
	csvFile := writeResults(t, filepath.Join(dir, "sweep", "b"), one, one)
	writeResults(t, filepath.Join(dir, "sweep", "a"), one)
	writeResults(t, filepath.Join(dir, "sweep", ".b.tmp-1"), one) // a run being staged
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("schema_version,mode\n1,phase_nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string // the records' FILE:LINE
		wantErr string
	}{
		{"sweep directory, sorted, staging skipped", []string{filepath.Join(dir, "sweep")},
			[]string{"sweep/a/results.csv:2", "sweep/b/results.csv:2", "sweep/b/results.csv:3"}, ""},
		{"a file and its directory: read once", []string{csvFile, filepath.Join(dir, "sweep", "b")},
			[]string{"sweep/b/results.csv:2", "sweep/b/results.csv:3"}, ""},
		{"missing", []string{filepath.Join(dir, "nope")}, nil, "nope: no such file or directory"},
		{"no results.csv", []string{filepath.Join(dir, "empty")}, nil, "empty: no results.csv in it"},
		{"bad header", []string{bad}, nil, "bad.csv:1: header is not schema_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Load(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				rel, _ := filepath.Rel(dir, r.File)
				got = append(got, rel+":"+strconv.Itoa(r.Line))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("records from %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlotRefuses(t *testing.T) {
	if _, err := Plot(nil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("Plot(nil) = %v, want \"no rows\"", err)
	}
	dir := t.TempDir()
	path := writeResults(t, dir, run{mode: "phase_nb", transport: "sim", h: 256, p: 2, t: 1})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// T = 0 on line 2.
	lines := strings.SplitN(string(data), "\n", 2)
	cells := strings.Split(lines[1], ",")
	cells[slices.Index(strings.Split(lines[0], ","), "T")] = "0"
	if err := os.WriteFile(path, []byte(lines[0]+"\n"+strings.Join(cells, ",")), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Plot(recs, t.TempDir()); err == nil || !strings.Contains(err.Error(), "results.csv:2: column T") {
		t.Errorf("Plot with T = 0: %v, want results.csv:2: column T", err)
	}
}

func TestGrid(t *testing.T) {
	for _, tc := range []struct{ n, cols, rows int }{
		{1, 1, 1}, {2, 2, 1}, {3, 2, 2}, {4, 2, 2}, {5, 3, 2}, {9, 3, 3}, {10, 4, 3}, {50, 4, 13},
	} {
		if c, r := grid(tc.n); c != tc.cols || r != tc.rows {
			t.Errorf("grid(%d) = %d×%d, want %d×%d", tc.n, c, r, tc.cols, tc.rows)
		}
	}
}
