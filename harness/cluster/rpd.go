package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/scenario"
)

// rpd's cluster file names each node by one line, ADDRESS,rank=RANK, as the
// rpd profiler's ChronoSync writes it:
//
//	# the cluster's hosts
//	10.0.0.1,rank=0
//	10.0.0.2,rank=1   # comments run to the end of a line
//
// The format has no scenario, ports, durations or keys: a cluster read from
// it runs [RPDScenario] (sync rounds under node 0, until stopped) on the
// default ports, unauthenticated.

// RPD's defaults: what a cluster read from an rpd file runs.
const (
	// RPDScenarioName is the name of an rpd cluster's scenario, which names
	// its run directories (runs/rpd-cluster-rank<N>).
	RPDScenarioName = "rpd-cluster"
	// RPDMeshMax is the most nodes an rpd cluster probes in a full mesh;
	// a larger one probes in a star around node 0, the reference.
	RPDMeshMax = 8
	// rpdMaxNodes bounds the ranks an rpd file may name.
	rpdMaxNodes = 4096
)

// rpdLineRE is one node's line of an rpd file, comment and blanks removed.
var rpdLineRE = regexp.MustCompile(`^(\S+?)\s*,\s*rank\s*=\s*(\S+)$`)

// rpdDetectRE is the start of an rpd file's first node line.
var rpdDetectRE = regexp.MustCompile(`^[^\s,]+\s*,\s*rank\s*=`)

// IsRPD reports whether a cluster file's data are in rpd's format:
// its first line that is neither blank nor a comment starts ADDRESS,rank=.
// Anything else is taken as the YAML of [File].
func IsRPD(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		line := rpdStrip(sc.Text())
		if line == "" {
			continue
		}
		return rpdDetectRE.MatchString(line)
	}
	return false
}

// rpdStrip removes a line's comment (from #) and surrounding blanks.
func rpdStrip(line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// ParseRPD parses rpd's cluster file (name is its name in errors):
// lines of ADDRESS,rank=RANK, blank lines and # comments. It returns the
// addresses by rank. The ranks must be 0..N-1 for the file's N nodes (two
// or more), each once; each address is a node's unicast address, checked
// and made canonical as the YAML format's are (an address of the
// unspecified, broadcast or multicast kind is refused; ::ffff:10.0.0.1 is
// 10.0.0.1; 10.0.0.1/24 also refuses the subnet's broadcast), and no two
// nodes' the same in any spelling. An error names the file and the line.
func ParseRPD(name string, data []byte) ([]netip.Addr, error) {
	type entry struct {
		line int
		text string
		addr netip.Addr
	}
	var entries []entry
	rankOf := map[int]entry{}
	addrOf := map[netip.Addr]entry{}
	var ranks []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := rpdStrip(sc.Text())
		if line == "" {
			continue
		}
		where := fmt.Sprintf("cluster %s:%d", name, n)
		m := rpdLineRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s: %q: expected ADDRESS,rank=RANK (like 10.0.0.1,rank=0), one node a line, or a # comment", where, line)
		}
		rank, err := strconv.Atoi(m[2])
		if err != nil || rank < 0 || rank >= rpdMaxNodes {
			return nil, fmt.Errorf("%s: %q: rank %q: expected a rank 0..%d", where, line, m[2], rpdMaxNodes-1)
		}
		if prev, dup := rankOf[rank]; dup {
			return nil, fmt.Errorf("%s: %q: rank %d is given already at line %d (%q): each rank names one node", where, line, rank, prev.line, prev.text)
		}
		ip, err := parseNodeAddr(m[1])
		if err != nil {
			return nil, fmt.Errorf("%s: node %d (%q): %w", where, rank, m[1], err)
		}
		e := entry{line: n, text: line, addr: ip}
		if prev, dup := addrOf[ip]; dup {
			return nil, fmt.Errorf("%s: node %d (%q): line %d (%q) has the address %s already: every node listens on the same ports, so each needs an address of its own",
				where, rank, m[1], prev.line, prev.text, ip)
		}
		rankOf[rank], addrOf[ip] = e, e
		entries = append(entries, e)
		ranks = append(ranks, rank)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if len(entries) < 2 {
		return nil, fmt.Errorf("cluster %s: %d nodes: expected two or more lines of ADDRESS,rank=RANK", name, len(entries))
	}
	out := make([]netip.Addr, len(entries))
	for i, r := range ranks {
		if r >= len(entries) {
			return nil, fmt.Errorf("cluster %s:%d: rank %d: the file names %d nodes, so their ranks are 0..%d, each once", name, entries[i].line, r, len(entries), len(entries)-1)
		}
		out[r] = entries[i].addr
	}
	return out, nil
}

