package training_test

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/workload/snapshots"
	"github.com/chronosync/chronosync/workload/training"
	"github.com/chronosync/chronosync/world"
)

const (
	us = time.Microsecond
	ms = time.Millisecond
)

// worldN is n nodes with offset, drifting, noisy host clocks, tracer
// clocks with their own offset, rate and 10ns ticks, on a full mesh of
// links with different delays and jitter.
func worldN(n int, seed uint64) sim.Config {
	cfg := sim.Config{Seed: seed}
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{
			Clock: clockmodel.Params{
				Offset:    time.Duration(i*137-200) * us,
				PPM:       float64(i)*20 - 30,
				ReadNoise: 20,
			},
			Tracer: clockmodel.TracerParams{
				Offset:      time.Duration(i+1) * 3 * time.Second,
				PPM:         float64(i)*7 - 10,
				Granularity: 10,
				ReadNoise:   5,
			},
		})
		for j := range n {
			if i != j {
				cfg.Links = append(cfg.Links, sim.LinkConfig{From: i, To: j, Params: netem.Params{
					Delay:  time.Duration(20+5*i+3*j) * us,
					Jitter: 4 * us,
				}})
			}
		}
	}
	return cfg
}

// rec is one finished event with the true times of its start and end.
type rec struct {
	node             world.NodeID
	ev               training.Event
	trueStart, trueE time.Duration
}

// recorder is the test's Observer: it reads the simulator's true time in
// the callbacks.
type recorder struct {
	s      **sim.Sim
	starts []map[uint64]time.Duration
	recs   []rec
	bad    []string
}

func newRecorder(s **sim.Sim, n int) *recorder {
	r := &recorder{s: s}
	for range n {
		r.starts = append(r.starts, map[uint64]time.Duration{})
	}
	return r
}

func (r *recorder) Started(node world.NodeID, id uint64) {
	if _, dup := r.starts[node][id]; dup {
		r.bad = append(r.bad, fmt.Sprintf("node %d: event %d started twice", node, id))
	}
	r.starts[node][id] = (*r.s).Now()
}

func (r *recorder) Finished(node world.NodeID, ev training.Event) {
	start, ok := r.starts[node][ev.ID]
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("node %d: event %d finished without a start", node, ev.ID))
	}
	r.recs = append(r.recs, rec{node: node, ev: ev, trueStart: start, trueE: (*r.s).Now()})
}

// hash is a digest of every event in the order they finished.
func (r *recorder) hash() uint64 {
	h := fnv.New64a()
	for _, x := range r.recs {
		fmt.Fprintf(h, "%d %+v %d %d\n", x.node, x.ev, x.trueStart, x.trueE)
	}
	return h.Sum64()
}

// run simulates cfg on the world for d and returns the nodes (first
// incarnations) and the recorder.
func run(t *testing.T, w sim.Config, cfg training.Config, d time.Duration) ([]*training.Node, *recorder, *sim.Sim) {
	t.Helper()
	var s *sim.Sim
	rec := newRecorder(&s, len(w.Nodes))
	nodes := make([]*training.Node, len(w.Nodes))
	s, err := sim.New(w, func(id world.NodeID) world.Program {
		n, err := training.New(cfg, rec)
		if err != nil {
			t.Fatal(err)
		}
		if nodes[id] == nil {
			nodes[id] = n
		}
		return n
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(d)
	return nodes, rec, s
}

func TestTraining(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		cfg   training.Config
		run   time.Duration
	}{
		{"defaults", 4, training.Config{}, 2 * time.Second},
		{"one stream", 4, training.Config{Steps: 10, Streams: 1}, time.Second},
		{"three streams, fewer compute than collectives", 4, training.Config{Steps: 10, Streams: 3, CollectivesPerStep: 5, ComputePerStep: 3}, time.Second},
		{"collective-bound, start delay", 4, training.Config{Steps: 20, ComputeDuration: 5 * us, CollectiveDuration: 20 * us, StartDelay: 300 * ms}, time.Second},
		{"two nodes", 2, training.Config{Steps: 10}, time.Second},
		{"single node", 1, training.Config{Steps: 5}, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, rec, _ := run(t, worldN(tc.nodes, 7), tc.cfg, tc.run)
			for _, b := range rec.bad {
				t.Error(b)
			}
			cfg := tc.cfg.WithDefaults()
			perStep := cfg.CollectivesPerStep + cfg.ComputePerStep
			for id, n := range nodes {
				st := n.Stats()
				if !n.Done() {
					t.Fatalf("node %d not done: %+v", id, st)
				}
				want := training.Stats{Events: 2 * cfg.Steps * perStep, Collectives: cfg.Steps * cfg.CollectivesPerStep, Steps: cfg.Steps}
				if st != want {
					t.Errorf("node %d stats %+v, want %+v", id, st, want)
				}
			}
			checkCounts(t, rec, tc.nodes, cfg)
			checkNoOverlap(t, rec)
			margin := checkHappensBefore(t, rec, tc.nodes, cfg)
			t.Logf("%d events; smallest margin of a collective's earliest end over its latest start: %v", len(rec.recs), margin)
		})
	}
}

