package scenario

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
)

func mustLoad(t *testing.T, path string) *Scenario {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustResolve(t *testing.T, s *Scenario, seed uint64) *Resolved {
	t.Helper()
	r, err := s.Resolve(seed)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveDeterministic(t *testing.T) {
	for _, f := range []string{"../scenarios/quickstart.yaml", "../scenarios/bench1000.yaml", "testdata/full.yaml"} {
		s := mustLoad(t, f)
		a, b := mustResolve(t, s, 1), mustResolve(t, s, 1)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two resolves with seed 1 differ", f)
		}
		c := mustResolve(t, s, 2)
		if reflect.DeepEqual(a.Nodes, c.Nodes) {
			t.Errorf("%s: seeds 1 and 2 draw the same clocks", f)
		}
	}
	// The random_regular graph depends on the seed too.
	s := mustLoad(t, "../scenarios/bench1000.yaml")
	if reflect.DeepEqual(mustResolve(t, s, 1).Edges, mustResolve(t, s, 2).Edges) {
		t.Error("bench1000: seeds 1 and 2 draw the same graph")
	}
}

// TestResolveStreamsAreIndependent checks that a new override or a new
// node leaves every other drawn value alone.
func TestResolveStreamsAreIndependent(t *testing.T) {
	s := mustLoad(t, "../scenarios/quickstart.yaml")
	base := mustResolve(t, s, 1)

	over := *s
	over.Clocks.Nodes = append(over.Clocks.Nodes, NodeClock{Node: 3, ClockSpec: ClockSpec{Offset: Fixed(time.Millisecond)}})
	got := mustResolve(t, &over, 1)
	for id := range 3 {
		if !reflect.DeepEqual(got.Nodes[id], base.Nodes[id]) {
			t.Errorf("overriding node 3 changed node %d:\n%+v\n%+v", id, base.Nodes[id], got.Nodes[id])
		}
	}
	if got.Nodes[3].Clock.Offset != time.Millisecond {
		t.Errorf("node 3 offset = %v; want the override's 1ms", got.Nodes[3].Clock.Offset)
	}
	if got.Nodes[3].Clock.PPM != base.Nodes[3].Clock.PPM {
		t.Errorf("overriding node 3's offset changed its drift draw")
	}

	more := *s
	more.Nodes = 5
	got = mustResolve(t, &more, 1)
	for id := range 4 {
		if !reflect.DeepEqual(got.Nodes[id], base.Nodes[id]) {
			t.Errorf("adding a node changed node %d", id)
		}
	}
}

func TestResolveDrawsInRange(t *testing.T) {
	s := mustLoad(t, "../scenarios/bench1000.yaml")
	s.Clocks.Default.ReadNoise = UniformOf(10*time.Nanosecond, 30*time.Nanosecond)
	s.Clocks.Default.Tracer = &TracerSpec{Offset: NormalOf(time.Second, time.Millisecond)}
	r := mustResolve(t, s, 3)
	var sumPPM, sumTracer, sumTracer2 float64
	distinct := map[time.Duration]bool{}
	for _, n := range r.Nodes {
		c := n.Clock
		if c.Offset < -5*time.Millisecond || c.Offset > 5*time.Millisecond {
			t.Errorf("node %d offset %v outside uniform(-5ms, 5ms)", n.ID, c.Offset)
		}
		if c.PPM < -50 || c.PPM > 50 {
			t.Errorf("node %d drift %v outside uniform(-50, 50)", n.ID, c.PPM)
		}
		if c.ReadNoise < 10 || c.ReadNoise > 30 {
			t.Errorf("node %d read noise %v outside uniform(10ns, 30ns)", n.ID, c.ReadNoise)
		}
		if c.WanderPPM != 0.01 {
			t.Errorf("node %d wander %v; want the fixed 0.01", n.ID, c.WanderPPM)
		}
		distinct[c.Offset] = true
		sumPPM += c.PPM
		d := float64(n.Tracer.Offset - time.Second)
		sumTracer += d
		sumTracer2 += d * d
	}
	if len(distinct) < 990 {
		t.Errorf("only %d distinct offsets in 1000 draws", len(distinct))
	}
	if mean := sumPPM / 1000; math.Abs(mean) > 5 { // sd of the mean ≈ 0.9
		t.Errorf("mean drift %v; want about 0", mean)
	}
	mean := sumTracer / 1000
	sd := math.Sqrt(sumTracer2/1000 - mean*mean)
	if math.Abs(mean) > 2e5 || sd < 0.9e6 || sd > 1.1e6 { // normal(1s, 1ms)
		t.Errorf("tracer offset - 1s: mean %vns sd %vns; want about 0 and 1e6", mean, sd)
	}
}

func TestResolveFull(t *testing.T) {
	s := mustLoad(t, "testdata/full.yaml")
	r := mustResolve(t, s, s.Seed)
	if r.Seed != 42 || r.Duration != 90*time.Second || len(r.Nodes) != 6 {
		t.Fatalf("resolved %+v", r)
	}

	// Star with hub 1: 2·5 directed edges, sorted.
	if len(r.Edges) != 10 {
		t.Fatalf("%d edges; want 10", len(r.Edges))
	}
	for i := 1; i < len(r.Edges); i++ {
		a, b := r.Edges[i-1], r.Edges[i]
		if a.From > b.From || (a.From == b.From && a.To >= b.To) {
			t.Fatalf("edges not sorted: %v before %v", a, b)
		}
	}
	link := func(from, to int) netem.Params {
		for _, e := range r.Out(from) {
			if e.To == to {
				return e.Link
			}
		}
		t.Fatalf("no edge %d->%d", from, to)
		return netem.Params{}
	}
	def := link(1, 0)
	corrupt := 0.07 // a variable, so that the division is done in float64 as Resolve does it
	wantDef := netem.Params{
		Delay: 50 * time.Microsecond, Jitter: 5 * time.Microsecond, DelayCorr: 0.25, Distribution: netem.ParetoNormal,
		Loss:      netem.Loss{Model: netem.LossRandom, Probability: 0.01, Correlation: 0.25},
		Duplicate: 0.001, Corrupt: corrupt / 100, CorruptCorr: 0.05,
		Reorder: 0.25, ReorderCorr: 0.5, ReorderGap: 5,
		Rate:  netem.Rate{BitsPerSecond: 1_500_000_000, PacketOverhead: -4, CellSize: 48, CellOverhead: 5},
		Limit: 1000,
		Cross: netem.CrossTraffic{Kind: netem.CrossOnOff, Load: 0.5, PacketSize: 1500, On: 10 * time.Millisecond, Off: 10 * time.Millisecond},
	}
	if def != wantDef {
		t.Errorf("default link 1->0:\n got %+v\nwant %+v", def, wantDef)
	}
	// One direction only, gemodel defaults, cross traffic switched off.
	if l := link(0, 1); l.Loss != (netem.Loss{Model: netem.LossGEModel, P: 0.01, R: 0.99, OneMinusH: 1}) || l.Cross.Kind != netem.CrossNone {
		t.Errorf("override 0->1: loss %+v cross %+v", l.Loss, l.Cross)
	}
	if l := link(1, 0); l.Loss.Model != netem.LossRandom {
		t.Errorf("override from 0 to 1 changed 1->0 too")
	}
	// Both directions, explicit gemodel.
	for _, l := range []netem.Params{link(1, 3), link(3, 1)} {
		if l.Loss != (netem.Loss{Model: netem.LossGEModel, P: 0.01, R: 0.3, OneMinusH: 0.9, OneMinusK: 0.005}) {
			t.Errorf("between [1, 3]: loss %+v", l.Loss)
		}
	}
	// State defaults; a rate block replaces the whole rate.
	if l := link(4, 1); l.Loss != (netem.Loss{Model: netem.LossState, P13: 0.02, P31: 0.98}) || l.Rate != (netem.Rate{BitsPerSecond: 800_000_000}) {
		t.Errorf("between [1, 4]: loss %+v rate %+v", l.Loss, l.Rate)
	}
	// Overrides apply in order: the second 5->1 keeps the first's loss and
	// replaces its delay.
	if l := link(5, 1); l.Delay != 2*time.Millisecond || l.Loss.Model != netem.LossState || l.Loss.P14 != 0.001 || l.Cross.Kind != netem.CrossPoisson {
		t.Errorf("5->1: %+v", l)
	}

	// Clocks: node 2's override replaces offset and steps, and merges the
	// tracer field by field; node 4's steps are sorted; clock_step faults
	// are not folded in (the simulator applies them when they fire).
	n2 := r.Nodes[2]
	if n2.Clock.Offset != 1500*time.Microsecond || n2.Tracer.Offset != 0 || n2.Tracer.Granularity != 10 {
		t.Errorf("node 2: %+v", n2)
	}
	if len(n2.Clock.Steps) != 0 {
		t.Errorf("node 2 steps %v; want none (its override clears them; its clock_step fault stays a fault)", n2.Clock.Steps)
	}
	if want := []clockmodel.Step{{At: time.Second, By: 3 * time.Microsecond}, {At: 5 * time.Second, By: -2 * time.Millisecond}}; !reflect.DeepEqual(r.Nodes[4].Clock.Steps, want) {
		t.Errorf("node 4 steps %v; want %v", r.Nodes[4].Clock.Steps, want)
	}
	if r.Nodes[4].Clock.PPM != 1e-05 || r.Nodes[0].Clock.Steps[0].By != -time.Millisecond {
		t.Errorf("node 4 drift %v, node 0 steps %v", r.Nodes[4].Clock.PPM, r.Nodes[0].Clock.Steps)
	}

	// Faults: sorted by time, stable; partitions completed.
	var kinds []FaultKind
	for i, f := range r.Faults {
		kinds = append(kinds, f.Kind)
		if i > 0 && r.Faults[i-1].At > f.At {
			t.Fatalf("faults not sorted: %v", r.Faults)
		}
	}
	want := []FaultKind{FaultCrash, FaultCrash, FaultPartition, FaultPartition, FaultLinkFlap, FaultLinkFlap, FaultClockStep, FaultSlowNode, FaultSlowNode}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("fault order %v; want %v", kinds, want)
	}
	if *r.Faults[0].Node != 3 || *r.Faults[7].Node != 1 {
		t.Errorf("equal times did not keep file order: %+v", r.Faults)
	}
	if g := r.Faults[2].Groups; !reflect.DeepEqual(g, [][]int{{0, 1}, {2, 3}, {4, 5}}) {
		t.Errorf("partition groups %v; want the rest appended", g)
	}
	if g := r.Faults[3].Groups; !reflect.DeepEqual(g, [][]int{{5}, {0, 1, 2, 3, 4}}) {
		t.Errorf("partition groups %v; want the rest appended", g)
	}
	if r.Faults[5].Count != 1 {
		t.Errorf("link flap count %d; want the default 1", r.Faults[5].Count)
	}
	// Resolve must not change the scenario.
	if len(s.Faults[3].Groups) != 2 || s.Faults[0].Kind != FaultSlowNode {
		t.Errorf("Resolve modified the scenario's faults")
	}
}

func TestResolveModelLimits(t *testing.T) {
	s := mustLoad(t, "../scenarios/quickstart.yaml")
	s.Clocks.Default.DriftPPM = UniformOf(-2e6, 2e6) // some node runs backwards
	_, err := s.Resolve(1)
	if err == nil || !containsAll(err.Error(), "scenarios/quickstart.yaml:", "clocks.default: node ", "PPM") {
		t.Fatalf("Resolve: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestResolveLinkModelLimits(t *testing.T) {
	file := withHead("links:", "  default:", "    loss: {state: {p13: 60%, p14: 50%}}")
	s, err := Parse("x.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Resolve(1)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 ||
		!containsAll(list[0].Error(), "x.yaml:5: links.default: edge 0->1: ", "P13 + P14") {
		t.Fatalf("Resolve: %v; want one error for the default", err)
	}
}
