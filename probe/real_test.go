package probe_test

import (
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/busy"
	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/world"
)

// TestT3FromTheKernel probes both ways between two nodes on the real
// backend for one window, with real2-idle's clocks (node 1 10 ms ahead and
// 50 ppm fast), on loopback and, where namespaces can be made, on one veth
// pair between two namespaces as real2-idle runs: nearly every probe's t3
// is the kernel's transmit timestamp of its reply, carried back by the next
// reply; each window's last probe keeps its user-space reading.
func TestT3FromTheKernel(t *testing.T) {
	clocks := []clockmodel.Params{{}, {Offset: 10 * time.Millisecond, PPM: 50}}
	t.Run("loopback", func(t *testing.T) {
		a, b := byte(1+rand.IntN(250)), byte(rand.IntN(256))
		cfg := real.Config{Seed: 1, Log: os.Stderr, LogLevel: 8, Serialize: true}
		for i, c := range clocks {
			cfg.Nodes = append(cfg.Nodes, real.NodeConfig{Clock: c, Addr: netip.AddrFrom4([4]byte{127, a, b, byte(i + 1)})})
		}
		checkT3(t, cfg)
	})
	t.Run("netns", func(t *testing.T) {
		needs.Available(t, netlab.Available())
		lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: 2, Kind: netlab.Direct})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := lab.Close(); err != nil {
				t.Error(err)
			}
		}()
		cfg := real.Config{Seed: 1, Log: os.Stderr, LogLevel: 8, Serialize: true}
		for i, c := range clocks {
			cfg.Nodes = append(cfg.Nodes, real.NodeConfig{Clock: c, Addr: lab.Addr(i),
				Enter: func(f func() error) error { return lab.Do(i, f) }})
		}
		checkT3(t, cfg)
	})
}

// windowResult is what one node's prober handed over.
type windowResult struct {
	node   world.NodeID
	blocks []probelog.Block
	stats  probe.Stats
}

// checkT3 runs a 400 ms window of 1 ms pairs on both nodes of cfg and
// checks where the probes' t3 came from.
func checkT3(t *testing.T, cfg real.Config) {
	t.Helper()
	meter := busy.Start()
	w, err := real.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan windowResult, len(cfg.Nodes))
	err = w.Start(func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			p, err := probe.New(env, env.Peers(), time.Millisecond)
			if err != nil {
				return err
			}
			env.AfterFunc(50*time.Millisecond, func() {
				p.Open(1, 1)
				env.AfterFunc(400*time.Millisecond, func() {
					results <- windowResult{node: id, blocks: p.Close(), stats: p.Stats()}
				})
			})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []windowResult
	for timeout := time.After(20 * time.Second); len(got) < len(cfg.Nodes); {
		select {
		case r := <-results:
			got = append(got, r)
		case <-timeout:
			t.Errorf("%d of %d windows closed within 20s", len(got), len(cfg.Nodes))
		}
		if t.Failed() {
			break
		}
	}
	// Both windows are closed: what the nodes still answer does not
	// matter.
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	mostlyKernel := true
	for _, r := range got {
		if len(r.blocks) != 1 {
			t.Fatalf("node %d: %d blocks, want 1", r.node, len(r.blocks))
		}
		b := r.blocks[0]
		n := len(b.Probes)
		if n < 100 {
			t.Errorf("node %d→%d: %d probes answered of %d pairs sent, want at least 100", b.Src, b.Dst, n, b.SentPairs)
			continue
		}
		var kernel int
		var turn []int64
		for _, p := range b.Probes {
			switch p.T3Source {
			case estimate.T3Kernel:
				kernel++
				turn = append(turn, p.T3-p.T2)
				if p.T3 <= p.T2 {
					t.Errorf("node %d→%d pair %d slot %d: kernel t3 %d not after t2 %d", b.Src, b.Dst, p.Pair, p.Slot, p.T3, p.T2)
				}
			case estimate.T3User:
			default:
				t.Errorf("node %d→%d pair %d slot %d: t3 source %v", b.Src, b.Dst, p.Pair, p.Slot, p.T3Source)
			}
		}
		if last := b.Probes[n-1]; last.T3Source != estimate.T3User {
			t.Errorf("node %d→%d: the window's last probe has t3 source %v, want user (nothing carries its timestamp)", b.Src, b.Dst, last.T3Source)
		}
		if st := r.stats; st.T3Kernel != kernel || st.T3User != n-kernel {
			t.Errorf("node %d: stats T3Kernel %d, T3User %d; the block has %d and %d", r.node, st.T3Kernel, st.T3User, kernel, n-kernel)
		}
		slices.Sort(turn)
		median := int64(0)
		if len(turn) > 0 {
			median = turn[len(turn)/2]
		}
		t.Logf("node %d→%d: %d probes, t3 from the kernel for %d (%.1f%%), median turnaround t3−t2 %v",
			b.Src, b.Dst, n, kernel, 100*float64(kernel)/float64(n), time.Duration(median))
		if kernel < n*9/10 {
			mostlyKernel = false
		}
	}
	if !mostlyKernel {
		meter.SkipIfBusy(t, "t3 from the kernel for fewer than 90% of the probes (tsudp waits 2 ms for a transmit timestamp)")
		t.Error("t3 from the kernel for fewer than 90% of the probes")
	}
}
