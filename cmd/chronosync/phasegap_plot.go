package main

import (
	"fmt"

	"github.com/spf13/cobra"

	pgplot "github.com/chronosync/chronosync/phasegap/plot"
)

// newPhasegapPlotCmd is chronosync phasegap plot: the figures and knees of
// PhaseGap runs.
func newPhasegapPlotCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "plot RUNS... --out DIR",
		Short: "Plot PhaseGap runs against T and find each series' knee",
		Long: `Read the results.csv of every RUNS argument (a run directory, a sweep
directory searched recursively, or a CSV file) and draw wait_frac,
overlap_ratio and wait_skew against T, the threads per rank: one panel per
halo width H, intensity (flops and bytes per point) and mode, one line per
transport (with its impairment, and P where a panel holds several); several
runs at the same T are averaged. The knee of a series is the first T where
the exposed wait grows by more than the interior shrinks; the wait_frac
panels mark it. Writes DIR/{wait_frac,overlap_ratio,wait_skew}.{png,svg},
DIR/knees.csv and DIR/knees.md, and prints the knee table. See
docs/phasegap.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			recs, err := pgplot.Load(args)
			if err != nil {
				return err
			}
			res, err := pgplot.Plot(recs, out)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d rows from %d argument(s); wrote:\n", len(recs), len(args))
			for _, f := range res.Files {
				fmt.Fprintf(w, "  %s\n", f)
			}
			fmt.Fprintf(w, "\nknees (the first T where t_wait grows by more than t_interior shrinks):\n\n")
			_, err = w.Write(pgplot.KneesMarkdown(res.Knees))
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "phasegap-plots", "the directory to write the figures and knee tables into (created if missing)")
	return cmd
}
