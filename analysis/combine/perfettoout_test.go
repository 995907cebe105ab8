package combine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/perfetto/perfettotest"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// readPerfetto decodes the Perfetto output of out with Perfetto's own
// protos and checks it (perfettotest.Check).
func readPerfetto(t *testing.T, out string) *perfettotest.Summary {
	t.Helper()
	data, err := os.ReadFile(OutputBase(out) + PerfettoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	s, err := perfettotest.Check(perfettotest.Schema(t), data)
	if err != nil {
		t.Fatalf("%s: %v", OutputBase(out)+PerfettoSuffix, err)
	}
	return s
}

// timedEvents counts the timed events of the planes of the XSpace at path,
// by event name.
func timedEvents(t *testing.T, path string) (map[string]int, int) {
	t.Helper()
	space, err := xspace.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	names, n := map[string]int{}, 0
	for _, p := range space.Planes {
		for _, l := range p.Lines {
			for _, ev := range l.Events {
				if _, ok := ev.Data.(*xplanepb.XEvent_OffsetPs); ok {
					names[p.EventMetadata[ev.MetadataId].GetName()]++
					n++
				}
			}
		}
	}
	return names, n
}

// TestPerfettoOutput: the synthetic three-node job's Perfetto trace
// decodes with Perfetto's protos, has every event of the combined XSpace
// by name, a process per plane with events named by node and host in node
// order, the host first, typed args, and per node a clock process of three
// counter tracks with a value per offsets window.
func TestPerfettoOutput(t *testing.T) {
	dir := t.TempDir()
	inputs, offs := writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6, drift: 20}, {off: -2e6, rOff: 5e5, drift: -10}}, 8)
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	res, err := Combine(inputs, Options{Offsets: offs, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Files {
		found = found || f == OutputBase(out)+PerfettoSuffix
	}
	if !found {
		t.Errorf("Result.Files %v lacks the Perfetto trace", res.Files)
	}
	s := readPerfetto(t, out)
	names, events := timedEvents(t, out)
	got := 0
	for name, n := range names {
		got += s.Names[name]
		if s.Names[name] != n {
			t.Errorf("event %q: %d in the Perfetto trace, %d in the XSpace", name, s.Names[name], n)
		}
	}
	if got != events || events == 0 {
		t.Errorf("%d events in the Perfetto trace, %d in the XSpace", got, events)
	}
	var want []string
	for i := range 3 {
		for _, p := range []string{"/host:CPU", "/device:GPU:0", "clock"} {
			want = append(want, fmt.Sprintf("node %d (host-%d) %s", i, i, p))
		}
	}
	if got := s.Processes(); !slices.Equal(got, want) {
		t.Errorf("processes in order %q, want %q", got, want)
	}
	if s.Args["hlo_op"] != "string_value" {
		t.Errorf("hlo_op is a %q, want string_value", s.Args["hlo_op"])
	}
	if s.Clocks[1] != 0 {
		t.Errorf("a REALTIME clock (%d) in the snapshot of a trace without a Unix time base", s.Clocks[1])
	}
	counters := map[string]int{}
	for _, tr := range s.Tracks {
		if tr.Counter {
			counters[tr.Name]++
			if tr.Values != 1 {
				t.Errorf("counter %s of track %d: %d values, want 1 (one offsets window)", tr.Name, tr.UUID, tr.Values)
			}
			if p := s.Tracks[tr.Parent]; p == nil || !strings.HasSuffix(p.Process, " clock") {
				t.Errorf("counter %s is not under a node's clock process", tr.Name)
			}
		}
	}
	for _, name := range []string{counterOffset, counterDrift, counterSigma} {
		if counters[name] != 3 {
			t.Errorf("%d %q counter tracks, want 3 (one per node)", counters[name], name)
		}
	}
}

// TestPerfettoOverlap: a line whose events overlap (and one of zero
// length) is laid out on tracks that nest; every event is kept.
func TestPerfettoOverlap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events [][2]int64 // start, duration (ns)
		tracks int
	}{
		{"nested", [][2]int64{{0, 10e6}, {1e6, 2e6}, {3e6, 0}, {5e6, 5e6}}, 1},
		{"overlap", [][2]int64{{0, 10e6}, {5e6, 10e6}, {6e6, 1e6}, {12e6, 10e6}}, 2},
		{"staircase", [][2]int64{{0, 10e6}, {1e6, 10e6}, {2e6, 10e6}, {3e6, 1e6}}, 3},
		{"adjacent and crossing", [][2]int64{{0, 1500}, {1500, 1500}, {1400, 200}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := xspace.NewPlaneBuilder(0, "/device:GPU:0")
			l := b.Line(1, "stream", 0)
			for i, e := range tc.events {
				l.Add(fmt.Sprintf("op%d", i), e[0], e[1], xspace.Int("n", int64(i)))
			}
			trace := filepath.Join(dir, "node0.xplane.pb")
			if err := xspace.Write(trace, &xplanepb.XSpace{Planes: []*xplanepb.XPlane{b.Plane()}}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "combined.xplane.pb")
			if _, err := Combine([]Input{{Node: 0, Trace: trace}}, Options{Output: out, NoCorrection: true}); err != nil {
				t.Fatal(err)
			}
			s := readPerfetto(t, out)
			tracks, slices := 0, 0
			for _, tr := range s.Tracks {
				if tr.Name == "stream" {
					tracks++
					slices += tr.Slices + tr.Instants
				}
			}
			if tracks != tc.tracks || slices != len(tc.events) {
				t.Errorf("%d tracks with %d slices, want %d tracks with %d", tracks, slices, tc.tracks, len(tc.events))
			}
			if s.Args["n"] != "int_value" {
				t.Errorf("arg n is a %q, want int_value", s.Args["n"])
			}
		})
	}
}

