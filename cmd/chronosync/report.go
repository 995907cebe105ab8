package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/report"
)

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [--out FILE]",
		Short: "Write a run directory's report: one self-contained HTML page of figures",
		Long: `Write RUN_DIR's report (default RUN_DIR/report.html) and print its path: one
HTML page with inline SVG figures and no script, which fetches nothing. It
draws what RUN_DIR holds: a sync run's offset error over time per node with
its ±3σ band (against the truth in the simulator, the self-check elsewhere),
drift, round latency, edge residuals and rejected links, probe loss and clock
steps; a traced run's collective skew before and after correction and its
violations by collective; a PhaseGap run's or sweep's plots against T and
knees; a peers comparison's error per daemon. The same directory gives the
same bytes. chronosync run writes it at the end of every run (--no-report
turns that off). See docs/report.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := report.Write(args[0], out)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write the report (default RUN_DIR/report.html)")
	return cmd
}
