package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/real/netlab"
)

func newNetnsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "netns",
		Short: "Manage the network namespaces of real-backend runs",
	}
	var prefix string
	sweep := &cobra.Command{
		Use:   "sweep",
		Short: "Remove the namespaces and links a crashed real-backend run left behind",
		Long: `Remove every network namespace (and root-namespace link) that a real-backend
run created and did not remove, for example after the process was killed.
Only names of chronosync's own form (cs<up to 8 letters or digits>-...) are
touched; --prefix narrows it to one run's prefix. Do not sweep while another
real-backend run is alive on this machine without --prefix.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := netlab.Sweep(prefix)
			for _, name := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", name)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "swept %d\n", len(removed))
			return nil
		},
	}
	sweep.Flags().StringVar(&prefix, "prefix", "", "remove only this run's namespaces (the prefix printed in its run.log)")
	cmd.AddCommand(sweep)
	return cmd
}
