package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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

Each address is its node's own unicast address, in any spelling
(::ffff:10.0.0.1 is 10.0.0.1), one per node; 0.0.0.0, ::, 255.255.255.255,
multicast and, written with a prefix length (10.0.0.1/24), the subnet's
broadcast are refused.

With a key every datagram and stream frame carries an HMAC-SHA256 tag; what
does not open under the key is dropped and counted (auth_* in the summary's
dropped line). Without one the cluster is unauthenticated and its log says so.

The rank comes from --rank, else from OMPI_COMM_WORLD_RANK, PMI_RANK or
SLURM_PROCID, so mpirun or srun can launch a whole cluster. The scenario's
master (node 0 by default) gathers the rounds and writes offsets.jsonl into
its run directory. Each rank's run directory names its rank: DIR/rank<N> with
--out DIR (so that ranks given one --out, as mpirun gives them, on one host or
a shared file system, each write their own), runs/<scenario>-rank<N> without.
A run directory that another process is writing (its lock .<name>.lock,
beside it, is held) or that another rank wrote is refused, never replaced.
SIGINT or SIGTERM ends the node early; the others go on, and the master's
rounds complete without it by their deadline. A node that saw no round (its
master unreachable) or sent no probe ends with status failed and exits 1.`,
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
			out = rankDir(out, c.Scenario.Name, rank)
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
			return failedRun(res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cluster, "cluster", "", "the cluster `FILE` (scenario and addresses)")
	f.IntVar(&rank, "rank", 0, "this node's rank (default: from the MPI or Slurm environment)")
	f.StringVar(&out, "out", "", "the `DIR` of the ranks' run directories: this rank's is DIR/rank<N> (default runs/<scenario>-rank<N>)")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// rankDir is the run directory of a cluster node of rank rank: out/rank<N>
// when out is given, so that ranks launched with one --out never share a
// directory, else runs/<scenario>-rank<N>.
func rankDir(out, scenario string, rank int) string {
	if out == "" {
		return filepath.Join("runs", fmt.Sprintf("%s-rank%d", scenario, rank))
	}
	return filepath.Join(out, fmt.Sprintf("rank%d", rank))
}
