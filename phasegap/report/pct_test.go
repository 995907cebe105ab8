package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPhasePercentiles: every phase's p50 and p95 reach the row (the
// average and the maximum over ranks of the per-rank nearest-rank
// values) and the CSV, where an outlier that the mean hides shows.
func TestPhasePercentiles(t *testing.T) {
	cfg := testConfig()
	// Rank 0: 18 iterations without a wait, one of 100 µs, one of 200;
	// rank 1: 20 of 5 µs.
	var s0, s1 []Sample
	for i := range 20 {
		w := int64(0)
		switch i {
		case 3:
			w = 100
		case 7:
			w = 200
		}
		s0 = append(s0, nb(i, int64(i)*1000, 1, 50, w, 2, 0, 40))
		s1 = append(s1, nb(i, int64(i)*1000, 3, 50, 5, 4, 0, 40))
	}
	row := Aggregate(cfg, []RankSummary{Summarize(Rank{Rank: 0, Samples: s0}), Summarize(Rank{Rank: 1, Samples: s1})}, 0)
	near(t, "t_wait mean avg", row.TWait.Avg, (300.0/20+5)/2)
	near(t, "t_wait p50 avg", row.TWaitPct.P50.Avg, 2.5) // rank 0's p50 0, rank 1's 5
	near(t, "t_wait p50 max", row.TWaitPct.P50.Max, 5)
	near(t, "t_wait p95 avg", row.TWaitPct.P95.Avg, (100.0+5)/2) // nearest rank: the 19th of 20
	near(t, "t_wait p95 max", row.TWaitPct.P95.Max, 100)
	near(t, "t_post p50 avg", row.TPostPct.P50.Avg, 2)
	near(t, "t_post p95 max", row.TPostPct.P95.Max, 3)
	near(t, "t_boundary p50 max", row.TBoundaryPct.P50.Max, 4)
	near(t, "t_interior p95 avg", row.TInteriorPct.P95.Avg, 50)
	near(t, "t_comm_window p50 avg", row.TCommWindowPct.P50.Avg, 40)
	near(t, "t_iter p95 max", row.TIterPct.P95.Max, 153)
	near(t, "t_iter p50 (the existing column)", row.TIterP50, row.TIterPct.P50.Avg)

	if line := row.PercentileLine(); !strings.Contains(line, "  wait 2.50/52.50 (100.00)") || !strings.Contains(line, "  iter ") {
		t.Errorf("PercentileLine: %q", line)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, []Row{row}, true); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadCSV(&b, "pct.csv")
	if err != nil {
		t.Fatal(err)
	}
	for col, want := range map[string]float64{"t_wait_p50_avg": 2.5, "t_wait_p95_max": 100, "t_post_p95_max": 3, "t_iter_p95_max": 153} {
		if got, err := recs[0].Float(col); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", col, got, err, want)
		}
	}
}

// TestReadEarlierHeader: a results CSV of schema_version 1 as first
// released (through smb_availability_pct) still reads; its later columns
// are absent. A shorter header, or one that differs, is refused.
func TestReadEarlierHeader(t *testing.T) {
	cols := Columns()
	first := cols[:firstColumns]
	if first[len(first)-1] != "smb_availability_pct" {
		t.Fatalf("first release ends at %q", first[len(first)-1])
	}
	row := make([]string, len(first))
	row[0] = "1"
	old := strings.Join(first, ",") + "\n" + strings.Join(row, ",") + "\n"
	recs, err := ReadCSV(strings.NewReader(old), "old.csv")
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v", err)
	}
	if _, err := recs[0].Float("t_wait_p95_max"); err == nil || !strings.Contains(err.Error(), `no column "t_wait_p95_max"`) {
		t.Errorf("a later column in an old file: %v", err)
	}
	for _, head := range []string{strings.Join(cols[:firstColumns-1], ","), strings.Join(append(append([]string{}, first...), "other"), ",")} {
		if _, err := ReadCSV(strings.NewReader(head+"\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), "header is not") {
			t.Errorf("header of %d columns: %v", strings.Count(head, ",")+1, err)
		}
	}
}

// TestNoCheckNoChecksum: a run without --check writes no checksum: an
// empty CSV cell, null in the JSON row, no checksum64 key in the
// manifest; with it, the value.
func TestNoCheckNoChecksum(t *testing.T) {
	for _, check := range []bool{false, true} {
		cfg := testConfig()
		cfg.Params.Check = check
		row := Aggregate(cfg, nil, 0)
		var b bytes.Buffer
		if err := WriteCSV(&b, []Row{row}, true); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadCSV(&b, "r.csv")
		if err != nil {
			t.Fatal(err)
		}
		wantCell := map[bool]string{false: "", true: "0x0000000000000000"}[check]
		if got := recs[0].Str("checksum64"); got != wantCell {
			t.Errorf("check %v: checksum64 cell %q, want %q", check, got, wantCell)
		}
		var m bytes.Buffer
		if err := WriteManifest(&m, Manifest{Config: cfg, Row: row}); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(m.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		_, has := doc["checksum64"]
		res := doc["result"].(map[string]any)
		if has != check || (res["checksum64"] == nil) == check {
			t.Errorf("check %v: manifest checksum64 present %v, result's %v", check, has, res["checksum64"])
		}
	}
}
