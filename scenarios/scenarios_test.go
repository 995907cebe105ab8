package scenarios

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/scenario"
)

// TestLibrary parses and resolves every file in the library.
func TestLibrary(t *testing.T) {
	files, err := fs.Glob(FS(), "*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("library files %v, %v; want at least 5", files, err)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			name := strings.TrimSuffix(file, ".yaml")
			s, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Errorf("name %q in %s; want the file's name %q", s.Name, file, name)
			}
			if s.Description == "" {
				t.Errorf("%s has no description", file)
			}
			r, err := s.Resolve(s.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Nodes) != s.Nodes || len(r.Edges) == 0 {
				t.Errorf("resolved %d nodes, %d edges", len(r.Nodes), len(r.Edges))
			}
		})
	}
}

// TestLibraryContents pins what other packages and docs rely on.
func TestLibraryContents(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		edges    int
		duration time.Duration
		interval time.Duration // ping only
		faults   int
		mode     scenario.SyncMode // sync only
		rounds   int
	}{
		{"quickstart", 4, 12, 10 * time.Second, 100 * time.Millisecond, 0, "", 0},
		{"mesh8-jitter", 8, 56, 45 * time.Second, 0, 0, scenario.SyncRounds, 10},
		{"mesh8-consensus", 8, 56, 85 * time.Second, 0, 0, scenario.SyncConsensus, 20},
		{"ring32-faults", 32, 64, 60 * time.Second, 0, 5, scenario.SyncRounds, 0},
		{"asym-queueing", 8, 56, 45 * time.Second, 0, 0, scenario.SyncRounds, 10},
		{"bench1000", 1000, 4000, 60 * time.Second, time.Second, 0, "", 0},
		{"phasegap4", 4, 8, 10 * time.Second, 0, 0, "", 0},
	}
	for _, tt := range tests {
		s, err := Load(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Nodes) != tt.nodes || len(r.Edges) != tt.edges || r.Duration != tt.duration ||
			r.Protocol.Interval != tt.interval || len(r.Faults) != tt.faults || r.Seed != 1 ||
			r.Protocol.Sync.Mode != tt.mode || r.Protocol.Sync.Rounds != tt.rounds {
			t.Errorf("%s: %d nodes, %d edges, %v, ping every %v, %d faults, seed %d; want %+v",
				tt.name, len(r.Nodes), len(r.Edges), r.Duration, r.Protocol.Interval, len(r.Faults), r.Seed, tt)
		}
	}

}

// TestSyncScenariosAsIssued pins mesh8-jitter and asym-queueing to the
// figures the sync-protocol issue gives for them.
func TestSyncScenariosAsIssued(t *testing.T) {
	for _, name := range []string{"mesh8-jitter", "mesh8-consensus", "asym-queueing"} {
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		sy := r.Protocol.Sync
		if r.Protocol.Kind != scenario.ProtocolSync || sy.Window != 4*time.Second || sy.Cadence != 800*time.Microsecond || sy.Estimator != "svm" {
			t.Errorf("%s: protocol %+v; want sync, svm, 4s windows, 800us cadence", name, r.Protocol)
		}
		for _, n := range r.Nodes {
			c := n.Clock
			if c.Offset.Abs() > 50*time.Millisecond || math.Abs(c.PPM) > 200 || c.WanderPPM != 0.01 ||
				c.WanderStep != time.Second || c.ReadNoise != 50*time.Nanosecond {
				t.Errorf("%s: node %d clock %+v", name, n.ID, c)
			}
		}
		for _, e := range r.Edges {
			l := e.Link
			queued := l.Cross.Kind != ""
			switch name {
			case "asym-queueing":
				ok := l.Delay == 20*time.Microsecond && l.Jitter == 5*time.Microsecond && l.Distribution == netem.Normal &&
					l.Rate.BitsPerSecond == 1e9 && queued == (e.From < e.To)
				if queued {
					ok = ok && l.Cross.Load == 0.7 && l.Cross.PacketSize == 1500
				}
				if !ok {
					t.Errorf("%s: %d->%d link %+v; want 1gbit, 20us, 5us normal, cross traffic only when from < to", name, e.From, e.To, l)
				}
			default:
				if l.Delay != 20*time.Microsecond || l.Jitter != 30*time.Microsecond || l.Distribution != netem.Pareto ||
					l.Loss.Model != netem.LossRandom || l.Loss.Probability != 0.005 || queued {
					t.Errorf("%s: %d->%d link %+v; want 20us, 30us pareto, 0.5%% loss", name, e.From, e.To, l)
				}
			}
		}
	}
}

// TestPhasegap4 pins phasegap4: PhaseGap's halo exchange alone (protocol
// none) on a ring of four, ideal links but for a 20us delay.
func TestPhasegap4(t *testing.T) {
	s, err := Load("phasegap4")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Workload.Phasegap
	if r.Workload.Kind != scenario.WorkloadPhasegap || r.Protocol.Kind != scenario.ProtocolNone ||
		r.Topology.Kind != scenario.Ring || p.Mode != "phase_nb" || p.Threads != 2 || p.N != 200000 ||
		p.Halo != 256 || p.Iters != 200 || p.Warmup != 20 || p.Costs != "" {
		t.Errorf("phasegap4: workload %+v, protocol %+v, topology %+v", r.Workload, r.Protocol, r.Topology)
	}
	if params := p.Params(s.Nodes); params.Ranks != 4 {
		t.Errorf("Params(4).Ranks = %d", params.Ranks)
	}
	if s.Links.Default.Preset != "none" {
		t.Errorf("links.default preset %q; want none", s.Links.Default.Preset)
	}
	for _, e := range r.Edges {
		if e.Link != (netem.Params{Delay: 20 * time.Microsecond}) {
			t.Errorf("%d->%d link %+v; want a 20us delay only", e.From, e.To, e.Link)
		}
	}
}

// TestTrain4Kineto pins train4-kineto to train4 with kineto: true: the
// same run, resolved from the same seed, with Kineto traces written too.
func TestTrain4Kineto(t *testing.T) {
	base, err := Load("train4")
	if err != nil {
		t.Fatal(err)
	}
	k, err := Load("train4-kineto")
	if err != nil {
		t.Fatal(err)
	}
	if base.Workload.Training.Kineto || !k.Workload.Training.Kineto {
		t.Fatalf("kineto: train4 %v, train4-kineto %v; want false, true", base.Workload.Training.Kineto, k.Workload.Training.Kineto)
	}
	k.Name, k.Description, k.Workload.Training.Kineto = base.Name, base.Description, false
	a, err := base.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("train4-kineto is not train4 with kineto: true:\n%s\nwant\n%s", b, a)
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("nope")
	if err == nil || !strings.Contains(err.Error(), "quickstart") {
		t.Fatalf("Load(nope) = %v; want an error listing the library", err)
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if len(names) < 5 || names[0] != "asym-queueing" {
		t.Fatalf("Names() = %v", names)
	}
}

func ExampleLoad() {
	s, err := Load("quickstart")
	if err != nil {
		panic(err)
	}
	r, err := s.Resolve(s.Seed)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, len(r.Nodes), "nodes", len(r.Edges), "directed edges")
	// Output: quickstart 4 nodes 12 directed edges
}
