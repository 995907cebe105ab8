package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/probe"
)

// cluster2 is a two-node sync cluster on loopback (no namespaces, no root).
const cluster2 = `name: cluster2
duration: 3s
nodes: 2
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}
`

func loopbackCluster(t *testing.T) (*Cluster, []netip.Addr) {
	t.Helper()
	dir := t.TempDir()
	a := byte(time.Now().UnixNano()%200 + 20)
	addrs := []netip.Addr{netip.AddrFrom4([4]byte{127, 77, a, 1}), netip.AddrFrom4([4]byte{127, 77, a, 2})}
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cluster2), 0o644); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cf, []byte(fmt.Sprintf("scenario: c.yaml\naddresses: [%s, %s]\n", addrs[0], addrs[1])), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCluster(cf)
	if err != nil {
		t.Fatal(err)
	}
	return c, addrs
}

// TestClusterBadInput: a node whose address is not this host's, or whose
// probe port is taken, fails with a clear error; garbage sent to the probe
// port is dropped and counted, never fatal.
func TestClusterBadInput(t *testing.T) {
	c, addrs := loopbackCluster(t)
	run := func(rank int, addrs []netip.Addr) (*Result, error) {
		return Run(c.Scenario, Options{Out: filepath.Join(t.TempDir(), "r"), Backend: "real", Context: context.Background(),
			Cluster: &ClusterNode{Addresses: addrs, Rank: rank}})
	}

	t.Run("address not this host's", func(t *testing.T) {
		foreign := []netip.Addr{addrs[0], netip.MustParseAddr("192.0.2.1")} // TEST-NET-1
		_, err := run(1, foreign)
		if err == nil || !strings.Contains(err.Error(), "node 1: start") || !strings.Contains(err.Error(), "192.0.2.1") {
			t.Fatalf("err = %v, want a start error naming 192.0.2.1", err)
		}
	})

	t.Run("port in use", func(t *testing.T) {
		busy, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[0], probe.Port)))
		if err != nil {
			t.Skip("cannot hold the probe port:", err)
		}
		defer busy.Close()
		_, err = run(0, addrs)
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("err = %v, want address already in use", err)
		}
	})

	t.Run("garbage to the probe port", func(t *testing.T) {
		results := make(chan *Result, 2)
		errs := make(chan error, 2)
		for rank := range 2 {
			go func() {
				res, err := run(rank, addrs)
				results <- res
				errs <- err
			}()
		}
		time.Sleep(1500 * time.Millisecond)
		g, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[1], 0)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[0], probe.Port)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			g.Write([]byte(strings.Repeat("garbage", i+1)))
		}
		g.Close()
		malformed := 0
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if res := <-results; res.Summary.Sync != nil {
				malformed += res.Summary.Sync.Probes.Malformed
			}
		}
		// Loopback does not lose datagrams, but a loaded machine may start
		// node 0's socket after the first ones arrive.
		t.Logf("%d of 50 garbage datagrams counted as malformed", malformed)
		if malformed < 1 || malformed > 50 {
			t.Errorf("malformed = %d, want the garbage datagrams (up to 50) counted", malformed)
		}
	})
}