// checkCounts checks the exact number of events of each kind per node, and
// that launches and kernels pair up by correlation.
func checkCounts(t *testing.T, rec *recorder, n int, cfg training.Config) {
	t.Helper()
	type key struct {
		node world.NodeID
		kind training.Kind
	}
	count := map[key]int{}
	corr := map[[2]uint64]int{} // node, correlation → launches minus kernels
	for _, x := range rec.recs {
		count[key{x.node, x.ev.Kind}]++
		d := 1
		if x.ev.Kind != training.Launch {
			d = -1
		}
		corr[[2]uint64{uint64(x.node), x.ev.Correlation}] += d
		if x.ev.EndR < x.ev.StartR {
			t.Errorf("node %d event %+v ends before it starts", x.node, x.ev)
		}
		if (x.ev.Kind == training.Collective) != (x.ev.HloOp != "") {
			t.Errorf("node %d event %+v: hlo_op on the wrong kind", x.node, x.ev)
		}
		if x.ev.Kind == training.Collective && !strings.Contains(x.ev.Name, "nccl") {
			t.Errorf("collective name %q lacks nccl", x.ev.Name)
		}
	}
	for id := range n {
		node := world.NodeID(id)
		for kind, want := range map[training.Kind]int{
			training.Compute:    cfg.Steps * cfg.ComputePerStep,
			training.Collective: cfg.Steps * cfg.CollectivesPerStep,
			training.Launch:     cfg.Steps * (cfg.ComputePerStep + cfg.CollectivesPerStep),
		} {
			if got := count[key{node, kind}]; got != want {
				t.Errorf("node %d: %d %v events, want %d", id, got, kind, want)
			}
		}
	}
	for k, v := range corr {
		if v != 0 {
			t.Errorf("node %d correlation %d: launches minus kernels %d", k[0], k[1], v)
		}
	}
}

// checkNoOverlap checks that the events of one line (a stream, the host
// thread) follow one another on the tracer clock, in start order.
func checkNoOverlap(t *testing.T, rec *recorder) {
	t.Helper()
	type line struct {
		node  world.NodeID
		plane training.Plane
		line  int
	}
	lines := map[line][]training.Event{}
	for _, x := range rec.recs {
		l := line{x.node, x.ev.Plane, x.ev.Line}
		lines[l] = append(lines[l], x.ev)
	}
	for l, evs := range lines {
		slices.SortFunc(evs, func(a, b training.Event) int { return cmp.Compare(a.ID, b.ID) })
		for i := 1; i < len(evs); i++ {
			if evs[i].StartR < evs[i-1].EndR {
				t.Errorf("node %d %v line %d: %+v starts before %+v ends", l.node, l.plane, l.line, evs[i], evs[i-1])
			}
		}
	}
}

// checkHappensBefore checks that for every (step, index) collective the
// latest true start across nodes is before the earliest true end, and that
// every node ran it under the same hlo_op. It returns the smallest margin.
func checkHappensBefore(t *testing.T, rec *recorder, n int, cfg training.Config) time.Duration {
	t.Helper()
	type inst struct {
		latestStart, earliestEnd time.Duration
		nodes                    int
		hlo                      string
	}
	insts := map[[2]int]*inst{}
	for _, x := range rec.recs {
		if x.ev.Kind != training.Collective {
			continue
		}
		k := [2]int{x.ev.Step, x.ev.Index}
		in := insts[k]
		if in == nil {
			in = &inst{earliestEnd: x.trueE, hlo: x.ev.HloOp}
			insts[k] = in
		}
		in.nodes++
		in.latestStart = max(in.latestStart, x.trueStart)
		in.earliestEnd = min(in.earliestEnd, x.trueE)
		if x.ev.HloOp != in.hlo {
			t.Errorf("collective %v: hlo_op %q on node %d, %q elsewhere", k, x.ev.HloOp, x.node, in.hlo)
		}
	}
	if len(insts) != cfg.Steps*cfg.CollectivesPerStep {
		t.Errorf("%d collective instances, want %d", len(insts), cfg.Steps*cfg.CollectivesPerStep)
	}
	margin := time.Duration(1<<63 - 1)
	for k, in := range insts {
		if in.nodes != n {
			t.Errorf("collective %v ran on %d nodes, want %d", k, in.nodes, n)
		}
		if in.latestStart >= in.earliestEnd {
			t.Errorf("collective %v (%s): ends at %v on some node before it starts at %v on another", k, in.hlo, in.earliestEnd, in.latestStart)
		}
		margin = min(margin, in.earliestEnd-in.latestStart)
	}
	return margin
}

