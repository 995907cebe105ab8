package report_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// Two ranks of a phase_nb run: each summarizes its own samples, rank 0
// aggregates the (gathered) summaries into the run's row and writes it.
func ExampleAggregate() {
	cfg := report.Config{Params: params.Params{Settings: params.Settings{Mode: "phase_nb", Threads: 4,
		N: 200000, Halo: 256, Kernel: "stencil3", Radius: 1, Timesteps: 1, Iters: 2}, Ranks: 2},
		RunID: "demo"}
	const us = 1000 // ns
	// Post 2 µs, interior 60, boundary 8; the halos arrive comm µs after
	// the post, so the wait is what is left of comm after post+interior.
	iter := func(i int, comm int64) report.Sample {
		start, wait := int64(i)*100*us, max(0, comm-62)
		return report.Sample{Iter: i, Start: start,
			Post: 2 * us, Interior: 60 * us, Wait: wait * us, Boundary: 8 * us,
			CommWindow: comm * us, Total: (70 + wait) * us,
			CommStart: start, CommEnd: start + comm*us, WaitCalls: 1}
	}
	var gathered []float64                 // what MPI_Gather would deliver to rank 0
	for r, comm := range []int64{30, 72} { // rank 1's halos are late: it waits 10 µs
		s := report.Summarize(report.Rank{Rank: r, Samples: []report.Sample{iter(0, comm), iter(1, comm)},
			PureComm: []int64{25 * us}})
		gathered = append(gathered, s.Vector()...)
	}
	var sums []report.RankSummary
	for i := 0; i < len(gathered); i += report.VectorLen {
		s, err := report.SummaryFromVector(gathered[i : i+report.VectorLen])
		if err != nil {
			fmt.Println(err)
			return
		}
		sums = append(sums, s)
	}
	// IMB-NBC takes rank 1 (the longest t_ovrl = 2+60+10 = 72 µs; t_pure
	// 25, t_CPU 60): 100·(25+60−72)/max(25, 60) = 21.67 % (the User
	// Guide's min(25, 60) would give 52 %). SMB: iter_t (62+72)/2 = 67,
	// work_t 60, base_t 25: 100·(1 − 7/25) = 72 %.
	row := report.Aggregate(cfg, sums, 0x2a)

	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, []report.Row{row}, true); err != nil {
		fmt.Println(err)
		return
	}
	recs, _ := csv.NewReader(&buf).ReadAll()
	for i, name := range recs[0] {
		switch name {
		case "mode", "t_iter_mean", "t_wait_mean_avg", "t_wait_mean_max", "wait_frac", "wait_skew",
			"overlap_ratio", "bw_effective", "osu_overlap_pct", "imb_nbc_overlap_pct", "smb_availability_pct",
			"imb_nbc_t_ovrl", "imb_nbc_t_pure", "imb_nbc_t_cpu", "smb_iter_t", "smb_work_t", "smb_base_t",
			"t_wait_p50_avg", "t_wait_p95_max":
			fmt.Fprintf(os.Stdout, "%s=%s\n", name, recs[1][i])
		}
	}
	// Output:
	// mode=phase_nb
	// t_iter_mean=75
	// t_wait_mean_avg=5
	// t_wait_mean_max=10
	// wait_frac=0.06666666666666667
	// wait_skew=2
	// overlap_ratio=1
	// bw_effective=80.31372549019608
	// osu_overlap_pct=72
	// imb_nbc_overlap_pct=21.666666666666668
	// smb_availability_pct=72
	// t_wait_p50_avg=5
	// t_wait_p95_max=10
	// imb_nbc_t_ovrl=72
	// imb_nbc_t_pure=25
	// imb_nbc_t_cpu=60
	// smb_iter_t=67
	// smb_work_t=60
	// smb_base_t=25
}
