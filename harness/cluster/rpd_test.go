package cluster

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestParseRPD: rpd's ADDRESS,rank=RANK lines give the addresses by
// rank, with comments and blank lines, in any order; a repeated rank, one
// address in two spellings, a missing rank, a non-unicast address and a
// line of another form are refused, naming the file and line.
func TestParseRPD(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string // addresses by rank
		err        string   // substring of the error
	}{
		{name: "good", data: "# hosts\n10.0.0.1,rank=0\n\n10.0.0.2,rank=1 # second\n  10.0.0.3 , rank = 2\n",
			want: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}},
		{name: "any order, canonical", data: "::ffff:10.0.0.2,rank=1\n10.0.0.1/24,rank=0\nfe80::1%eth0,rank=2\n",
			want: []string{"10.0.0.1", "10.0.0.2", "fe80::1%eth0"}},
		{name: "duplicate rank", data: "10.0.0.1,rank=0\n10.0.0.2,rank=1\n10.0.0.3,rank=1\n",
			err: `c.rpd:3: "10.0.0.3,rank=1": rank 1 is given already at line 2 ("10.0.0.2,rank=1")`},
		{name: "duplicate address, two spellings", data: "10.0.0.1,rank=0\n# x\n::ffff:10.0.0.1,rank=1\n",
			err: `c.rpd:3: node 1 ("::ffff:10.0.0.1"): line 1 ("10.0.0.1,rank=0") has the address 10.0.0.1 already`},
		{name: "bad line", data: "10.0.0.1,rank=0\n10.0.0.2 rank 1\n",
			err: `c.rpd:2: "10.0.0.2 rank 1": expected ADDRESS,rank=RANK`},
		{name: "bad rank", data: "10.0.0.1,rank=0\n10.0.0.2,rank=one\n",
			err: `c.rpd:2: "10.0.0.2,rank=one": rank "one": expected a rank 0..4095`},
		{name: "rank gap", data: "10.0.0.1,rank=0\n10.0.0.2,rank=2\n",
			err: `c.rpd:2: rank 2: the file names 2 nodes, so their ranks are 0..1`},
		{name: "not an address", data: "10.0.0.1,rank=0\nhost-b,rank=1\n",
			err: `c.rpd:2: node 1 ("host-b"): expected an IP address`},
		{name: "broadcast", data: "10.0.0.1,rank=0\n10.0.0.255/24,rank=1\n",
			err: `c.rpd:2: node 1 ("10.0.0.255/24"): 10.0.0.255 is the broadcast address of the subnet 10.0.0.0/24`},
		{name: "unspecified", data: "0.0.0.0,rank=0\n10.0.0.2,rank=1\n",
			err: `c.rpd:1: node 0 ("0.0.0.0"): 0.0.0.0 is the unspecified address`},
		{name: "one node", data: "10.0.0.1,rank=0\n",
			err: `cluster c.rpd: 1 nodes: expected two or more lines`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRPD("c.rpd", []byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v\nwant it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []netip.Addr
			for _, s := range tc.want {
				want = append(want, netip.MustParseAddr(s))
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// TestIsRPD: the format is told apart by content; the YAML format,
// in block or flow style, with leading comments, is not rpd's.
func TestIsRPD(t *testing.T) {
	for _, tc := range []struct {
		data string
		rpd  bool
	}{
		{"10.0.0.1,rank=0\n", true},
		{"# c\n\n  fe80::1 ,rank=0\n", true},
		{"scenario: s.yaml\naddresses: [10.0.0.1, 10.0.0.2]\n", false},
		{"# rank=0\naddresses: [10.0.0.1,rank=0]\n", false},
		{"{scenario: s.yaml, addresses: [10.0.0.1, 10.0.0.2]}\n", false},
		{"", false},
	} {
		if got := IsRPD([]byte(tc.data)); got != tc.rpd {
			t.Errorf("IsRPD(%q) = %v, want %v", tc.data, got, tc.rpd)
		}
	}
}

// TestLoadRPD: Load reads an rpd file beside the YAML
// format: the addresses by rank, the default scenario of that many nodes
// (until stopped; a star above RPDMeshMax), no key.
func TestLoadRPD(t *testing.T) {
	for _, n := range []int{2, RPDMeshMax + 1} {
		dir := t.TempDir()
		var b strings.Builder
		for r := n - 1; r >= 0; r-- {
			b.WriteString(netip.AddrFrom4([4]byte{10, 1, 0, byte(r + 1)}).String() + ",rank=" + strconv.Itoa(r) + "\n")
		}
		path := filepath.Join(dir, "cluster.rpd")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !c.RPD || c.Key != nil || c.ScenarioFile != path || len(c.Addresses) != n || c.Addresses[0] != netip.MustParseAddr("10.1.0.1") {
			t.Errorf("n=%d: cluster %+v", n, c)
		}
		sc := c.Scenario
		wantTopo := "full_mesh"
		if n > RPDMeshMax {
			wantTopo = "star"
		}
		if sc.Name != RPDScenarioName || sc.Nodes != n || !sc.UntilStopped() || string(sc.Topology.Kind) != wantTopo {
			t.Errorf("n=%d: scenario %s, %d nodes, until stopped %v, topology %s; want %s, %d, true, %s",
				n, sc.Name, sc.Nodes, sc.UntilStopped(), sc.Topology.Kind, RPDScenarioName, n, wantTopo)
		}
	}
}

// TestRankFromEnvRPD: the rank of a node without --rank is
// RPDT_CLOCKSYNC_RANK, else the node whose address RPDT_CLOCKSYNC_IP is,
// else OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID; disagreeing RPDT
// variables, an address of no node and a rank out of range are errors.
func TestRankFromEnvRPD(t *testing.T) {
	c := &Cluster{Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")}}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		rank   int
		source string
		err    string
	}{
		{name: "rpd rank over mpi", env: map[string]string{"RPDT_CLOCKSYNC_RANK": "2", "OMPI_COMM_WORLD_RANK": "1"}, rank: 2, source: "RPDT_CLOCKSYNC_RANK"},
		{name: "rpd ip over slurm", env: map[string]string{"RPDT_CLOCKSYNC_IP": "::ffff:10.0.0.2", "SLURM_PROCID": "0"}, rank: 1, source: "RPDT_CLOCKSYNC_IP"},
		{name: "rpd both agree", env: map[string]string{"RPDT_CLOCKSYNC_IP": "10.0.0.3", "RPDT_CLOCKSYNC_RANK": "2"}, rank: 2, source: "RPDT_CLOCKSYNC_RANK"},
		{name: "rpd both disagree", env: map[string]string{"RPDT_CLOCKSYNC_IP": "10.0.0.3", "RPDT_CLOCKSYNC_RANK": "1"},
			err: `RPDT_CLOCKSYNC_RANK=1 and RPDT_CLOCKSYNC_IP="10.0.0.3" disagree: 10.0.0.3 is node 2's address`},
		{name: "rpd ip of no node", env: map[string]string{"RPDT_CLOCKSYNC_IP": "10.0.0.9"},
			err: `RPDT_CLOCKSYNC_IP="10.0.0.9": no node of the cluster has the address 10.0.0.9 (its addresses: 10.0.0.1, 10.0.0.2, 10.0.0.3)`},
		{name: "rpd rank out of range", env: map[string]string{"RPDT_CLOCKSYNC_RANK": "3"},
			err: `RPDT_CLOCKSYNC_RANK="3": expected a rank 0..2 of the cluster's 3 nodes`},
		{name: "mpi", env: map[string]string{"PMI_RANK": "1", "SLURM_PROCID": "2"}, rank: 1, source: "PMI_RANK"},
		{name: "none", env: map[string]string{}, err: "no rank: give --rank N, or launch with mpirun or srun (OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID), or set RPDT_CLOCKSYNC_RANK or RPDT_CLOCKSYNC_IP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rank, source, err := c.RankFromEnv(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || rank != tc.rank || source != tc.source {
				t.Errorf("got %d from %q (%v), want %d from %q", rank, source, err, tc.rank, tc.source)
			}
		})
	}
}

// TestDeployExamples: the example cluster files in deploy/ load, in both
// formats, and name the same four hosts.
func TestDeployExamples(t *testing.T) {
	var addrs [][]netip.Addr
	for _, f := range []string{"cluster.example.rpd", "cluster.example.yaml"} {
		c, err := Load(filepath.Join("..", "..", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		if !c.Scenario.UntilStopped() {
			t.Errorf("%s: the scenario does not run until stopped", f)
		}
		addrs = append(addrs, c.Addresses)
	}
	if !slices.Equal(addrs[0], addrs[1]) || len(addrs[0]) != 4 {
		t.Errorf("the examples' addresses differ: %v, %v", addrs[0], addrs[1])
	}
}