func TestSameSeedSameEvents(t *testing.T) {
	cfg := training.Config{Steps: 10}
	hash := func(seed uint64) uint64 {
		_, rec, _ := run(t, worldN(4, seed), cfg, time.Second)
		return rec.hash()
	}
	a, b, c := hash(3), hash(3), hash(4)
	if a != b {
		t.Errorf("seed 3 gave event hashes %x and %x", a, b)
	}
	if a == c {
		t.Errorf("seeds 3 and 4 gave the same event hash %x", a)
	}
}

// intruder is a second program on a node's Env that dials a node's
// training port and sends it junk.
type intruder struct {
	to   world.NodeID
	msgs [][]byte
}

func (in intruder) Start(env world.Env) error {
	env.AfterFunc(50*ms, func() {
		if _, err := env.Dial(world.Addr{Node: in.to, Port: training.DefaultPort}, in); err != nil {
			env.Logger().Error("intruder dial", "err", err)
		}
	})
	return nil
}

func (in intruder) OnOpen(s world.Stream) {
	for _, m := range in.msgs {
		_ = s.Send(m)
	}
}
func (intruder) OnMessage(world.Stream, []byte) {}
func (intruder) OnClose(world.Stream, error)    {}

// both runs two programs on one Env.
type both [2]world.Program

func (b both) Start(env world.Env) error {
	for _, p := range b {
		if err := p.Start(env); err != nil {
			return err
		}
	}
	return nil
}