// RPDScenario is the scenario of an rpd cluster of n nodes: sync rounds
// under node 0 (the master and reference), svm over 2 s windows with a pair
// every 1 ms per edge, in a full mesh up to [RPDMeshMax] nodes and a star
// around node 0 above; no clock is injected (the hosts' own clocks are
// measured). It runs until stopped (duration 0, SIGINT or SIGTERM).
func RPDScenario(n int) (*scenario.Scenario, error) {
	topo := "full_mesh"
	if n > RPDMeshMax {
		topo = "star"
	}
	text := fmt.Sprintf(`name: %s
description: The default scenario of a cluster read from rpd's ADDRESS,rank=RANK file.
seed: 1
duration: 0s
nodes: %d
topology: {kind: %s}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 1ms, window: 2s}
`, RPDScenarioName, n, topo)
	return scenario.ParseDataUntilStopped(RPDScenarioName+" (rpd defaults)", []byte(text))
}

// loadRPD is Load for rpd's format.
func loadRPD(path string, data []byte) (*Cluster, error) {
	addrs, err := ParseRPD(path, data)
	if err != nil {
		return nil, err
	}
	sc, err := RPDScenario(len(addrs))
	if err != nil {
		return nil, fmt.Errorf("cluster %s: the rpd format's default scenario: %w", path, err)
	}
	return &Cluster{Scenario: sc, ScenarioFile: path, Addresses: addrs, RPD: true}, nil
}

// Environment variables of rpd's ChronoSync, read by [Cluster.RankFromEnv].
const (
	// EnvRPDRank is this node's rank.
	EnvRPDRank = "RPDT_CLOCKSYNC_RANK"
	// EnvRPDAddr is this node's address: its rank is the one whose address
	// it is.
	EnvRPDAddr = "RPDT_CLOCKSYNC_IP"
)

// RankFromEnv returns this process's rank in c when no --rank is given, and
// where it came from: rpd's RPDT_CLOCKSYNC_RANK, else RPDT_CLOCKSYNC_IP (the
// rank whose address it is, in any spelling), else the MPI and Slurm
// variables of the package's [RankFromEnv]. When both RPDT variables are
// set they must name one node. The precedence is --rank > RPDT_* >
// OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID.
func (c *Cluster) RankFromEnv(getenv func(string) string) (rank int, source string, err error) {
	rank = -1
	if v := getenv(EnvRPDRank); v != "" {
		r, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || r < 0 || r >= len(c.Addresses) {
			return 0, "", fmt.Errorf("%s=%q: expected a rank 0..%d of the cluster's %d nodes", EnvRPDRank, v, len(c.Addresses)-1, len(c.Addresses))
		}
		rank, source = r, EnvRPDRank
	}
	if v := getenv(EnvRPDAddr); v != "" {
		ip, err := netip.ParseAddr(strings.TrimSpace(v))
		if err != nil {
			return 0, "", fmt.Errorf("%s=%q: expected this node's IP address: %w", EnvRPDAddr, v, err)
		}
		ip = ip.Unmap()
		r := -1
		for i, a := range c.Addresses {
			if a == ip {
				r = i
			}
		}
		switch {
		case r < 0:
			return 0, "", fmt.Errorf("%s=%q: no node of the cluster has the address %s (its addresses: %s)", EnvRPDAddr, v, ip, joinAddrs(c.Addresses))
		case rank >= 0 && r != rank:
			return 0, "", fmt.Errorf("%s=%d and %s=%q disagree: %s is node %d's address", EnvRPDRank, rank, EnvRPDAddr, v, ip, r)
		case rank < 0:
			rank, source = r, EnvRPDAddr
		}
	}
	if rank >= 0 {
		return rank, source, nil
	}
	rank, err = RankFromEnv(getenv)
	if err != nil {
		return 0, "", fmt.Errorf("%w, or set %s or %s", err, EnvRPDRank, EnvRPDAddr)
	}
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"} {
		if getenv(k) != "" {
			return rank, k, nil
		}
	}
	return rank, "", nil
}

// joinAddrs writes addresses as "a, b, c", the first 8 then a count.
func joinAddrs(addrs []netip.Addr) string {
	var parts []string
	for i, a := range addrs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(addrs)-8))
			break
		}
		parts = append(parts, a.String())
	}
	return strings.Join(parts, ", ")
}
