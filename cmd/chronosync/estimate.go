package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/harness"
)

func newEstimateCmd() *cobra.Command {
	var (
		names   []string
		out     string
		noWrite bool
	)
	cmd := &cobra.Command{
		Use:   "estimate RUN_DIR [RANK_DIR...]",
		Short: "Re-run the estimators and GraphCalc on a run's recorded probe stream",
		Long: `Re-run per-edge estimators and GraphCalc offline on the probe stream a sync
run recorded (RUN_DIR/probes.bin), with the protocol settings of its
scenario.yaml, round by round. Each estimator's offsets go to
RUN_DIR/estimates/<estimator>.offsets.jsonl (or --out). When the run recorded
ground truth (simulated runs do, in truth.jsonl), the table shows each
estimator's offset and drift error from the scenario's converged_from round on.

A multi-host cluster (chronosync node) leaves one run directory per rank, each
with its own node's probes and ground truth: give the master's first and the
other ranks' after it, and the table measures every node, with a first row for
what the master exported.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var kinds []estimate.Kind
			for _, n := range names {
				k, err := estimate.ParseKind(n)
				if err != nil {
					return err
				}
				kinds = append(kinds, k)
			}
			res, err := harness.Estimate(args[0], harness.EstimateOptions{Estimators: kinds, Out: out, NoWrite: noWrite, Ranks: args[1:]})
			if err != nil {
				return err
			}
			printEstimates(cmd.OutOrStdout(), res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&names, "estimator", nil, "estimator to run: regression, minfilter or svm (repeat or comma-separate; default all)")
	f.StringVar(&out, "out", "", "directory for the estimators' offsets files (default RUN_DIR/estimates)")
	f.BoolVar(&noWrite, "no-write", false, "print the table only")
	return cmd
}

// printEstimates writes one row per estimator: its offset errors in one
// unit for the table, chosen from the largest and named in the header, and
// GraphCalc's wall time per round in its own.
func printEstimates(w io.Writer, res []harness.EstimateResult) {
	var errs, times []float64
	for _, r := range res {
		if a := r.Accuracy; a != nil && a.OffsetError.N > 0 {
			o := a.OffsetError
			errs = append(errs, o.P50, o.P95, o.P99, o.Max)
		}
		if r.GraphCalc.N > 0 {
			times = append(times, r.GraphCalc.P50)
		}
	}
	u, gu := harness.UnitFor(errs...), harness.UnitFor(times...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "estimator\trounds\tsolved\t|offset err| p50 (%s)\tp95\tp99\tmax\tdrift p99 (ppm)\tconverged at\tGraphCalc p50 (%s)\t\n", u.Name, gu.Name)
	var noTruth []int
	for _, r := range res {
		if r.GraphCalc.N == 0 { // what the run exported: not re-solved here
			fmt.Fprintf(tw, "%s\t-\t-\t", r.Estimator)
		} else {
			fmt.Fprintf(tw, "%s\t%d\t%d\t", r.Estimator, r.Rounds, r.Solved)
		}
		if a := r.Accuracy; a != nil {
			noTruth = a.NoTruth
		}
		if a := r.Accuracy; a != nil && a.OffsetError.N == 0 {
			// Truth for the reference alone: unknown errors, not zeros.
			fmt.Fprint(tw, "-\t-\t-\t-\t-\tno ground truth\t")
		} else if a != nil {
			o := a.OffsetError
			conv := "never"
			if a.ConvergedRound > 0 {
				conv = fmt.Sprintf("round %d", a.ConvergedRound)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%s\t", u.Format(o.P50), u.Format(o.P95), u.Format(o.P99), u.Format(o.Max), a.DriftError.P99, conv)
		} else {
			fmt.Fprint(tw, "-\t-\t-\t-\t-\t-\t")
		}
		if r.GraphCalc.N == 0 {
			fmt.Fprint(tw, "-\t\n")
		} else {
			fmt.Fprintf(tw, "%s\t\n", gu.Format(r.GraphCalc.P50))
		}
	}
	tw.Flush()
	if len(noTruth) > 0 {
		fmt.Fprintf(w, "no ground truth for nodes %v: not counted above; a cluster's ranks each record their own (give their run directories after RUN_DIR)\n", noTruth)
	}
	if len(errs) > 0 {
		fmt.Fprintln(w, "errors from the scenario's converged_from round on; converged at: the first round from which every round's worst |offset error| stays under 1 µs")
	}
	for _, r := range res {
		if r.Calibration != nil && r.Calibration.Points > 0 {
			fmt.Fprintf(w, "%s:\n", r.Estimator)
			harness.PrintCalibration(w, r.Calibration)
		}
	}
	for _, r := range res {
		for _, f := range r.Files {
			fmt.Fprintf(w, "wrote %s\n", f)
		}
	}
}
