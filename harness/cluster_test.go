package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/scenario"
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

// sendGarbage sends 50 datagrams that are no probe, from node 1's address
// to node 0's probe port.
func sendGarbage(t *testing.T, addrs []netip.Addr) {
	t.Helper()
	g, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[1], 0)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[0], probe.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := range 50 {
		g.Write([]byte(strings.Repeat("garbage", i+1)))
	}
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
		sendGarbage(t, addrs)
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

// TestClusterEstimateRanks runs a two-rank cluster on loopback, node 1
// injected 1 ms off: the master's own run has truth for the reference
// alone (node 1 is named, its errors unknown, never zeros), and merging
// rank 1's run directory measures what the master exported on node 1 too,
// with its calibration.
func TestClusterEstimateRanks(t *testing.T) {
	c, addrs := loopbackCluster(t)
	sc := *c.Scenario
	sc.Duration = 6 * time.Second // rounds from converged_from (3) on
	sc.Clocks.Nodes = []scenario.NodeClock{{Node: 1, ClockSpec: scenario.ClockSpec{Offset: scenario.Fixed(time.Millisecond)}}}
	dirs := []string{filepath.Join(t.TempDir(), "rank0"), filepath.Join(t.TempDir(), "rank1")}
	errs := make(chan error, 2)
	for rank := range 2 {
		go func() {
			_, err := Run(&sc, Options{Out: dirs[rank], Backend: "real", Context: context.Background(),
				Cluster: &ClusterNode{Addresses: addrs, Rank: rank}})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	alone, err := Estimate(dirs[0], EstimateOptions{NoWrite: true, Estimators: []estimate.Kind{estimate.SVM}})
	if err != nil {
		t.Fatal(err)
	}
	if a := alone[0].Accuracy; a == nil || !slices.Equal(a.NoTruth, []int{1}) || a.OffsetError.N != 0 {
		t.Errorf("master's run alone: accuracy %+v; want node 1 without truth and no error counted", a)
	}
	merged, err := Estimate(dirs[0], EstimateOptions{NoWrite: true, Estimators: []estimate.Kind{estimate.SVM}, Ranks: dirs[1:]})
	if err != nil {
		t.Fatal(err)
	}
	ex := merged[0]
	t.Logf("%s: |error| p50 %.0f p99 %.0f max %.0f ns; calibration %+v", ex.Estimator, ex.Accuracy.OffsetError.P50, ex.Accuracy.OffsetError.P99, ex.Accuracy.OffsetError.Max, ex.Calibration)
	if a := ex.Accuracy; len(a.NoTruth) != 0 || a.OffsetError.N == 0 || a.OffsetError.Max > 1000 {
		t.Errorf("merged: accuracy %+v; want node 1 measured, every error under 1 µs", a)
	}
	if cal := ex.Calibration; cal == nil || cal.Points == 0 {
		t.Errorf("merged: calibration %+v; want node-round points", cal)
	}
}

// TestClusterKey: a cluster file's key: line names a key file beside it,
// which must be the owner's only; with the key, garbage sent from a node's
// address to the probe port is dropped as forged before any decoder sees
// it (none is counted malformed), and the run still syncs.
func TestClusterKey(t *testing.T) {
	c, addrs := loopbackCluster(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cluster2), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster := func(key string, mode os.FileMode) (*Cluster, error) {
		if err := os.WriteFile(filepath.Join(dir, "k.key"), []byte(key), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "k.key"), mode); err != nil {
			t.Fatal(err)
		}
		cf := filepath.Join(dir, "cluster.yaml")
		text := fmt.Sprintf("scenario: c.yaml\naddresses: [%s, %s]\nkey: k.key\n", addrs[0], addrs[1])
		if err := os.WriteFile(cf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadCluster(cf)
	}
	good := strings.Repeat("5a", 32) + "\n"
	if _, err := cluster(good, 0o644); err == nil || !strings.Contains(err.Error(), "k.key is readable by others") {
		t.Errorf("a key file others may read: err %v", err)
	}
	if _, err := cluster("5a5a", 0o600); err == nil || !strings.Contains(err.Error(), "key of 2 bytes") {
		t.Errorf("a short key: err %v", err)
	}
	keyed, err := cluster(good, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if keyed.Key == nil || c.Key != nil {
		t.Fatalf("key loaded: with a key: line %v, without %v", keyed.Key != nil, c.Key != nil)
	}

	results := make(chan *Result, 2)
	errs := make(chan error, 2)
	for rank := range 2 {
		go func() {
			res, err := Run(keyed.Scenario, Options{Out: filepath.Join(t.TempDir(), "r"), Backend: "real", Context: context.Background(),
				Cluster: &ClusterNode{Addresses: addrs, Rank: rank}, Key: keyed.Key})
			results <- res
			errs <- err
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	sendGarbage(t, addrs)
	forged := uint64(0)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		res := <-results
		s := res.Summary
		if !s.Real.Authenticated {
			t.Errorf("rank %d: not authenticated", *s.Real.Rank)
		}
		if s.Sync == nil || s.Sync.Probes.Malformed != 0 {
			t.Errorf("rank %d: sync %+v; want no datagram counted malformed", *s.Real.Rank, s.Sync)
		}
		if *s.Real.Rank == 0 && s.Sync.Rounds == 0 {
			t.Error("the master ran no round")
		}
		forged += s.Network.Dropped["auth_forged"]
	}
	t.Logf("%d of 50 garbage datagrams dropped as forged", forged)
	if forged < 1 || forged > 50 {
		t.Errorf("auth_forged = %d, want the garbage datagrams (up to 50)", forged)
	}
}
