package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestReadCSV: what WriteCSV writes reads back cell for cell, an empty
// numeric cell is NaN, and the transport classifies the run.
func TestReadCSV(t *testing.T) {
	a := Aggregate(testConfig(), []RankSummary{Summarize(Rank{Rank: 0, Samples: []Sample{nb(0, 0, 1, 10, 2, 1, 0, 12)}})}, 7)
	b := a
	b.Config.Transport, b.WaitFrac = WorldSim, 0.25
	var buf bytes.Buffer
	if err := WriteCSV(&buf, []Row{a, b}, true); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadCSV(&buf, "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Line != 3 {
		t.Fatalf("%d records, second on line %d", len(recs), recs[len(recs)-1].Line)
	}
	w, err := recs[1].Float("wait_frac")
	near(t, "wait_frac", w, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	pure, _ := recs[0].Float("t_pure_comm_mean")
	if !math.IsNaN(pure) {
		t.Errorf("t_pure_comm_mean %v, want NaN for the empty cell", pure)
	}
	if n, err := recs[0].Int("H"); err != nil || n != 256 {
		t.Errorf("H = %d, %v", n, err)
	}
	if got := []string{recs[0].Transport(), recs[1].Transport()}; got[0] != WorldMPI || got[1] != WorldSim {
		t.Errorf("transports %v", got)
	}
	if _, err := recs[0].Float("kernel"); err == nil || !strings.Contains(err.Error(), "r.csv:2: column kernel") {
		t.Errorf("a text cell read as a number: %v", err)
	}
}

func TestReadCSVRefuses(t *testing.T) {
	var good bytes.Buffer
	if err := WriteCSV(&good, []Row{Aggregate(testConfig(), nil, 0)}, true); err != nil {
		t.Fatal(err)
	}
	head, row, _ := strings.Cut(good.String(), "\n")
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "x.csv: empty"},
		{"other header", "a,b\n1,2\n", "x.csv:1: header is not schema_version"},
		{"short row", head + "\n1,linux\n", "x.csv:2: 2 cells; expected"},
		{"other version", head + "\n9" + row[1:], `x.csv:2: schema_version "9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tc.in), "x.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
