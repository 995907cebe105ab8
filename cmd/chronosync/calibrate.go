package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/harness"
)

func newCalibrateCmd() *cobra.Command {
	var worst bool
	cmd := &cobra.Command{
		Use:   "calibrate RUN_DIR...",
		Short: "Check that a run's reported uncertainties contain its errors against ground truth",
		Long: `For every sync run directory with ground truth (simulated runs record
truth.jsonl), compare the clock model of every node but the reference, in
every round from the scenario's converged_from on, with the truth at the
start, middle and end of its window, in units of the uncertainty the model
reports for that reading. Honest uncertainties put at least 99% of the
points within 3σ (column "≤3σ") with an RMS ratio near 1; a run below 99%
is marked NOT CALIBRATED and the command exits 1.

offsets.jsonl is read as combine and estimate read it: a torn last line,
a second record of one round and node, or a round with fewer records than
rounds.jsonl says were solved is an error, never a calibration of what is
left.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res []*harness.CalibrationResult
			for _, dir := range args {
				r, err := harness.Calibrate(dir)
				if err != nil {
					return err
				}
				res = append(res, r)
			}
			bad := printCalibration(cmd.OutOrStdout(), res, worst)
			if bad > 0 {
				return fmt.Errorf("%d of %d runs are not calibrated (fewer than %.0f%% of errors within 3σ)", bad, len(res), 100*groundtruth.Target)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&worst, "worst", false, "list each run's points furthest outside their σ")
	return cmd
}

// printCalibration writes one row per run and returns how many runs are
// not calibrated.
func printCalibration(w io.Writer, res []*harness.CalibrationResult, worst bool) int {
	var times []float64
	for _, r := range res {
		times = append(times, r.ErrorNS.P50, r.ErrorNS.P99, r.SigmaNS.P50)
	}
	u := timeUnit(times...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "run\tfrom\tpoints\t≤1σ\t≤2σ\t≤3σ\tmax σ\tRMS σ\t|err| p50 (%s)\tp99\tσ p50\t\t\n", u.Name)
	bad := 0
	for _, r := range res {
		verdict := "ok"
		if !r.Calibrated() {
			verdict, bad = "NOT CALIBRATED", bad+1
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f%%\t%.1f%%\t%.2f%%\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t\n",
			r.Dir, r.From, r.Points, 100*r.Within1, 100*r.Within2, 100*r.Within3, r.Sigmas.Max, r.RMSSigmas,
			u.Format(r.ErrorNS.P50), u.Format(r.ErrorNS.P99), u.Format(r.SigmaNS.P50), verdict)
	}
	tw.Flush()
	if worst {
		for _, r := range res {
			for _, p := range r.Worst {
				fmt.Fprintf(w, "%s: round %d node %d at %d: error %.1f ns, σ %.1f ns (%.2fσ)\n",
					r.Dir, p.Round, p.Node, p.Local, p.ErrorNS, p.SigmaNS, p.Sigmas())
			}
		}
	}
	return bad
}

// timeUnit is the unit of calibrate's table, chosen from its largest
// figure: in ns with one decimal, since calibrated errors and σ are often a
// few ns; two decimals in the larger units.
func timeUnit(vs ...float64) harness.Unit {
	u := harness.UnitFor(vs...)
	if u == harness.Nanoseconds {
		u.Decimals = 1
	}
	return u
}