func TestMalformedMessagesIgnored(t *testing.T) {
	junk := [][]byte{
		nil,
		[]byte("X"),
		{'A', 0, 0, 0, 0, 0, 0, 0, 0},  // arrive on a stream that never said hello
		{'H', 0, 0, 0, 9},              // hello from a node that does not exist
		{'H', 0, 0, 0, 2},              // hello from a node that does not dial node 1
		{'H', 0, 0, 0, 0},              // hello from node 0, which is connected already
		{'H', 0, 0, 0, 0, 0},           // wrong length
		{'A', 0, 0, 0, 0, 0, 0, 0, 0},  // still unidentified
		{'A', 0, 0, 0, 0, 0, 0, 0, 99}, // ditto
	}
	var s *sim.Sim
	rec := newRecorder(&s, 3)
	nodes := make([]*training.Node, 3)
	cfg := training.Config{Steps: 30}
	s, err := sim.New(worldN(3, 1), func(id world.NodeID) world.Program {
		n, err := training.New(cfg, rec)
		if err != nil {
			t.Fatal(err)
		}
		nodes[id] = n
		if id == 2 {
			return both{n, intruder{to: 1, msgs: junk}}
		}
		return n
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(time.Second)
	if got := nodes[1].Stats().Malformed; got != len(junk) {
		t.Errorf("node 1 counted %d malformed messages, want %d", got, len(junk))
	}
	for id, n := range nodes {
		if !n.Done() {
			t.Errorf("node %d did not finish: %+v", id, n.Stats())
		}
	}
	checkHappensBefore(t, rec, 3, cfg.WithDefaults())
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  training.Config
		want string // substring of the error; "" for valid
	}{
		{"defaults", training.Config{}, ""},
		{"minimal", training.Config{Steps: 1, CollectivesPerStep: 1, ComputePerStep: 1, Streams: 1}, ""},
		{"negative steps", training.Config{Steps: -1}, "Steps is -1"},
		{"negative collectives", training.Config{CollectivesPerStep: -2}, "CollectivesPerStep is -2"},
		{"negative compute", training.Config{ComputePerStep: -1}, "ComputePerStep is -1"},
		{"too many streams", training.Config{Streams: 65}, "Streams is 65"},
		{"negative compute duration", training.Config{ComputeDuration: -us}, "ComputeDuration is -1µs"},
		{"negative collective duration", training.Config{CollectiveDuration: -us}, "CollectiveDuration"},
		{"negative launch gap", training.Config{LaunchGap: -1}, "LaunchGap"},
		{"negative launch duration", training.Config{LaunchDuration: -1}, "LaunchDuration"},
		{"negative step gap", training.Config{StepGap: -1}, "StepGap"},
		{"negative start delay", training.Config{StartDelay: -1}, "StartDelay"},
		{"spread of one", training.Config{Spread: 1}, "Spread is 1"},
		{"negative spread", training.Config{Spread: -0.1}, "Spread"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := training.New(tc.cfg, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		index         int
		kernel, hloOp string
	}{
		{0, training.AllReduceKernel, "all-reduce.0"},
		{1, training.AllGatherKernel, "all-gather.1"},
		{2, training.BroadcastKernel, "broadcast.2"},
		{3, training.AllReduceKernel, "all-reduce.3"},
		{7, training.AllGatherKernel, "all-gather.7"},
	}
	for _, tc := range tests {
		k, h := training.CollectiveName(tc.index)
		if k != tc.kernel || h != tc.hloOp {
			t.Errorf("CollectiveName(%d) = %q, %q; want %q, %q", tc.index, k, h, tc.kernel, tc.hloOp)
		}
	}
}

// htaComm and htaCompute are HolisticTraceAnalysis's kernel patterns
// (hta/common/types.py, CommunicateKernelGroupingPattern and
// ComputeKernelGroupingPattern, the latter an inverse match: a kernel is
// compute when it does not match).
var (
	htaComm    = regexp.MustCompile(`(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)`)
	htaNotComp = regexp.MustCompile(`(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)`)
)

// TestNamesAsHTASeesThem: HTA counts every collective kernel as
// communication and every compute kernel as computation.
func TestNamesAsHTASeesThem(t *testing.T) {
	for i := range 6 {
		k, _ := training.CollectiveName(i)
		if !htaComm.MatchString(k) || !htaNotComp.MatchString(k) {
			t.Errorf("collective %d: HTA does not see %q as communication", i, k)
		}
	}
	for i := range 8 {
		k := training.ComputeName(i)
		if htaComm.MatchString(k) || htaNotComp.MatchString(k) {
			t.Errorf("compute %d: HTA does not see %q as computation", i, k)
		}
	}
}

// The sampler and the workload share each node's Env, as they will beside
// the sync protocol: both work, and the snapshot pairs bracket the trace.
func TestBesideSampler(t *testing.T) {
	var s *sim.Sim
	rec := newRecorder(&s, 4)
	nodes := make([]*training.Node, 4)
	samplers := make([]*snapshots.Sampler, 4)
	cfg := training.Config{Steps: 20, StartDelay: 50 * ms}
	s, err := sim.New(worldN(4, 2), func(id world.NodeID) world.Program {
		n, err := training.New(cfg, rec)
		if err != nil {
			t.Fatal(err)
		}
		smp, err := snapshots.New(snapshots.Config{Period: 20 * ms})
		if err != nil {
			t.Fatal(err)
		}
		nodes[id], samplers[id] = n, smp
		return both{smp, n}
	}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(995 * ms) // samples (bursts of 4) at 0, 20, ..., 980ms and a pair at Stop (15ms after the last)
	for id, n := range nodes {
		samplers[id].Stop()
		if !n.Done() {
			t.Fatalf("node %d not done: %+v", id, n.Stats())
		}
		st := samplers[id].Stats()
		pairs := samplers[id].Pairs()
		if st.SnapshotsTaken != 50*4+1 || st.MissedDeadline != 0 || len(pairs) != 50*4+1 {
			t.Errorf("node %d sampler: %+v, %d pairs; want 201 on time", id, st, len(pairs))
		}
		for _, x := range rec.recs {
			if x.node == world.NodeID(id) && (x.ev.StartR < pairs[0].Tracer || x.ev.EndR > pairs[len(pairs)-1].Tracer) {
				t.Errorf("node %d event %+v outside the snapshots' R range", id, x.ev)
			}
		}
	}
	checkHappensBefore(t, rec, 4, cfg.WithDefaults())
}
