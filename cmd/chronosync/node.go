package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/harness"
)

func newNodeCmd() *cobra.Command {
	var (
		cluster string
		rank    int
		out     string
	)
	cmd := &cobra.Command{
		Use:   "node --cluster FILE [--rank N]",
		Short: "Run one node of a real multi-host cluster",
		Long: `Run one node of a real cluster over the ordinary network. FILE names the
scenario every node runs (protocol, duration, injected clock offsets) and each
node's address, by rank:

    scenario: sync4.yaml          # relative to FILE
    addresses: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4]
    key: cluster.key              # optional: openssl rand -hex 32, mode 0600

With a key every datagram and stream frame carries an HMAC-SHA256 tag; what
does not open under the key is dropped and counted (auth_* in the summary's
dropped line). Without one the cluster is unauthenticated and its log says so.

The rank comes from --rank, else from OMPI_COMM_WORLD_RANK, PMI_RANK or
SLURM_PROCID, so mpirun or srun can launch a whole cluster. The scenario's
master (node 0 by default) gathers the rounds and writes offsets.jsonl into
its run directory (default runs/<scenario>-rank<N>). SIGINT or SIGTERM ends
the node early; the others go on, and the master's rounds complete without it
by their deadline.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := harness.LoadCluster(cluster)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("rank") {
				if rank, err = harness.RankFromEnv(os.Getenv); err != nil {
					return err
				}
			}
			if out == "" {
				out = fmt.Sprintf("runs/%s-rank%d", c.Scenario.Name, rank)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := harness.Run(c.Scenario, harness.Options{
				Out: out, ScenarioFile: c.ScenarioFile, Backend: "real", Context: ctx,
				Cluster: &harness.ClusterNode{Addresses: c.Addresses, Rank: rank}, Key: c.Key,
			})
			if err != nil {
				return err
			}
			res.Print(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cluster, "cluster", "", "the cluster `FILE` (scenario and addresses)")
	f.IntVar(&rank, "rank", 0, "this node's rank (default: from the MPI or Slurm environment)")
	f.StringVar(&out, "out", "", "run directory (default runs/<scenario>-rank<N>)")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}
