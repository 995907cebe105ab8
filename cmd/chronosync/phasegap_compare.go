package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/phasegap/plot"
)

func newPhasegapCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare RUNS...",
		Short: "The simulator's model against MPI: each configuration both ran, with the model's relative error",
		Long: `compare reads the results of RUNS (run directories, results CSVs, or sweep
directories searched for them), pairs every MPI run with the simulator's runs
of the same configuration (P, T, H, intensity, mode, N, iterations; links
without a preset), and prints t_interior, t_wait, wait_frac, overlap_ratio
and t_iter measured and modelled, the relative error of each, and the median
and worst error per figure. See docs/phasegap.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := plot.Load(args)
			if err != nil {
				return err
			}
			c, err := plot.Compare(recs)
			if err != nil {
				return err
			}
			if len(c.Pairs) == 0 {
				return fmt.Errorf("no configuration ran both on MPI and in the simulator (%d MPI configurations unmatched)", c.Unmatched)
			}
			fmt.Fprint(cmd.OutOrStdout(), c.Markdown())
			return nil
		},
	}
}