// TestPerfettoKinetoClock: a trace that counts from a Unix time base
// relates the trace's clock to REALTIME at that base.
func TestPerfettoKinetoClock(t *testing.T) {
	in, _ := kinetoRanks(t)
	out := filepath.Join(t.TempDir(), "combined.xplane.pb")
	res, err := Combine(in, Options{Output: out, NoKinetoOut: true, NoTraceJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	s := readPerfetto(t, out)
	base := res.Metadata.TimeBaseNS
	if base == 0 {
		t.Fatal("the Kineto job has no time base")
	}
	// The snapshot is taken at its sequence's first event, t ns from the
	// base: clock 64 and BOOTTIME read DefaultOffset + t, REALTIME base + t.
	if t0 := int64(s.Clocks[64]) - perfetto.DefaultOffset; s.Clocks[1] != uint64(base+t0) || s.Clocks[64] != s.Clocks[6] {
		t.Errorf("snapshot %v: want REALTIME (1) = the time base %d + %d ns and clock 64 = BOOTTIME (6)", s.Clocks, base, t0)
	}
	// Launches and their kernels share a correlation: a flow each.
	joined := 0
	for _, n := range s.Flows {
		if n >= 2 {
			joined++
		}
	}
	if joined == 0 || len(s.Flows) == 0 {
		t.Errorf("%d flows, %d of them joining two events or more; want launch→kernel flows", len(s.Flows), joined)
	}
	t.Logf("%d flows, %d joining two events or more", len(s.Flows), joined)
}

// TestPerfettoAllOrNothing: a failure writing the Perfetto trace leaves
// no output; NoPerfetto writes none and lists none.
func TestPerfettoAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	inputs, offs := writeSynth(t, dir, []synthNode{{}, {off: 1e6}}, 2)
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	boom := errors.New("boom")
	hook := func(step, path string) error {
		if step == "write" && strings.HasSuffix(path, PerfettoSuffix) {
			return boom
		}
		return nil
	}
	if _, err := Combine(inputs, Options{Offsets: offs, Output: out, outputHook: hook}); !errors.Is(err, boom) {
		t.Fatalf("Combine: %v, want the hook's error", err)
	}
	noOutputs(t, out)
	if _, err := os.Stat(OutputBase(out) + PerfettoSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the Perfetto trace exists after a failure: %v", err)
	}
	res, err := Combine(inputs, Options{Offsets: offs, Output: out, NoPerfetto: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if strings.HasSuffix(f, PerfettoSuffix) {
			t.Errorf("NoPerfetto wrote %s", f)
		}
	}
	if _, err := os.Stat(OutputBase(out) + PerfettoSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NoPerfetto: %v", err)
	}
}

// TestPerfettoCorrelationFlows: in a trace without flow stats, a launch
// and its kernel (one correlation_id on one node) are one flow; different
// nodes' equal correlation ids are different flows.
func TestPerfettoCorrelationFlows(t *testing.T) {
	dir := t.TempDir()
	var inputs []Input
	for node := range 2 {
		host := xspace.NewPlaneBuilder(0, "/host:CPU")
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		hl, gl := host.Line(1, "launcher", 0), gpu.Line(1, "stream", 0)
		for k := range 5 {
			hl.Add("hipLaunchKernel", int64(k)*1000, 100, xspace.Uint("correlation_id", uint64(k+1)))
			gl.Add("kernel", int64(k)*1000+500, 300, xspace.Uint("correlation_id", uint64(k+1)))
		}
		gl.Add("no correlation", 9000, 10)
		trace := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", node))
		if err := xspace.Write(trace, &xplanepb.XSpace{Planes: []*xplanepb.XPlane{host.Plane(), gpu.Plane()}}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, Input{Node: node, Trace: trace})
	}
	out := filepath.Join(dir, "combined.xplane.pb")
	if _, err := Combine(inputs, Options{Output: out, NoCorrection: true}); err != nil {
		t.Fatal(err)
	}
	s := readPerfetto(t, out)
	if len(s.Flows) != 10 {
		t.Errorf("%d flows, want 10 (5 per node)", len(s.Flows))
	}
	for id, n := range s.Flows {
		if n != 2 {
			t.Errorf("flow %#x joins %d events, want 2 (a launch and its kernel)", id, n)
		}
	}
}
