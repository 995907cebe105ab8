package harness

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// ClusterFile is the file `chronosync node --cluster FILE` reads: the
// scenario every node runs (protocol, duration, injected clock offsets) and
// the address of each node, indexed by rank.
//
//	scenario: sync4.yaml      # relative to the cluster file
//	addresses: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4]
//	key: cluster.key          # optional; relative to the cluster file
//
// With a key file (hex, mode 0600: openssl rand -hex 32 > cluster.key)
// every datagram and stream frame is sealed with it; without one the
// cluster is unauthenticated and says so in its log.
type ClusterFile struct {
	Scenario  string   `yaml:"scenario"`
	Addresses []string `yaml:"addresses"`
	Key       string   `yaml:"key"`
}

// Cluster is a loaded cluster file.
type Cluster struct {
	Scenario     *scenario.Scenario
	ScenarioFile string
	Addresses    []netip.Addr
	// Key is the cluster's shared key; nil without a key: line.
	Key *auth.Key
}

// LoadCluster reads and checks a cluster file: known keys only, a loadable
// scenario, one valid, distinct address per scenario node.
func LoadCluster(path string) (*Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f ClusterFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", path, err)
	}
	if f.Scenario == "" {
		return nil, fmt.Errorf("cluster %s: no scenario: expected scenario: FILE (relative to the cluster file)", path)
	}
	scPath := relativeTo(path, f.Scenario)
	sc, err := scenario.Load(scPath)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", path, err)
	}
	if len(f.Addresses) != sc.Nodes {
		return nil, fmt.Errorf("cluster %s: %d addresses for the %d nodes of scenario %s", path, len(f.Addresses), sc.Nodes, scPath)
	}
	c := &Cluster{Scenario: sc, ScenarioFile: scPath}
	if f.Key != "" {
		if c.Key, err = auth.LoadKey(relativeTo(path, f.Key)); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", path, err)
		}
	}
	seen := map[netip.Addr]int{}
	for i, a := range f.Addresses {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: address %d: %w", path, i, err)
		}
		if j, dup := seen[ip]; dup {
			return nil, fmt.Errorf("cluster %s: nodes %d and %d share the address %s", path, j, i, ip)
		}
		seen[ip] = i
		c.Addresses = append(c.Addresses, ip)
	}
	return c, nil
}

// relativeTo resolves name, written in the file at path, against that
// file's directory.
func relativeTo(path, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(path), name)
}

// ClusterNode says which node of a cluster this process runs.
type ClusterNode struct {
	Addresses []netip.Addr
	Rank      int
}

// RankFromEnv returns the rank that MPI or Slurm launchers give a process:
// OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI) or
// SLURM_PROCID (srun), in that order.
func RankFromEnv(getenv func(string) string) (int, error) {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"} {
		if v := getenv(k); v != "" {
			r, err := strconv.Atoi(v)
			if err != nil || r < 0 {
				return 0, fmt.Errorf("%s=%q: expected a rank >= 0", k, v)
			}
			return r, nil
		}
	}
	return 0, errors.New("no rank: give --rank N, or launch with mpirun or srun (OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID)")
}

// configure makes cfg run only this rank's node, on the ordinary network,
// with true time on the Unix epoch shared by every host.
func (c *ClusterNode) configure(cfg *real.Config) error {
	if c.Rank < 0 || c.Rank >= len(cfg.Nodes) {
		return fmt.Errorf("rank %d: the cluster has nodes 0..%d", c.Rank, len(cfg.Nodes)-1)
	}
	if len(c.Addresses) != len(cfg.Nodes) {
		return fmt.Errorf("%d addresses for %d nodes", len(c.Addresses), len(cfg.Nodes))
	}
	for i := range cfg.Nodes {
		cfg.Nodes[i].Addr = c.Addresses[i]
	}
	cfg.Local = []world.NodeID{world.NodeID(c.Rank)}
	cfg.UnixEpoch = true
	return nil
}
