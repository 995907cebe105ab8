package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kind is a fixture run directory and the figures its page must have.
type kind struct {
	name    string
	dir     string
	figures int      // <figure> elements, each with an SVG
	empties int      // figures with nothing to draw, a sentence instead
	ids     []string // the figures' ids, in page order
	texts   []string // text the page must hold
}

// kinds are the fixtures of testdata: a traced sync run with truth (a
// clock step and a rejected link put in), the same without truth (the
// self-check instead), a PhaseGap sweep, a peers comparison with a daemon
// that did not run, and an empty directory.
func kinds(t *testing.T) []kind {
	return []kind{
		{name: "train4", dir: "testdata/train4", figures: 6, empties: 1,
			ids:   []string{"offset-error", "drift", "round-latency", "residuals", "probe-loss", "violations"},
			texts: []string{"against the ground truth", "1 clock steps", "rejected as an outlier", "1 → 3", "combined: 0 violations", "scenario</th><td>train4"}},
		{name: "selfcheck", dir: "testdata/selfcheck", figures: 5,
			ids:   []string{"offset-error", "drift", "round-latency", "residuals", "probe-loss"},
			texts: []string{"Self-check per node"}},
		{name: "sweep", dir: "testdata/sweep", figures: 4,
			ids:   []string{"phasegap-wait_frac", "phasegap-overlap_ratio", "phasegap-hidden_frac", "phasegap-wait_skew"},
			texts: []string{"Knees", "No summary.json"}},
		{name: "peers", dir: "testdata/peers", figures: 1, ids: []string{"peers-0"},
			texts: []string{"did not run", `<td class="mark">did not run</td>`, "not installed"}},
		{name: "empty", dir: t.TempDir(), texts: []string{"Nothing to draw"}},
	}
}

var (
	figureRE  = regexp.MustCompile(`(?s)<figure id="([^"]*)">\n(.*?)\n<figcaption>(.*?)</figcaption>\n</figure>`)
	emptyRE   = regexp.MustCompile(`<p class="empty" id="[^"]*">`)
	drawnTags = map[string]bool{"path": true, "line": true, "polyline": true, "polygon": true, "rect": true, "circle": true, "text": true}
)

// svgDrawn parses an inline SVG as XML and counts its drawing elements.
func svgDrawn(t *testing.T, svg string) int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	n, root := 0, ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if drawnTags[se.Name.Local] {
				n++
			}
		}
	}
	if root != "svg" {
		t.Fatalf("inline figure's root element is %q, want svg", root)
	}
	return n
}

// TestPage checks each kind's page without a browser: its figures, each
// one SVG with drawing in it and a caption, the sentences that stand for
// empty figures, and what the page must say.
func TestPage(t *testing.T) {
	for _, tc := range kinds(t) {
		t.Run(tc.name, func(t *testing.T) {
			page, err := Build(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			s := string(page)
			figs := figureRE.FindAllStringSubmatch(s, -1)
			if got := strings.Count(s, "<figure"); got != len(figs) || got != tc.figures {
				t.Fatalf("%d <figure> (%d well-formed), want %d", got, len(figs), tc.figures)
			}
			var ids []string
			for _, f := range figs {
				ids = append(ids, f[1])
				if strings.Count(f[2], "<svg") != 1 {
					t.Errorf("figure %s: %d svg elements, want 1", f[1], strings.Count(f[2], "<svg"))
				}
				if n := svgDrawn(t, f[2]); n < 3 {
					t.Errorf("figure %s: %d drawing elements", f[1], n)
				}
				if len(f[3]) < 20 {
					t.Errorf("figure %s: caption %q too short", f[1], f[3])
				}
			}
			if strings.Join(ids, " ") != strings.Join(tc.ids, " ") {
				t.Errorf("figures %q, want %q", ids, tc.ids)
			}
			if got := len(emptyRE.FindAllString(s, -1)); got != tc.empties {
				t.Errorf("%d empty-figure sentences, want %d", got, tc.empties)
			}
			for _, want := range tc.texts {
				if !strings.Contains(s, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			for _, bad := range []string{"<script", "http://", "https://", "<?xml", "src="} {
				if bad == "http://" || bad == "https://" {
					// SVG namespaces are names, not fetches.
					s2 := strings.ReplaceAll(strings.ReplaceAll(s, `xmlns="http://www.w3.org/2000/svg"`, ""), `xmlns:xlink="http://www.w3.org/1999/xlink"`, "")
					if strings.Contains(s2, bad) {
						t.Errorf("the page holds a URL (%s)", bad)
					}
					continue
				}
				if strings.Contains(s, bad) {
					t.Errorf("the page holds %q", bad)
				}
			}
		})
	}
}

// TestDeterministic: the same directory gives the same bytes, and Write
// writes them to report.html (atomically: no temporary file left).
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"summary.json", "offsets.jsonl", "rounds.jsonl", "truth.jsonl", "combined.validate.json", "raw.validate.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/train4", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, FileName) {
		t.Errorf("wrote %s, want %s", path, filepath.Join(dir, FileName))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two reports of one directory differ")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 7 {
		t.Errorf("%d files in the run directory after Write, want the 6 and report.html", len(entries))
	}
}

// TestErrors: what is not a run directory, or holds a broken file, is an
// error naming it; the page escapes what the files say.
func TestErrors(t *testing.T) {
	if _, err := Build(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing directory gave no error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(dir); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("a broken summary.json: %v, want an error naming it", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"scenario":"<b>x</b>","status":"ok"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	page, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("<b>x</b>")) || !bytes.Contains(page, []byte("&lt;b&gt;x&lt;/b&gt;")) {
		t.Error("the scenario's name is not escaped")
	}
}

// TestThin: long series are cut to maxPoints, first and last kept, the
// same way each time.
func TestThin(t *testing.T) {
	for _, n := range []int{0, 1, maxPoints, maxPoints + 1, 10 * maxPoints, 10*maxPoints + 7} {
		xy := make([]struct{ X, Y float64 }, n)
		for i := range xy {
			xy[i].X = float64(i)
		}
		got := thin(toXYs(xy))
		if len(got) > maxPoints+1 {
			t.Errorf("n=%d: %d points kept, want at most %d", n, len(got), maxPoints+1)
		}
		if n > 0 && (got[0].X != 0 || got[len(got)-1].X != float64(n-1)) {
			t.Errorf("n=%d: first %g, last %g: want the ends kept", n, got[0].X, got[len(got)-1].X)
		}
		if n <= maxPoints && len(got) != n {
			t.Errorf("n=%d: %d kept, want all", n, len(got))
		}
	}
}
