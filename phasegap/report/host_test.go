package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestHiddenFrac(t *testing.T) {
	for _, c := range []struct {
		wait, pure, want float64
	}{
		{0, 10, 1},
		{2.5, 10, 0.75},
		{10, 10, 0},
		{40, 10, 0}, // a wait longer than the exchange: nothing hidden, clamped
		{-1, 10, 1}, // clamped
		{5, 0, math.NaN()},
		{5, math.NaN(), math.NaN()},
		{math.NaN(), 10, math.NaN()},
	} {
		got := HiddenFrac(c.wait, c.pure)
		if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("HiddenFrac(%v, %v) = %v, want %v", c.wait, c.pure, got, c.want)
		}
	}
}

// TestHiddenFracInRow: the row's hidden_frac is computed from its own
// t_wait_mean_avg and t_pure_comm_mean, and empty without a pure pass.
func TestHiddenFracInRow(t *testing.T) {
	mk := func(pure []int64) Row {
		return Aggregate(Config{}, []RankSummary{
			Summarize(Rank{Rank: 0, Samples: []Sample{nb(0, 0, 1, 20, 2, 3, 1, 8)}, PureComm: pure}),
			Summarize(Rank{Rank: 1, Samples: []Sample{nb(0, 0, 1, 20, 4, 3, 1, 8)}, PureComm: pure}),
		}, 0)
	}
	r := mk([]int64{8 * us1})
	if want := 1 - r.TWait.Avg/r.TPureCommMean; math.Abs(r.HiddenFrac-want) > 1e-12 || r.TWait.Avg != 3 {
		t.Errorf("hidden_frac %v, want 1 − %v/%v", r.HiddenFrac, r.TWait.Avg, r.TPureCommMean)
	}
	r = mk(nil)
	var b bytes.Buffer
	if err := WriteCSV(&b, []Row{r}, true); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadCSV(&b, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.HiddenFrac) || recs[0].Str("hidden_frac") != "" {
		t.Errorf("no pure pass: hidden_frac %v, cell %q; want empty", r.HiddenFrac, recs[0].Str("hidden_frac"))
	}
}

// TestPollFigures: polls_to_complete counts the iterations a test
// completed only; one that ended in Waitall is in the share, not the
// count.
func TestPollFigures(t *testing.T) {
	poll := func(i, tests, polls, waits int) Sample {
		s := nb(i, int64(100*i), 1, 20, 2, 3, 1, 8)
		s.TestCalls, s.PollsToComplete, s.WaitCalls = tests, polls, waits
		return s
	}
	r0 := Summarize(Rank{Rank: 0, Samples: []Sample{poll(0, 4, 4, 0), poll(1, 6, 6, 0), poll(2, 9, 0, 1), poll(3, 9, 0, 1)}})
	r1 := Summarize(Rank{Rank: 1, Samples: []Sample{poll(0, 2, 2, 0), poll(1, 3, 0, 1)}})
	row := Aggregate(Config{}, []RankSummary{r0, r1}, 0)
	// Completed by a test: 4, 6 (rank 0) and 2 (rank 1): mean 4 (the old
	// count, with the Waitall iterations as zeros, read 1.75); 3 of the 6
	// polling iterations.
	if row.PollsToCompleteMean != 4 || row.PollsCompletedFrac != 0.5 || row.PollsToCompleteP95 != (6+2)/2.0 {
		t.Errorf("polls mean %v, p95 %v, completed %v; want 4, 4, 0.5", row.PollsToCompleteMean, row.PollsToCompleteP95, row.PollsCompletedFrac)
	}
	none := Aggregate(Config{}, []RankSummary{Summarize(Rank{Samples: []Sample{poll(0, 0, 0, 1)}})}, 0)
	if !math.IsNaN(none.PollsToCompleteMean) || !math.IsNaN(none.PollsCompletedFrac) {
		t.Errorf("no polling: mean %v, share %v; want empty", none.PollsToCompleteMean, none.PollsCompletedFrac)
	}
}

