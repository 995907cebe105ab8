package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// File is the file `chronosync node --cluster FILE` reads: the
// scenario every node runs (protocol, duration, injected clock offsets) and
// the address of each node, indexed by rank.
//
//	scenario: sync4.yaml      # relative to the cluster file
//	addresses: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4]
//	key: cluster.key          # optional; relative to the cluster file
//
// Each address is one node's own unicast address, in any spelling
// (::ffff:10.0.0.1 is 10.0.0.1), optionally with its subnet's prefix
// length (10.0.0.1/24) so that the subnet's broadcast address is refused
// too; no two nodes may have one address, as every node listens on the
// same ports.
//
// With a key file (hex, mode 0600: openssl rand -hex 32 > cluster.key)
// every datagram and stream frame is sealed with it; without one the
// cluster is unauthenticated and says so in its log.
type File struct {
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
	// RPD says the file was rpd's ADDRESS,rank=RANK lines: the scenario
	// is RPDScenario's default, ScenarioFile the cluster file itself.
	RPD bool
}

// Load reads and checks a cluster file, in either format: the YAML
// of [File], or rpd's lines of ADDRESS,rank=RANK ([ParseRPD];
// told apart by content, [IsRPD]). For the YAML: known keys only, a loadable
// scenario, one unicast address per scenario node (not unspecified,
// broadcast or multicast; with a prefix length, not the subnet's
// broadcast either), each in its canonical form (an IPv4-mapped IPv6
// address is its IPv4 address) and no two nodes' the same. An error names
// the file, the line, the node and the field.
func Load(path string) (*Cluster, error) {
	data, err := infile.ReadFile(path, infile.Cluster)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if IsRPD(data) {
		return loadRPD(path, data)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", path, err)
	}
	if f.Scenario == "" {
		return nil, fmt.Errorf("cluster %s: no scenario: expected scenario: FILE (relative to the cluster file)", path)
	}
	scPath := relativeTo(path, f.Scenario)
	sc, err := scenario.LoadUntilStopped(scPath) // duration 0: until SIGINT or SIGTERM
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
	lines := addressLines(data)
	seen := map[netip.Addr]int{}
	for i, a := range f.Addresses {
		where := fmt.Sprintf("cluster %s", path)
		if i < len(lines) && lines[i] > 0 {
			where += fmt.Sprintf(":%d", lines[i])
		}
		where += fmt.Sprintf(": node %d (addresses[%d] %q)", i, i, a)
		ip, err := parseNodeAddr(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if j, dup := seen[ip]; dup {
			return nil, fmt.Errorf("%s: node %d (addresses[%d] %q%s) has the address %s already: every node listens on the same ports, so each needs an address of its own",
				where, j, j, f.Addresses[j], lineSuffix(lines, j), ip)
		}
		seen[ip] = i
		c.Addresses = append(c.Addresses, ip)
	}
	return c, nil
}

// parseNodeAddr parses a cluster file's address of a node: an IP address,
// or one with its subnet's prefix length (10.0.0.5/24), which lets the
// subnet's broadcast address be refused too. The address must be unicast
// (real.CheckUnicast, real.CheckUnicastIn) and is returned in its
// canonical form: an IPv4-mapped IPv6 address as its IPv4 address.
func parseNodeAddr(s string) (netip.Addr, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("expected an IP address, optionally with its subnet's prefix length (10.0.0.5/24): %w", err)
		}
		if err := real.CheckUnicastIn(p); err != nil {
			return netip.Addr{}, err
		}
		return real.CanonicalAddr(p.Addr()), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("expected an IP address: %w", err)
	}
	if err := real.CheckUnicast(ip); err != nil {
		return netip.Addr{}, err
	}
	return real.CanonicalAddr(ip), nil
}

// addressLines returns the line of each element of a cluster file's
// addresses: sequence, as the YAML decoder found them (0 where it did not:
// the file decoded already, so this only adds lines to its errors).
func addressLines(data []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value != "addresses" || m.Content[k+1].Kind != yaml.SequenceNode {
			continue
		}
		var out []int
		for _, e := range m.Content[k+1].Content {
			out = append(out, e.Line)
		}
		return out
	}
	return nil
}

// lineSuffix is ", line N" for the i-th address, or "" without a line.
func lineSuffix(lines []int, i int) string {
	if i < len(lines) && lines[i] > 0 {
		return fmt.Sprintf(", line %d", lines[i])
	}
	return ""
}

// relativeTo resolves name, written in the file at path, against that
// file's directory.
func relativeTo(path, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(path), name)
}

// Node says which node of a cluster this process runs.
type Node struct {
	Addresses []netip.Addr
	Rank      int
}

// RankFromEnv returns the rank that MPI or Slurm launchers give a process:
// OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI) or
// SLURM_PROCID (srun), in that order.
//
// A node of a loaded cluster takes [Cluster.RankFromEnv], which reads rpd's
// RPDT_CLOCKSYNC_RANK and RPDT_CLOCKSYNC_IP before these.
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

// Configure makes cfg run only this rank's node, on the ordinary network,
// with true time on the Unix epoch shared by every host.
func (c *Node) Configure(cfg *real.Config) error {
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
