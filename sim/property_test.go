package sim_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// genConfig draws a small world with lossy, jittery, duplicating,
// corrupting links, drifting clocks and a few faults.
func genConfig(t *rapid.T) sim.Config {
	n := rapid.IntRange(2, 5).Draw(t, "nodes")
	cfg := sim.Config{Seed: rapid.Uint64().Draw(t, "seed")}
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{Clock: clockmodel.Params{
			Offset:    time.Duration(rapid.Int64Range(-1e6, 1e6).Draw(t, "offset")),
			PPM:       rapid.Float64Range(-100, 100).Draw(t, "ppm"),
			ReadNoise: time.Duration(rapid.Int64Range(0, 50).Draw(t, "noise")),
		}})
		for j := range n {
			if i == j {
				continue
			}
			delay := time.Duration(rapid.Int64Range(0, 1e6).Draw(t, "delay"))
			cfg.Links = append(cfg.Links, sim.LinkConfig{From: i, To: j, Params: netem.Params{
				Delay:     delay,
				Jitter:    time.Duration(rapid.Int64Range(0, int64(delay)).Draw(t, "jitter")),
				Loss:      netem.Loss{Model: netem.LossRandom, Probability: rapid.Float64Range(0, 0.2).Draw(t, "loss")},
				Duplicate: rapid.Float64Range(0, 0.1).Draw(t, "dup"),
				Corrupt:   rapid.Float64Range(0, 0.05).Draw(t, "corrupt"),
			}})
		}
	}
	if rapid.Bool().Draw(t, "crash") {
		cfg.Faults = append(cfg.Faults, sim.Fault{At: 200 * ms, Kind: sim.Crash, Node: rapid.IntRange(0, n-1).Draw(t, "crashed"), RestartAfter: 100 * ms})
	}
	if rapid.Bool().Draw(t, "partition") {
		cfg.Faults = append(cfg.Faults, sim.Fault{At: 300 * ms, Kind: sim.Partition, Groups: [][]int{{0}}, HealAfter: 100 * ms})
	}
	if rapid.Bool().Draw(t, "flap") {
		cfg.Faults = append(cfg.Faults, sim.Fault{At: 100 * ms, Kind: sim.LinkFlap, From: 0, To: 1, Both: true, Down: 30 * ms, Up: 30 * ms, Count: 3})
	}
	return cfg
}

// TestPropertyDeterministicAndConserving: any world runs the same twice,
// and every datagram sent is accounted for: sent + duplicated copies ==
// delivered + dropped (for a stated reason).
func TestPropertyDeterministicAndConserving(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		run := func() (*sim.Sim, string) {
			var buf bytes.Buffer
			// Sending stops at 790ms, so nothing is in flight at the end.
			s, err := sim.New(cfg, pinger{period: 10 * ms, until: 790 * ms}.program, sim.Options{EventLog: &buf})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(2 * time.Second)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			return s, buf.String()
		}
		s1, log1 := run()
		s2, log2 := run()
		if s1.Hash() != s2.Hash() || log1 != log2 {
			t.Fatalf("same config, two runs: hashes %x and %x", s1.Hash(), s2.Hash())
		}
		count := map[string]int{}
		for _, l := range strings.Split(log1, "\n") {
			if f := strings.Fields(l); len(f) > 2 {
				count[f[2]]++
			}
		}
		var dup uint64
		for from := range s1.Nodes() {
			for to := range s1.Nodes() {
				if st, ok := s1.LinkStats(world.NodeID(from), world.NodeID(to)); ok {
					dup += st.Duplicated
				}
			}
		}
		if got, want := count["recv"]+count["drop"], count["send"]+int(dup); got != want {
			t.Fatalf("%d delivered + %d dropped != %d sent + %d duplicated", count["recv"], count["drop"], count["send"], dup)
		}
	})
}

// TestAddingANodeShiftsNoOtherDraws: with named random streams, a third
// node (and its links) leaves the jitter drawn on the link 0→1 untouched:
// every datagram 0→1 arrives at the same true time. (Receive timestamps
// may differ by read noise: node 1 reads its clock more often with three
// nodes, and each read draws noise from that clock's stream.)
func TestAddingANodeShiftsNoOtherDraws(t *testing.T) {
	recvs := func(n int) []string {
		cfg := mesh(n, 100*time.Microsecond)
		for i := range cfg.Links {
			cfg.Links[i].Params.Jitter = 50 * time.Microsecond
		}
		for i := range cfg.Nodes {
			cfg.Nodes[i].Clock = clockmodel.Params{PPM: float64(10 * i), ReadNoise: 20}
		}
		_, lines := logged(t, cfg, pinger{period: 10 * ms}.program, 500*ms)
		var out []string
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 4 && f[2] == "recv" && f[3] == "n=1" && f[4] == "from=0" {
				out = append(out, f[1]) // the true arrival time
			}
		}
		return out
	}
	two, three := recvs(2), recvs(3)
	if len(two) < 40 || strings.Join(two, " ") != strings.Join(three, " ") {
		t.Fatalf("0→1 arrival times differ when a node is added:\n2 nodes: %v\n3 nodes: %v", two, three)
	}
}
