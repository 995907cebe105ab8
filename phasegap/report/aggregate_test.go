package report

import (
	"math"
	"reflect"
	"testing"
)

func rank(id int, pure []int64, samples ...Sample) RankSummary {
	return Summarize(Rank{Rank: id, Samples: samples, PureComm: pure})
}

func TestAggregateOverlap(t *testing.T) {
	cfg := testConfig()
	for _, tc := range []struct {
		name  string
		ranks []RankSummary
		want  float64
	}{
		// phase_blk: the exchange is the wait, nothing can hide.
		{"phase_blk", []RankSummary{
			rank(0, nil, blk(0, 0, 12, 40, 3), blk(1, 100, 9, 40, 3)),
			rank(1, nil, blk(0, 0, 15, 40, 3), blk(1, 100, 7, 40, 3)),
		}, 0},
		// Nonblocking, comm window inside the interior, no wait: all hidden.
		{"phase_nb hidden", []RankSummary{
			rank(0, nil, nb(0, 0, 1, 40, 0, 3, 0, 12), nb(1, 100, 1, 40, 0, 3, 0, 20)),
			rank(1, nil, nb(0, 0, 1, 40, 0, 3, 0, 30), nb(1, 100, 1, 40, 0, 3, 0, 5)),
		}, 1},
		// Comm window longer than the interior, waited out in full beyond it:
		// the interior's worth is hidden, so still 1.
		{"phase_nb comm-bound", []RankSummary{
			rank(0, nil, nb(0, 0, 1, 10, 15, 3, 0, 25)),
		}, 1},
		// Time-weighted per iteration: (6+15)/(10+20) = 0.7, where the
		// per-iteration average would give 0.675 and the means 0.525.
		{"phase_nb partial", []RankSummary{
			rank(0, nil, nb(0, 0, 0, 20, 4, 3, 0, 10), nb(1, 100, 0, 20, 15, 3, 0, 30)),
		}, 0.7},
		// Nothing hideable: no interior.
		{"no interior", []RankSummary{rank(0, nil, nb(0, 0, 1, 0, 5, 3, 0, 6))}, 0},
		{"no ranks", nil, 0},
	} {
		row := Aggregate(cfg, tc.ranks, 0)
		near(t, tc.name+" overlap_ratio", row.OverlapRatio, tc.want)
	}
}

func TestAggregateCrossRank(t *testing.T) {
	cfg := testConfig()                                                              // H = 256 -> msg_bytes 2048, bytes_total 4096
	r0 := rank(0, nil, nb(0, 0, 1, 20, 2, 3, 0, 8), nb(1, 100, 1, 20, 2, 3, 0, 8))   // t_iter 26
	r1 := rank(1, nil, nb(0, 0, 3, 10, 6, 5, 0, 16), nb(1, 100, 3, 16, 6, 5, 0, 16)) // t_iter 24, 30
	row := Aggregate(cfg, []RankSummary{r1, r0}, 0xfeed)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"t_post avg", row.TPost.Avg, 2}, {"t_post max", row.TPost.Max, 3},
		{"t_interior avg", row.TInterior.Avg, 16.5}, {"t_interior max", row.TInterior.Max, 20},
		{"t_wait avg", row.TWait.Avg, 4}, {"t_wait max", row.TWait.Max, 6},
		{"t_boundary avg", row.TBoundary.Avg, 4}, {"t_boundary max", row.TBoundary.Max, 5},
		{"t_comm_window avg", row.TCommWindow.Avg, 12}, {"t_comm_window max", row.TCommWindow.Max, 16},
		{"t_iter_mean", row.TIterMean, 26.5}, {"t_iter_mean_max", row.TIterMeanMax, 27},
		{"t_iter_p50", row.TIterP50, (26 + 24) / 2.0}, {"t_iter_p95", row.TIterP95, (26 + 30) / 2.0},
		{"wait_frac", row.WaitFrac, 4 / 26.5},
		{"wait_skew", row.WaitSkew, 6.0 / 4},
		{"bw_effective", row.BWEffective, 4096.0 / 12},
		{"mpi_wait_calls_mean", row.MPIWaitCallsMean, 1},
	} {
		near(t, c.name, c.got, c.want)
	}
	if row.MsgBytes != 2048 || row.BytesTotal != 4096 || row.B != 1 || row.Checksum64 != 0xfeed {
		t.Errorf("derived: msg_bytes %d bytes_total %d B %d checksum %x", row.MsgBytes, row.BytesTotal, row.B, row.Checksum64)
	}
	other := Aggregate(cfg, []RankSummary{r0, r1}, 0xfeed) // NaNs: compare the records
	if !reflect.DeepEqual(row.record(), other.record()) {
		t.Error("Aggregate depends on the order of ranks")
	}
	// All waits zero: skew is 0, not 0/0.
	z := Aggregate(cfg, []RankSummary{rank(0, nil, nb(0, 0, 1, 5, 0, 1, 0, 3))}, 0)
	near(t, "wait_skew without waits", z.WaitSkew, 0)
	// No calibration: the pure-communication figures are undefined.
	for name, v := range map[string]float64{"t_pure_comm_mean": z.TPureCommMean,
		"osu": z.OSUOverlapPct, "imb": z.IMBNBCOverlapPct, "smb": z.SMBAvailabilityPct} {
		if !math.IsNaN(v) {
			t.Errorf("%s without PureComm = %v, want NaN", name, v)
		}
	}
}

