package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
		Use:   "estimate RUN_DIR",
		Short: "Re-run the estimators and GraphCalc on a run's recorded probe stream",
		Long: `Re-run per-edge estimators and GraphCalc offline on the probe stream a sync
run recorded (RUN_DIR/probes.bin), with the protocol settings of its
scenario.yaml, round by round. Each estimator's offsets go to
RUN_DIR/estimates/<estimator>.offsets.jsonl (or --out). When the run recorded
ground truth (simulated runs do, in truth.jsonl), the table shows each
estimator's offset and drift error from the scenario's converged_from round on.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var kinds []estimate.Kind
			for _, n := range names {
				k, err := estimate.ParseKind(n)
				if err != nil {
					return err
				}
				kinds = append(kinds, k)
			}
			res, err := harness.Estimate(args[0], harness.EstimateOptions{Estimators: kinds, Out: out, NoWrite: noWrite})
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

func printEstimates(w io.Writer, res []harness.EstimateResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\trounds\tsolved\t|offset err| p50\tp95\tp99\tmax\tdrift p99 (ppm)\tconverged at\tGraphCalc p50\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", r.Estimator, r.Rounds, r.Solved)
		if a := r.Accuracy; a != nil {
			o := a.OffsetError
			conv := "never"
			if a.ConvergedRound > 0 {
				conv = fmt.Sprintf("round %d", a.ConvergedRound)
			}
			fmt.Fprintf(tw, "%v\t%v\t%v\t%v\t%.4f\t%s\t", d(o.P50), d(o.P95), d(o.P99), d(o.Max), a.DriftError.P99, conv)
		} else {
			fmt.Fprint(tw, "-\t-\t-\t-\t-\t-\t")
		}
		fmt.Fprintf(tw, "%v\t\n", time.Duration(r.GraphCalc.P50).Round(time.Microsecond))
	}
	tw.Flush()
	for _, r := range res {
		for _, f := range r.Files {
			fmt.Fprintf(w, "wrote %s\n", f)
		}
	}
}

func d(ns float64) time.Duration { return time.Duration(ns).Round(time.Nanosecond) }
