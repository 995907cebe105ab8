package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFigures: Figures gives the SVGs Plot writes, byte for byte, in
// Plot's order, with the same knees; no rows is an error.
func TestFigures(t *testing.T) {
	recs, err := Load([]string{sweep(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Plot(recs, dir)
	if err != nil {
		t.Fatal(err)
	}
	figs, knees, err := Figures(recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"wait_frac", "overlap_ratio", "hidden_frac", "wait_skew"}
	if len(figs) != len(want) {
		t.Fatalf("%d figures, want %d", len(figs), len(want))
	}
	for i, f := range figs {
		if f.Name != want[i] || f.Title == "" {
			t.Errorf("figure %d: %q (title %q), want %q with a title", i, f.Name, f.Title, want[i])
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, f.SVG) {
			t.Errorf("%s: Figures' SVG differs from Plot's %s.svg", f.Name, f.Name)
		}
	}
	if len(knees) != len(res.Knees) {
		t.Errorf("%d knees, Plot found %d", len(knees), len(res.Knees))
	}
	if _, _, err := Figures(nil); err == nil {
		t.Error("no rows gave no error")
	}
}