func TestOverlapFormulas(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		// OSU: 100 - 100*(overall - (cpu - test))/pure.
		{"osu partial", OSUOverlapPct(12, 10, 1, 4), 25},         // exposed 3 of 4
		{"osu full", OSUOverlapPct(10, 10, 0, 4), 100},           // nothing exposed
		{"osu none", OSUOverlapPct(14, 10, 0, 4), 0},             // exposed = pure
		{"osu clamped", OSUOverlapPct(20, 10, 0, 4), 0},          // worse than serial
		{"osu no pure", OSUOverlapPct(12, 10, 1, 0), math.NaN()}, // undefined
		// IMB-NBC as IMB_output.c computes it: (t_pure + t_CPU - t_ovrl) / max(t_pure, t_CPU).
		{"imb partial", IMBNBCOverlapPct(4, 10, 12), 20},         // (4+10-12)/max(4,10); the guide's min: 50
		{"imb shorter hidden", IMBNBCOverlapPct(4, 10, 10), 40},  // t_ovrl = max: 40, the guide's 100
		{"imb equal full", IMBNBCOverlapPct(10, 10, 10), 100},    // sized as IMB sizes t_CPU: both agree
		{"imb none", IMBNBCOverlapPct(4, 10, 14), 0},             // t_ovrl = sum
		{"imb capped", IMBNBCOverlapPct(10, 10, 9), 100},         // min(1, .)
		{"imb cpu-bound denom", IMBNBCOverlapPct(10, 4, 12), 20}, // max picks t_pure
		{"imb no cpu", IMBNBCOverlapPct(4, 0, 4), 0},             // nothing to overlap with
		{"imb no time", IMBNBCOverlapPct(0, 0, 1), math.NaN()},   // undefined
		// One MPI run on this VM (2026-11-27, mpirun -np 2 chronosync phasegap --ranks 2 --N 20000
		// --halo 8192 --iters 400 --warmup 50 --mode phase_nb): its imb_nbc_t_pure, _t_cpu and
		// _t_ovrl columns, and by hand 100·(26.97458 + 16.08667 − 36.2912225)/26.97458 = 25.0978 %,
		// the value of its imb_nbc_overlap_pct (the guide's min would give 42.08 %).
		{"imb this VM's run", IMBNBCOverlapPct(26.97458, 16.08667, 36.2912225), 100 * 6.7700275 / 26.97458},
		{"smb partial", SMBAvailabilityPct(12, 9, 4), 25},         // overhead 3 of 4
		{"smb full", SMBAvailabilityPct(9, 9, 4), 100},            // no overhead
		{"smb unclamped", SMBAvailabilityPct(15, 9, 4), -50},      // SMB prints it so
		{"smb no base", SMBAvailabilityPct(12, 9, 0), math.NaN()}, // undefined
	} {
		near(t, c.name, c.got, c.want)
	}
}

func TestAggregateOverlapFigures(t *testing.T) {
	cfg := testConfig()
	// One rank: post 1, interior 10 (1 of it polling), wait 1; pure comm 4.
	// t_ovrl 12, OSU 100-100*(12-9)/4 = 25, IMB (4+10-12)/max(4,10) = 20,
	// SMB (work_t = 10-1) 100*(1-3/4) = 25.
	s := nb(0, 0, 1, 10, 1, 2, 1, 6)
	r := Summarize(Rank{Rank: 0, Samples: []Sample{s}, PureComm: []int64{3 * us1, 5 * us1}})
	row := Aggregate(cfg, []RankSummary{r}, 0)
	near(t, "t_pure_comm_mean", row.TPureCommMean, 4)
	near(t, "osu", row.OSUOverlapPct, 25)
	near(t, "imb", row.IMBNBCOverlapPct, 20)
	// The row carries every input of IMB's and SMB's figures.
	near(t, "imb t_ovrl", row.IMBTOvrl, 12)
	near(t, "imb t_pure", row.IMBTPure, 4)
	near(t, "imb t_cpu", row.IMBTCPU, 10)
	near(t, "imb from the row", IMBNBCOverlapPct(row.IMBTPure, row.IMBTCPU, row.IMBTOvrl), row.IMBNBCOverlapPct)
	near(t, "smb iter_t", row.SMBIterT, 12)
	near(t, "smb work_t", row.SMBWorkT, 9)
	near(t, "smb base_t", row.SMBBaseT, 4)
	near(t, "smb from the row", SMBAvailabilityPct(row.SMBIterT, row.SMBWorkT, row.SMBBaseT), row.SMBAvailabilityPct)
	near(t, "smb", row.SMBAvailabilityPct, 25)

	// A measured work_t of 8 (the overlapped interior ran 1 µs slower
	// than alone, besides the polling): overhead 4, availability 0.
	r = Summarize(Rank{Rank: 0, Samples: []Sample{s}, PureComm: []int64{4 * us1}, PureWork: []int64{8 * us1}})
	near(t, "smb with PureWork", Aggregate(cfg, []RankSummary{r}, 0).SMBAvailabilityPct, 0)

	// IMB takes the rank with the longest t_ovrl: rank 1 (10+3 > 10),
	// whose overlap is (4+10-13)/10 = 10%, not rank 0's 40%.
	a := rank(0, []int64{4 * us1}, nb(0, 0, 0, 10, 0, 1, 0, 4))
	b := rank(1, []int64{4 * us1}, nb(0, 0, 0, 10, 3, 1, 0, 7))
	near(t, "imb worst rank", Aggregate(cfg, []RankSummary{a, b}, 0).IMBNBCOverlapPct, 10)

	// phase_blk: the exchange is fully exposed in every figure.
	blkRank := rank(0, []int64{12 * us1}, blk(0, 0, 12, 40, 3))
	row = Aggregate(cfg, []RankSummary{blkRank}, 0)
	near(t, "blk osu", row.OSUOverlapPct, 0)
	near(t, "blk imb", row.IMBNBCOverlapPct, 0)
	near(t, "blk smb", row.SMBAvailabilityPct, 0)
}
