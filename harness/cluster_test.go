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
	"sync/atomic"
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

// TestNodeNeverSawRound: rank 1 of a cluster whose master never runs
// (as when the master's 0.0.0.0 made it fail to start) ran 6 s with 0
// rounds and 0 probes and said `status: ok`. It is failed now, saying
// why and naming the master's address, and its run directory is still
// written.
func TestNodeNeverSawRound(t *testing.T) {
	c, addrs := loopbackCluster(t)
	sc := *c.Scenario
	sc.Duration = time.Second
	sc.Protocol.Sync.Window = 100 * time.Millisecond
	out := filepath.Join(t.TempDir(), "rank1")
	res, err := Run(&sc, Options{Out: out, Backend: "real", Context: context.Background(),
		Cluster: &ClusterNode{Addresses: addrs, Rank: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Sync == nil || s.Sync.Rounds != 0 || s.Sync.WindowsClosed != 0 || s.Sync.Probes.PairsSent != 0 {
		t.Fatalf("rank 1 without a master: sync %+v; want no round, no window, no probe", s.Sync)
	}
	if s.Status != StatusFailed {
		t.Errorf("status %q, want %q", s.Status, StatusFailed)
	}
	want := fmt.Sprintf("no round started in 1s (master unreachable? node 0 at %s)", addrs[0])
	if s.StatusReason != want {
		t.Errorf("status reason %q, want %q", s.StatusReason, want)
	}
	var b strings.Builder
	res.Print(&b)
	if !strings.Contains(b.String(), "status: failed: "+want+"\n") || strings.Contains(b.String(), "status: ok") {
		t.Errorf("printed summary does not end failed:\n%s", b.String())
	}
	if _, err := os.Stat(filepath.Join(out, FileSummary)); err != nil {
		t.Errorf("no summary written: %v", err)
	}
}

// runCluster2 runs both ranks of a two-node loopback cluster in this
// process while during runs beside them (from 1.5 s on), and returns
// their results by rank.
func runCluster2(t *testing.T, c *Cluster, addrs []netip.Addr, during func()) [2]*Result {
	t.Helper()
	var results [2]*Result
	errs := make(chan error, 2)
	for rank := range 2 {
		go func() {
			res, err := Run(c.Scenario, Options{Out: filepath.Join(t.TempDir(), "r"), Backend: "real", Context: context.Background(),
				Cluster: &ClusterNode{Addresses: addrs, Rank: rank}})
			results[rank] = res
			errs <- err
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	during()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return results
}

// TestNonNodeDatagramsSummary: 1,000 datagrams from a loopback address
// that is no node's, to rank 1's probe port, marked the run degraded with
// `69300.0 % > 0.1 % (693 of 0 sent)`: counted with the run's own drops
// and judged against the datagrams sent on links that a cluster does not
// count. They are their own reason now (`dropped: not_a_node`), outside
// the run's own drops, which are judged against the datagrams received
// from the nodes; no percentage is printed over zero.
func TestNonNodeDatagramsSummary(t *testing.T) {
	c, addrs := loopbackCluster(t)
	stranger := addrs[1].Next() // 127.77.a.3: loopback, no node's
	const sent = 1000
	results := runCluster2(t, c, addrs, func() {
		g, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(stranger, 0)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[1], probe.Port)))
		if err != nil {
			t.Error(err)
			return
		}
		defer g.Close()
		for i := range sent {
			g.Write([]byte(strings.Repeat("x", 1+i%72)))
		}
	})
	s := results[1].Summary
	var b strings.Builder
	results[1].Print(&b)
	printed := b.String()
	t.Logf("rank 1: dropped %v; status %s", s.Network.Dropped, s.Status)
	if n := s.Network.Dropped["not_a_node"]; n < 1 || n > sent {
		t.Errorf("not_a_node = %d, want the stranger's datagrams (up to %d)", n, sent)
	}
	if !strings.Contains(printed, "dropped: not_a_node ") {
		t.Errorf("the dropped: line does not say not_a_node:\n%s", printed)
	}
	for _, c := range s.Conditions {
		if c.Name == "datagrams dropped by our own processes" && c.Over {
			t.Errorf("the stranger's datagrams counted as the run's own: %s", c)
		}
	}
	if s.Sync == nil || s.Sync.Probes.Malformed != 0 || len(s.Sync.Probes.Rejected) != 0 {
		t.Errorf("the stranger's datagrams reached the prober: %+v", s.Sync)
	}
	for _, line := range strings.Split(printed, "\n") {
		if strings.Contains(line, "of 0 ") && strings.Contains(line, "%") {
			t.Errorf("a percentage over zero: %s", line)
		}
	}
}

// probeDatagram is a probe request (kind 1) or reply (kind 2) as package
// probe encodes them: magic "CS", version 2, kind, window, pair, slot; a
// reply's t2 and t3 are 0 (a plausible exchange: t3 ≥ t2).
func probeDatagram(kind byte, header []byte) []byte {
	b := make([]byte, probe.PacketSize)
	copy(b, []byte{'C', 'S', 2, kind})
	copy(b[4:17], header)
	return b
}

// TestUnkeyedReplayCounted: in an unkeyed cluster a datagram replayed
// from a node's own address and port passes the address check, and was
// counted nowhere. Here the test is node 1 of a two-node cluster: it
// answers each of the master's probe requests and sends the reply again,
// and sends one request of its own twice. The master counts the second
// replies as duplicate and the request answered again as replayed, in
// summary.json and the printed summary.
func TestUnkeyedReplayCounted(t *testing.T) {
	c, addrs := loopbackCluster(t)
	sc := *c.Scenario
	sc.Duration = 2 * time.Second
	sc.Protocol.Sync.Window = 500 * time.Millisecond
	sock, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[1], probe.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	master := net.UDPAddrFromAddrPort(netip.AddrPortFrom(addrs[0], probe.Port))
	var replied, requested atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, _, err := sock.ReadFromUDP(buf)
			if err != nil {
				return
			}
			switch {
			case n == probe.PacketSize && buf[3] == 1 && replied.Load() < 10: // the master's request
				reply := probeDatagram(2, buf[4:17])
				sock.WriteToUDP(reply, master)
				sock.WriteToUDP(reply, master) // replayed
				replied.Add(1)
				if replied.Load() == 1 {
					req := probeDatagram(1, []byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 3, 1}) // window 9, pair 3, slot 1
					sock.WriteToUDP(req, master)
					sock.WriteToUDP(req, master) // replayed
					requested.Add(1)
				}
			}
		}
	}()
	res, err := Run(&sc, Options{Out: filepath.Join(t.TempDir(), "rank0"), Backend: "real", Context: context.Background(),
		Cluster: &ClusterNode{Addresses: addrs, Rank: 0}})
	sock.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if replied.Load() == 0 || requested.Load() == 0 {
		t.Fatalf("the master sent node 1 no probe request (%d replied)", replied.Load())
	}
	s := res.Summary
	t.Logf("%d requests answered twice; master's probes %+v; authenticated %v", replied.Load(), s.Sync.Probes, s.Real.Authenticated)
	if s.Real.Authenticated {
		t.Fatal("the cluster is keyed")
	}
	rej := s.Sync.Probes.Rejected
	if rej["replayed"] != 1 {
		t.Errorf("replayed = %d, want the one request sent twice", rej["replayed"])
	}
	// Each second reply is a duplicate while its window is open; one
	// answering the window's last probe may come after it closed (late).
	if d := rej["duplicate"]; d < 1 || int64(d) > replied.Load() {
		t.Errorf("duplicate = %d, want the replies sent twice (%d)", d, replied.Load())
	}
	var b strings.Builder
	res.Print(&b)
	if !strings.Contains(b.String(), " replayed 1") || !strings.Contains(b.String(), " duplicate ") {
		t.Errorf("the printed summary does not count them:\n%s", b.String())
	}
}
