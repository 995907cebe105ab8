package cluster

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/real"
)

// cluster2 is a two-node sync cluster.
const cluster2 = `name: cluster2
duration: 3s
nodes: 2
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}
`

// writeCluster writes the two-node scenario and a cluster file with the
// given addresses: line (as written) into a new directory, and returns the
// cluster file's path.
func writeCluster(t *testing.T, addresses string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cluster2), 0o644); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cf, []byte("scenario: c.yaml\naddresses:\n"+addresses), 0o644); err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestClusterAddressesUnicast: a cluster file's addresses are each one
// node's unicast address. The unspecified address (with which the master
// failed to start and rank 1 ran 6 s with no round and said ok), the
// broadcast address, a subnet's broadcast (given a prefix length) and
// multicast addresses are refused, the error naming the file, the line,
// the node and the field, and saying which kind of address it is; in any
// spelling (::ffff:0.0.0.0). Unicast addresses, with or without a prefix
// length, load in their canonical form.
func TestClusterAddressesUnicast(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" for accepted
	}{
		{"0.0.0.0", "0.0.0.0 is the unspecified address"},
		{"::", ":: is the unspecified address"},
		{"::ffff:0.0.0.0", "0.0.0.0 is the unspecified address"},
		{"255.255.255.255", "255.255.255.255 is the broadcast address"},
		{"10.1.2.255/24", "10.1.2.255 is the broadcast address of the subnet 10.1.2.0/24"},
		{"10.1.2.3/30", "10.1.2.3 is the broadcast address of the subnet 10.1.2.0/30"},
		{"224.0.0.1", "224.0.0.1 is a multicast address"},
		{"239.1.2.3", "239.1.2.3 is a multicast address"},
		{"ff02::1", "ff02::1 is a multicast address"},
		{"not-an-address", "expected an IP address"},
		{"10.1.2.3/33", "expected an IP address, optionally with its subnet's prefix length"},
		{"10.1.2.254/24", ""},
		{"10.1.2.255/23", ""}, // a host of 10.1.2.0/23
		{"10.1.2.3/31", ""},   // a point-to-point link has no broadcast
		{"::ffff:10.9.8.7", ""},
		{"2001:db8::1", ""},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			cf := writeCluster(t, "  - 127.0.0.1\n  - \""+tc.addr+"\"\n")
			c, err := Load(cf)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s refused: %v", tc.addr, err)
				}
				want := strings.TrimPrefix(strings.Split(tc.addr, "/")[0], "::ffff:")
				if got := c.Addresses[1].String(); got != want {
					t.Errorf("node 1's address %s, want %s (canonical)", got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s accepted as node 1's address", tc.addr)
			}
			for _, part := range []string{cf + ":4: node 1 (addresses[1] \"" + tc.addr + "\")", tc.want} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("err = %v\nwant it to say %q", err, part)
				}
			}
		})
	}
	// The real world refuses them too, for callers that build a cluster
	// without a file.
	for _, a := range []string{"0.0.0.0", "255.255.255.255", "224.0.0.1", "ff02::1"} {
		_, err := real.New(real.Config{Nodes: []real.NodeConfig{{Addr: netip.MustParseAddr("127.0.0.1")}, {Addr: netip.MustParseAddr(a)}}})
		if err == nil || !strings.Contains(err.Error(), "real: node 1: "+a+" is ") {
			t.Errorf("real.New with node 1 at %s: err = %v", a, err)
		}
	}
}

// TestClusterAddressDuplicateSpellings: one address written twice in two
// spellings (127.0.0.1 and ::ffff:127.0.0.1, which the kernel reports
// alike) is refused, naming both nodes, their lines and the address.
func TestClusterAddressDuplicateSpellings(t *testing.T) {
	for _, tc := range []struct{ a, b, addr string }{
		{"127.0.0.1", "::ffff:127.0.0.1", "127.0.0.1"},
		{"::ffff:127.0.0.1", "127.0.0.1", "127.0.0.1"},
		{"127.0.0.1", "127.0.0.1/8", "127.0.0.1"},
		{"::1", "0:0:0:0:0:0:0:1", "::1"},
	} {
		t.Run(tc.a+","+tc.b, func(t *testing.T) {
			cf := writeCluster(t, "  - \""+tc.a+"\"\n  - \""+tc.b+"\"\n")
			_, err := Load(cf)
			if err == nil {
				t.Fatalf("%s and %s accepted as two nodes' addresses", tc.a, tc.b)
			}
			want := fmt.Sprintf("%s:4: node 1 (addresses[1] %q): node 0 (addresses[0] %q, line 3) has the address %s already",
				cf, tc.b, tc.a, tc.addr)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant %q", err, want)
			}
		})
	}
	// The real world compares canonical addresses too.
	_, err := real.New(real.Config{Nodes: []real.NodeConfig{
		{Addr: netip.MustParseAddr("127.0.0.1")}, {Addr: netip.MustParseAddr("::ffff:127.0.0.1")},
	}})
	if err == nil || !strings.Contains(err.Error(), "nodes 0 and 1 share the address 127.0.0.1") {
		t.Errorf("real.New with 127.0.0.1 and ::ffff:127.0.0.1: err = %v", err)
	}
}
