package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/nodestatus"
)

func newStatusCmd() *cobra.Command {
	var (
		socket  string
		cluster string
		rank    int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "status [--socket PATH | --cluster FILE [--rank N]]",
		Short: "Ask a running node how it is doing (as chronyc tracking does)",
		Long: `Ask a running chronosync node, over its status socket, how it is doing, and
print it as chronyc tracking prints chronyd's: the node and its reference
node, the last round and its age, the round's latency, the offset and drift
to global time with their sigma, the self-check, the model's validity
deadline, then a table of the peers (state, last heard, probes sent and
lost, the edge's sigma). --json prints the answer as the node sent it.

The socket is node<N>.sock for rank N in $CHRONOSYNC_STATE_DIR, else in
/run/chronosync (root; the systemd unit's RuntimeDirectory), else in
$XDG_RUNTIME_DIR/chronosync; it is mode
0600, so ask as the node's user or root. --socket names it; --cluster FILE
with --rank N (or the rank variables node reads: RPDT_CLOCKSYNC_RANK,
RPDT_CLOCKSYNC_IP, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID) or --rank
alone derive it as node does; with none, the one node socket in that
directory is asked.

Exit status: 0 when the node is ok or starting, 3 when degraded, 1 when it
is stale or failed or cannot be asked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := logger(cmd)
			path := socket
			if path == "" {
				var err error
				if path, err = statusSocket(cmd, cluster, rank); err != nil {
					return err
				}
			}
			log.Debug("querying the node", "socket", path)
			st, err := nodestatus.Query(path)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(st); err != nil {
					return fmt.Errorf("write the status: %w", err)
				}
			} else if err := nodestatus.Format(out, st); err != nil {
				return err
			}
			switch st.State {
			case nodestatus.StateOK, nodestatus.StateStarting:
				return nil
			case nodestatus.StateDegraded:
				return &codedError{code: exitDegraded, err: errSilent}
			}
			return &codedError{code: 1, err: errSilent}
		},
	}
	f := cmd.Flags()
	f.StringVar(&socket, "socket", "", "the node's status socket `PATH` (default: derived from --cluster and --rank, or the one node<N>.sock of /run/chronosync or $XDG_RUNTIME_DIR/chronosync)")
	f.StringVar(&cluster, "cluster", "", "the node's cluster `FILE`, to derive its socket from its rank")
	f.IntVar(&rank, "rank", 0, "the node's rank (default: from the environment, as node takes it)")
	f.BoolVar(&asJSON, "json", false, "print the node's answer as JSON")
	return cmd
}

// statusSocket is the socket status asks when no --socket is given: rank
// N's (from --rank, or the cluster file's environment), else the one in
// the default directory.
func statusSocket(cmd *cobra.Command, cluster string, rank int) (string, error) {
	euid := os.Geteuid()
	if cmd.Flags().Changed("rank") {
		return nodestatus.DefaultPath(rank, os.Getenv, euid), nil
	}
	if cluster != "" {
		c, err := harness.LoadCluster(cluster)
		if err != nil {
			return "", err
		}
		r, from, err := c.RankFromEnv(os.Getenv)
		if err != nil {
			return "", err
		}
		logger(cmd).Debug("rank from the environment", "rank", r, "variable", from)
		return nodestatus.DefaultPath(r, os.Getenv, euid), nil
	}
	return nodestatus.Find(nodestatus.DefaultDir(os.Getenv, euid))
}
