package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
)

func newNodeCmd() *cobra.Command {
	var (
		cluster string
		rank    int
		out     string
		// duration overrides the scenario's (--duration).
		duration time.Duration
		// stateDir holds the host lock; rotateSize is the rotation cap.
		stateDir   string
		rotateSize int64
		// what the node serves its host (nodeservice.go)
		svc          hostServices
		noTimePage   bool
		noStatusSock bool
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

FILE may instead be rpd's cluster file, one node a line (told apart by
content; docs/node-service.md):

    10.0.0.1,rank=0
    10.0.0.2,rank=1

It has no scenario, ports or key: the node runs sync rounds under node 0
with the defaults (svm, 2s windows, a pair every 1ms; full mesh up to 8
nodes, a star around node 0 above) on the default ports, unauthenticated,
until stopped (or for --duration).

The rank comes from --rank, else from rpd's RPDT_CLOCKSYNC_RANK, else from
RPDT_CLOCKSYNC_IP (the node whose address it is), else from
OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID, so rpd, mpirun or srun can
launch a whole cluster. The scenario's
master (node 0 by default) gathers the rounds and writes offsets.jsonl into
its run directory. Each rank's run directory names its rank: DIR/rank<N> with
--out DIR (so that ranks given one --out, as mpirun gives them, on one host or
a shared file system, each write their own), runs/<scenario>-rank<N> without.
A run directory that another process is writing (its lock .<name>.lock,
beside it, is held) or that another rank wrote is refused, never replaced.
SIGINT or SIGTERM ends the node early; the others go on, and the master's
rounds complete without it by their deadline. A node that saw no round (its
master unreachable) or sent no probe ends with status failed and exits 1.

A scenario of duration: 0 (and rpd's cluster files) runs until SIGINT or
SIGTERM: the node writes its run directory in place from the start, appends
offsets.jsonl and rounds.jsonl a round at a time (write and fsync), so that
kill -9 loses at most the round in progress; restarted on the same
directory it cuts what the kill left half written (logged, and recorded in
incarnations.jsonl), continues the files, and its rounds follow the last
whole one. offsets.jsonl and rounds.jsonl are rotated to offsets.N.jsonl and
rounds.N.jsonl when offsets.jsonl reaches --rotate-size. A clean stop
finishes the run: summary.json, the summary printed, exit 0.

One node per host and cluster: the node holds a lock in --state-dir
(default $CHRONOSYNC_STATE_DIR, else /run/chronosync, else
$XDG_RUNTIME_DIR/chronosync), keyed by the cluster and rank whatever --out
is; a second node of the same cluster on the host is refused, naming the
holder's PID.

A node serves its host (docs/node-service.md) after every round:
  - the time page (default on): its clock model in a shared-memory page,
    /dev/shm/chronosync-<scenario>-node<N> or --timepage PATH, from which local
    processes turn CLOCK_REALTIME readings into global time without locks
    (include/chronosync_time.h, timepage.Reader, tools/chronosync_time.py);
    the model is valid for three round periods; a stopped node expires it.
    --no-timepage (or --timepage '') turns it off;
  - chrony (--chrony-shm UNIT): global time in the NTP SHM refclock segment
    of UNIT, for "refclock SHM UNIT" in chrony.conf, written every second
    while the model is valid;
  - metrics (--metrics ADDR): Prometheus at http://ADDR/metrics;
  - the status socket (default on): node<N>.sock in the state directory, or
    --status-socket PATH, which chronosync status asks; under systemd
    (Type=notify) it sends READY=1 and a STATUS= line every round.
    --no-status-socket turns it off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := harness.LoadCluster(cluster)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("rank") {
				var from string
				if rank, from, err = c.RankFromEnv(os.Getenv); err != nil {
					return err
				}
				logger(cmd).Debug("rank from the environment", "rank", rank, "variable", from)
			}
			if cmd.Flags().Changed("duration") {
				if duration <= 0 {
					return fmt.Errorf("--duration %v: expected a duration > 0 (leave it out to run the scenario's; an rpd cluster's runs until stopped)", duration)
				}
				c.Scenario.Duration = duration
			}
			logger(cmd).Info("cluster loaded", "file", cluster, "rpd", c.RPD, "nodes", len(c.Addresses), "scenario", c.Scenario.Name, "rank", rank)
			if rank < 0 || rank >= len(c.Addresses) {
				return fmt.Errorf("rank %d: cluster %s has %d nodes, ranks 0..%d", rank, cluster, len(c.Addresses), len(c.Addresses)-1)
			}
			if stateDir == "" {
				stateDir = harness.DefaultStateDir(os.Getenv)
			}
			hostLock, err := harness.LockNode(stateDir, c, rank)
			if err != nil {
				return err
			}
			defer hostLock.Release()
			out = rankDir(out, c.Scenario.Name, rank)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			svcCfg, err := nodeServices(cmd, c, cluster, rank, stateDir, svc, noTimePage, noStatusSock)
			if err != nil {
				return err
			}
			hs, err := startNodeService(svcCfg)
			if err != nil {
				return err
			}
			defer func() {
				if cerr := hs.Close(); cerr != nil {
					logger(cmd).Error("stopping the host services", "err", cerr)
				}
			}()
			res, err := harness.Run(c.Scenario, harness.Options{
				OnModel: hs.OnModel, OnRound: hs.OnRound, OnWindow: hs.OnWindow, OnStats: hs.OnStats,
				Out: out, ScenarioFile: c.ScenarioFile, Backend: "real", Context: ctx,
				Cluster: &harness.ClusterNode{Addresses: c.Addresses, Rank: rank}, Key: c.Key,
				RotateBytes: rotateSize,
				LogLevel:    runLogLevel(cmd), LogJSON: runLogJSON(cmd),
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
	f.IntVar(&rank, "rank", 0, "this node's rank (default: RPDT_CLOCKSYNC_RANK, RPDT_CLOCKSYNC_IP's node, else from the MPI or Slurm environment)")
	f.StringVar(&out, "out", "", "the `DIR` of the ranks' run directories: this rank's is DIR/rank<N> (default runs/<scenario>-rank<N>)")
	f.StringVar(&stateDir, "state-dir", "", "the host's state `DIR` holding the one-node-per-host lock and the status socket (default $CHRONOSYNC_STATE_DIR, else /run/chronosync, else $XDG_RUNTIME_DIR/chronosync)")
	f.Int64Var(&rotateSize, "rotate-size", offsets.DefaultRotateBytes, "a node running until stopped rotates offsets.jsonl and rounds.jsonl when offsets.jsonl reaches this many `BYTES`")
	f.DurationVar(&duration, "duration", 0, "run this long instead of the scenario's duration (an rpd cluster file has none: it runs until SIGINT or SIGTERM)")
	f.StringVar(&svc.TimePage, "timepage", "", "publish the clock model in the shared-memory time page at `PATH` ('': none; default /dev/shm/chronosync-<scenario>-node<N>)")
	f.BoolVar(&noTimePage, "no-timepage", false, "publish no time page")
	f.IntVar(&svc.ChronyUnit, "chrony-shm", -1, "feed chrony's NTP SHM refclock `UNIT` (0-255, refclock SHM UNIT in chrony.conf; -1: none)")
	f.StringVar(&svc.MetricsAddr, "metrics", "", "serve Prometheus metrics on `ADDR` (host:port, port 0 picks one; default off)")
	f.StringVar(&svc.StatusSocket, "status-socket", "", "answer chronosync status on the Unix socket `PATH` ('': none; default node<N>.sock in the state directory)")
	f.BoolVar(&noStatusSock, "no-status-socket", false, "serve no status socket")
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

// loadScenarioFor is loadScenario for a run on backend: on the real
// backend a scenario file may have duration 0, a run until SIGINT or
// SIGTERM (scenario.LoadUntilStopped); the simulator's may not.
func loadScenarioFor(arg, backend string) (*scenario.Scenario, string, error) {
	if backend == "real" {
		if _, err := os.Stat(arg); err == nil {
			sc, err := scenario.LoadUntilStopped(arg)
			return sc, arg, err
		}
	}
	return loadScenario(arg)
}