func TestHostJudge(t *testing.T) {
	for _, c := range []struct {
		name string
		h    Host
		p, t int
		want []string // substrings of the reasons; none: ok
	}{
		{"idle, fits", Host{CPUs: 2, LoadStart: 0.1, LoadEnd: 1.9, Pressure: 0.9, OthersCPUs: 0.1}, 2, 1, nil},
		{"oversubscribed", Host{CPUs: 2, LoadStart: 0.1, LoadEnd: 1.9}, 2, 2, []string{"oversubscribed: P×T = 2×2 = 4 > 2 host CPUs"}},
		{"loaded before", Host{CPUs: 2, LoadStart: 2.9, LoadEnd: 1.9}, 2, 1, []string{"load 2.90 before the run > 2 host CPUs"}},
		// The load after holds the run's own threads: recorded, not judged.
		{"load after alone", Host{CPUs: 2, LoadStart: 0.5, LoadEnd: 3.1}, 1, 1, nil},
		{"others in the free CPU", Host{CPUs: 2, OthersCPUs: 1.2}, 1, 1, nil},
		{"others beyond the free CPU", Host{CPUs: 2, OthersCPUs: 1.3}, 1, 1, []string{"other processes kept 1.30 CPUs busy during the run; it left 1 free"}},
		{"mpirun's daemon on a full host", Host{CPUs: 2, OthersCPUs: 0.05}, 2, 1, nil},
		{"others on a full host", Host{CPUs: 2, OthersCPUs: 0.3}, 2, 1, []string{"kept 0.30 CPUs busy during the run; it left 0 free"}},
		{"steal", Host{CPUs: 2, Steal: 0.2}, 1, 1, []string{"CPU steal 20.0 %"}},
		{"unknown figures", Host{CPUs: 2, LoadStart: math.NaN(), LoadEnd: math.NaN(), Pressure: math.NaN(), Steal: math.NaN(), OthersCPUs: math.NaN()}, 2, 1, nil},
		{"all", Host{CPUs: 1, LoadStart: 5, LoadEnd: 5, Pressure: 0.9, Steal: 0.5, OthersCPUs: 3}, 2, 1, []string{"oversubscribed", "before", "other processes", "steal"}},
	} {
		h := c.h
		h.Judge(c.p, c.t)
		want := StatusOK
		if len(c.want) > 0 {
			want = StatusDegraded
		}
		if h.Status != want || len(h.Reasons) != len(c.want) {
			t.Errorf("%s: %s %q, want %s with %d reasons", c.name, h.Status, h.Reasons, want, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(h.Reasons[i], w) {
				t.Errorf("%s: reason %q, want %q", c.name, h.Reasons[i], w)
			}
		}
	}
}

// TestHostColumns: a measured run writes its host's figures, status and
// reasons (and the manifest its host section); a model run leaves them
// empty and has no host section.
func TestHostColumns(t *testing.T) {
	row := sampleRow()
	row.Config.Params.Ranks, row.Config.Params.Threads = 2, 2
	row.RankCPUs = 1
	row.Host = Host{Measured: true, CPUs: 2, LoadStart: 2.5, LoadEnd: 2.25, Pressure: 0.25, Steal: math.NaN(), OthersCPUs: 0.125}
	row.Host.Judge(2, 2)
	var b bytes.Buffer
	if err := WriteCSV(&b, []Row{row}, true); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadCSV(&b, "x")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range []string{"host_cpus", "rank_cpus", "oversubscription", "load1_start", "load1_end", "cpu_pressure", "cpu_steal", "others_cpus", "status", "degraded_reason"} {
		got[k] = recs[0].Str(k)
	}
	want := map[string]string{"host_cpus": "2", "rank_cpus": "1", "oversubscription": "2", "load1_start": "2.5", "load1_end": "2.25",
		"cpu_pressure": "0.25", "cpu_steal": "", "others_cpus": "0.125", "status": "degraded",
		"degraded_reason": "oversubscribed: P×T = 2×2 = 4 > 2 host CPUs; load 2.50 before the run > 2 host CPUs"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	var m bytes.Buffer
	if err := WriteManifest(&m, Manifest{Config: row.Config, Row: row}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"host": {`, `"loadavg_end": [`, `"cpu_steal": null`, `"status": "degraded"`, `"degraded_reasons": [`} {
		if !strings.Contains(m.String(), w) {
			t.Errorf("manifest lacks %s", w)
		}
	}
	model := sampleRow()
	b.Reset()
	if err := WriteCSV(&b, []Row{model}, true); err != nil {
		t.Fatal(err)
	}
	recs, _ = ReadCSV(&b, "x")
	for _, k := range []string{"host_cpus", "oversubscription", "load1_start", "status", "degraded_reason"} {
		if v := recs[0].Str(k); v != "" {
			t.Errorf("model run: %s = %q, want empty", k, v)
		}
	}
	m.Reset()
	if err := WriteManifest(&m, Manifest{Config: model.Config, Row: model}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.String(), `"host": {`) {
		t.Errorf("model run's manifest has a host section")
	}
}
