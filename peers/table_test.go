package peers

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// synthetic is a table of two scenarios with every kind of row.
func synthetic() *Table {
	return &Table{Rows: []Row{
		{Scenario: "idle", Tool: "chronosync-svm", Samples: 540, P50: 120, P95: 410.6, P99: 800},
		{Scenario: "idle", Tool: "chronosync-exported", Samples: 540, P50: 0, P95: 1, P99: 2},
		{Scenario: "idle", Tool: ToolChronyBasic, Samples: 250, P50: 2500, P95: 7000, P99: 12000},
		{Scenario: "idle", Tool: ToolPTP4l, Note: NotInstalled},
		{Scenario: "onoff", Tool: "chronosync-svm", Samples: 540, P50: 300, P95: 900, P99: 1500},
		{Scenario: "onoff", Tool: ToolPTP4l, Samples: 19, P50: 250e3, P95: 1.2e6, P99: 1.9e6, Note: "nodes 0-1 only"},
	}}
}

func TestSampleRow(t *testing.T) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var samples []Sample
	// Warm-up samples, huge, all before from.
	for i := range 50 {
		samples = append(samples, Sample{At: from.Add(-time.Duration(i+1) * time.Millisecond), OffsetNS: 1e9})
	}
	// 1..100 ns with alternating signs, at or after from.
	for i := 1; i <= 100; i++ {
		off := float64(i)
		if i%2 == 0 {
			off = -off
		}
		samples = append(samples, Sample{At: from.Add(time.Duration(100-i) * time.Millisecond), OffsetNS: off})
	}
	r := SampleRow("s", "t", samples, from)
	want := Row{Scenario: "s", Tool: "t", Samples: 100, P50: 50, P95: 95, P99: 99}
	if r != want {
		t.Errorf("SampleRow = %+v, want %+v", r, want)
	}
	if r := SampleRow("s", "t", samples[:50], from); r.Samples != 0 || r.P99 != 0 {
		t.Errorf("SampleRow of warm-up samples only = %+v, want no samples", r)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := synthetic().WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	const want = `scenario,tool,samples,p50_ns,p95_ns,p99_ns,note
idle,chronosync-svm,540,120,410.6,800,
idle,chronosync-exported,540,0,1,2,
idle,chrony-basic,250,2500,7000,12000,
idle,ptp4l,0,,,,not installed
onoff,chronosync-svm,540,300,900,1500,
onoff,ptp4l,19,250000,1200000,1900000,nodes 0-1 only
`
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := synthetic().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	const want = `scenario  tool                 samples  p50 (µs)  p95 (µs)  p99 (µs)  note
idle      chronosync-svm           540     0.120     0.411     0.800
idle      chronosync-exported      540     0.000     0.001     0.002
idle      chrony-basic             250     2.500     7.000    12.000
idle      ptp4l                      0         -         -         -  not installed
onoff     chronosync-svm           540     0.300     0.900     1.500
onoff     ptp4l                     19   250.000  1200.000  1900.000  nodes 0-1 only
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	tab := synthetic()
	for _, name := range []string{"peers.png", "peers.svg"} {
		path := filepath.Join(dir, name)
		if err := tab.WritePlot(path); err != nil {
			t.Fatalf("WritePlot(%s): %v", name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 {
			t.Errorf("%s: only %d bytes", name, len(b))
		}
		if strings.HasSuffix(name, ".png") {
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if cfg.Width < 800 || cfg.Height < 2*cfg.Width/3 {
				t.Errorf("%s: %dx%d, want two panels at least 800 wide", name, cfg.Width, cfg.Height)
			}
		} else if !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not SVG", name)
		} else if n := bytes.Count(b, []byte("did not run")); n != 1 {
			// idle's ptp4l has no samples: marked in its place, not left out.
			t.Errorf("%s: %d \"did not run\" labels, want 1 (idle's ptp4l)", name, n)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("files left in %s: %v, want the two plots only", dir, entries)
	}
	// A scenario with nothing measured still plots, noted in its title.
	empty := &Table{Rows: []Row{{Scenario: "x", Tool: ToolPTP4l, Note: NotInstalled}}}
	if err := empty.WritePlot(filepath.Join(dir, "empty.png")); err != nil {
		t.Errorf("WritePlot of a table without samples: %v", err)
	}
	for _, bad := range []string{filepath.Join(dir, "peers.gif"), filepath.Join(dir, "nosuchdir", "peers.png")} {
		if err := tab.WritePlot(bad); err == nil {
			t.Errorf("WritePlot(%s): no error", bad)
		}
	}
	if err := (&Table{}).WritePlot(filepath.Join(dir, "none.png")); err == nil {
		t.Error("WritePlot of an empty table: no error")
	}
}

func TestSaveCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := synthetic().SaveCSV(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "scenario,tool,") || strings.Count(string(b), "\n") != 7 {
		t.Errorf("peers.csv:\n%s", b)
	}
}
