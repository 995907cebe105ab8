package combine

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// synthNode describes one synthetic node: its host clock S reads
// global·(1+drift) + off, its tracer clock R reads S + rOff.
type synthNode struct {
	off, rOff float64
	drift     float64 // ppm
}

func (n synthNode) host(g float64) float64   { return g*(1+n.drift*1e-6) + n.off }
func (n synthNode) tracer(g float64) float64 { return n.host(g) + n.rOff }

// writeSynth writes, for each node, a trace with a host plane and one GPU
// plane whose collectives run at the same true times on every node, its
// snapshot file, and an offsets.jsonl describing the clocks exactly. It
// returns the inputs and the offsets path.
func writeSynth(t *testing.T, dir string, nodes []synthNode, collectives int) ([]Input, string) {
	t.Helper()
	w, err := offsets.Create(filepath.Join(dir, "offsets.jsonl"), offsets.Meta{File: "offsets", RunID: "synth-run", Reference: 0, Estimator: "svm", Mode: "rounds"})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	for i, n := range nodes {
		// offset_ns is the node clock minus global at the window start; the
		// window is in the node's clock.
		ws := n.host(0)
		if err := w.Append(offsets.Offset{NodeID: i, RoundID: 1, WindowID: 1, WindowStartNS: int64(math.Round(ws)),
			WindowEndNS: int64(n.host(100e9)), OffsetNS: ws - 0, DriftPPM: n.drift / (1 + n.drift*1e-6), UncertaintyNS: 20}); err != nil {
			t.Fatal(err)
		}
		host := xspace.NewPlaneBuilder(0, "/host:CPU")
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		gpu.AddStat(xspace.Int("node_id", int64(i)))
		base := int64(n.tracer(0))
		hl := host.Line(1, "launcher", base)
		gl := gpu.Line(1, "stream 1", base)
		for k := range collectives {
			g := 1e9 + float64(k)*10e6
			hl.Add("hipLaunchKernel", int64(n.tracer(g-50e3)), 5e3)
			// Each node runs the collective for the same true 2 ms.
			start, end := int64(n.tracer(g)), int64(n.tracer(g+2e6))
			gl.Add("rcclAllReduceKernel_sum_f32", start, end-start, xspace.Str("hlo_op", fmt.Sprintf("all-reduce.%d", k%4)))
		}
		space := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{host.Plane(), gpu.Plane()}, Hostnames: []string{fmt.Sprintf("host-%d", i)}}
		trace := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", i))
		if err := xspace.Write(trace, space); err != nil {
			t.Fatal(err)
		}
		sp := &snapshotpb.SnapshotPairs{RunId: "synth-run", NodeId: int64(i), SamplingPeriodNs: 4e9, SnapshotsTaken: 4}
		for k := range 4 {
			g := float64(k) * 4e9
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: int64(n.host(g)), TracerClockNs: int64(n.tracer(g))})
		}
		snap := filepath.Join(dir, fmt.Sprintf("node%d.snapshots.pb", i))
		if err := xspace.Write(snap, sp); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, Input{Node: i, Trace: trace, Snapshots: snap})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return inputs, filepath.Join(dir, "offsets.jsonl")
}

var synthClocks = []synthNode{
	{off: 0, rOff: 3e6, drift: 0},
	{off: 4e6, rOff: 3e6, drift: 80},
	{off: -3e6, rOff: -6e6, drift: -60},
}

func TestCombineSynthetic(t *testing.T) {
	dir := t.TempDir()
	inputs, offs := writeSynth(t, dir, synthClocks, 40)
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine(inputs, Options{Offsets: offs, Output: out, Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Violations != 0 || res.Report.Overlaps != 3*40 {
		t.Errorf("combined: %s; want 0 violations and %d overlaps", res.Report.Summary(), 3*40)
	}
	var raw int
	for _, in := range inputs {
		space, err := xspace.Read(in.Trace)
		if err != nil {
			t.Fatal(err)
		}
		_ = space
		raw++
	}
	space, err := xspace.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	events := 0
	for _, p := range space.Planes {
		names = append(names, p.Name)
		for _, l := range p.Lines {
			events += len(l.Events)
		}
	}
	want := []string{"/host:CPU", "/device:GPU:0", "/device:GPU:10000", "/device:GPU:64", "/device:GPU:20000", "/device:GPU:128",
		"/node:0/clock_metadata", "/node:1/clock_metadata", "/node:2/clock_metadata"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("planes %v, want %v", names, want)
	}
	if events != 3*2*40 {
		t.Errorf("%d events, want %d", events, 3*2*40)
	}
	// Every collective's aligned start is its true start (1e9 + k·10ms),
	// to a few ns.
	for _, p := range space.Planes {
		if !strings.HasPrefix(p.Name, gpuPrefix) || len(p.Lines) == 0 || p.Name >= "/device:GPU:10000" && p.Name != "/device:GPU:64" && p.Name != "/device:GPU:128" && p.Name != "/device:GPU:0" {
			continue
		}
		for k, ev := range p.Lines[0].Events {
			got := float64(xspace.StartPs(p.Lines[0], ev)) / 1000
			if want := 1e9 + float64(k)*10e6; math.Abs(got-want) > 3 {
				t.Errorf("%s event %d: aligned start %.0f ns, want %.0f", p.Name, k, got, want)
				break
			}
		}
	}
	if hs := space.Hostnames; strings.Join(hs, ",") != "host-0,host-1,host-2" {
		t.Errorf("hostnames %v", hs)
	}
	checkTraceJSON(t, OutputBase(out)+".trace.json.gz", 3*2*40)
	var md Metadata
	readJSON(t, OutputBase(out)+".metadata.json", &md)
	if md.RunID != "synth-run" || len(md.Nodes) != 3 || md.Nodes[1].SnapshotPairs != 4 || md.Nodes[1].OffsetWindows != 1 || md.Validate == nil {
		t.Errorf("metadata %+v", md)
	}
	if md.Nodes[1].MaxCorrectionNS < 5e6 {
		t.Errorf("node 1 max correction %d ns; its clocks are ≥ 6 ms off", md.Nodes[1].MaxCorrectionNS)
	}
	checkUncertainties(t, space, md)
}

// checkUncertainties checks each node's uncertainty p50 and max in the
// metadata against its events' clock_uncertainty_ns stats (rounded up:
// within 1 ns), and its clock_metadata plane against the metadata.
func checkUncertainties(t *testing.T, space *xplanepb.XSpace, md Metadata) {
	t.Helper()
	sigmas := map[int64][]float64{}
	meta := map[int64]map[string]int64{}
	for _, p := range space.Planes {
		id, ok := xspace.StatByName(p, p.Stats, statNodeID)
		if !ok {
			t.Fatalf("plane %s has no %s", p.Name, statNodeID)
		}
		node := id.GetInt64Value()
		if strings.HasSuffix(p.Name, "/clock_metadata") {
			meta[node] = map[string]int64{}
			for _, s := range p.Stats {
				meta[node][p.StatMetadata[s.MetadataId].GetName()] = s.GetInt64Value()
			}
			continue
		}
		for _, l := range p.Lines {
			for _, ev := range l.Events {
				if s, ok := xspace.StatByName(p, ev.Stats, statUncertainty); ok {
					sigmas[node] = append(sigmas[node], float64(s.GetUint64Value()))
				}
			}
		}
	}
	for _, n := range md.Nodes {
		v := sigmas[int64(n.ID)]
		if len(v) == 0 {
			t.Fatalf("node %d: no event has %s", n.ID, statUncertainty)
		}
		if p50 := stats.Median(v); math.Abs(p50-n.UncertaintyP50NS) > 1 || math.Abs(slices.Max(v)-n.UncertaintyMaxNS) > 1 {
			t.Errorf("node %d: metadata uncertainty p50 %g max %g ns; its events' stats say %g and %g", n.ID, n.UncertaintyP50NS, n.UncertaintyMaxNS, p50, slices.Max(v))
		}
		if m := meta[int64(n.ID)]; m["uncertainty_p50_ns"] != int64(n.UncertaintyP50NS+0.5) || m["uncertainty_max_ns"] != int64(n.UncertaintyMaxNS+0.5) {
			t.Errorf("node %d: clock_metadata plane says p50 %d max %d ns; metadata %g and %g", n.ID, m["uncertainty_p50_ns"], m["uncertainty_max_ns"], n.UncertaintyP50NS, n.UncertaintyMaxNS)
		}
	}
}

// TestCombineNoCorrection keeps every timestamp: the collectives then
// violate happens-before, as the raw traces do.
func TestCombineNoCorrection(t *testing.T) {
	dir := t.TempDir()
	inputs, offs := writeSynth(t, dir, synthClocks, 40)
	res, err := Combine(inputs, Options{Offsets: offs, Output: filepath.Join(dir, "raw.xplane.pb"), NoCorrection: true, Validate: true, NoTraceJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Violations < 100 {
		t.Errorf("uncorrected: %s; want ≥ 100 violations", res.Report.Summary())
	}
	if _, err := os.Stat(filepath.Join(dir, "raw.trace.json.gz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NoTraceJSON wrote the JSON export (%v)", err)
	}
}

// TestCombineBadInput: each bad input gets an error naming the file, and no
// output is left behind.
func TestCombineBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(t *testing.T, dir string, in []Input) []Input
		want []string
	}{
		{"truncated trace", func(t *testing.T, dir string, in []Input) []Input {
			b, err := os.ReadFile(in[1].Trace)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in[1].Trace, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			return in
		}, []string{"node1.xplane.pb", "byte"}},
		{"missing snapshots", func(t *testing.T, dir string, in []Input) []Input {
			in[2].Snapshots = filepath.Join(dir, "nowhere.snapshots.pb")
			return in
		}, []string{"nowhere.snapshots.pb"}},
		{"node mismatch", func(t *testing.T, dir string, in []Input) []Input {
			in[1].Snapshots, in[2].Snapshots = in[2].Snapshots, in[1].Snapshots
			return in
		}, []string{"node1.xplane.pb", "node2.snapshots.pb", "mismatch"}},
		{"offsets line of a wrong type", func(t *testing.T, dir string, in []Input) []Input {
			path := filepath.Join(dir, "offsets.jsonl")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			lines[2] = strings.Replace(lines[2], `"offset_ns":`, `"offset_ns":"abc","x":`, 1)
			if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			return in
		}, []string{"offsets.jsonl:3", "offset_ns"}},
		{"epoch timestamps", func(t *testing.T, dir string, in []Input) []Input {
			space, err := xspace.Read(in[0].Trace)
			if err != nil {
				t.Fatal(err)
			}
			space.Planes[0].Lines[0].TimestampNs = 1_763_800_000_000_000_000
			if err := xspace.Write(in[0].Trace, space); err != nil {
				t.Fatal(err)
			}
			return in
		}, []string{"node0.xplane.pb", "timestamp_ns"}},
		{"duplicate node", func(t *testing.T, dir string, in []Input) []Input {
			in[2].Node = 1
			return in
		}, []string{"node1.xplane.pb", "node2.xplane.pb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			inputs, offs := writeSynth(t, dir, synthClocks, 4)
			inputs = tc.mod(t, dir, inputs)
			out := filepath.Join(dir, "out", "combined.xplane.pb")
			_, err := Combine(inputs, Options{Offsets: offs, Output: out, Validate: true})
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestCombineRealCopies combines two copies of a real XSpace as two nodes:
// every plane is renamed as specified and every event is kept.
func TestCombineRealCopies(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "realdata", "gpu_worker.xplane.pb")
	space, err := xspace.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s *xplanepb.XSpace) (n int) {
		for _, p := range s.Planes {
			for _, l := range p.Lines {
				n += len(l.Events)
			}
		}
		return n
	}
	in := count(space)
	dir := t.TempDir()
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine([]Input{{Node: 0, Trace: src}, {Node: 1, Trace: src}}, Options{Output: out, Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := xspace.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(got); n != 2*in {
		t.Errorf("%d events, want %d", n, 2*in)
	}
	for _, r := range res.Metadata.Nodes[1].Planes {
		t.Logf("node 1: %s → %s", r.From, r.To)
		if r.From == "/host:CPU" && r.To != "/device:GPU:10000" || strings.HasPrefix(r.From, gpuPrefix) && r.To == r.From && r.From != "/device:GPU:0" {
			t.Errorf("node 1 plane %s became %s", r.From, r.To)
		}
	}
	t.Logf("%d planes, %d events; %s", len(got.Planes), 2*in, res.Report.Summary())
}

func checkTraceJSON(t *testing.T, path string, wantSlices int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DisplayTimeUnit string `json:"displayTimeUnit"`
		TraceEvents     []struct {
			Ph   string         `json:"ph"`
			Pid  int64          `json:"pid"`
			Ts   float64        `json:"ts"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(gz).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	slices := 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			slices++
			if _, ok := e.Args[statUncertainty]; !ok {
				t.Fatalf("slice %s has no %s", e.Name, statUncertainty)
			}
		}
	}
	if doc.DisplayTimeUnit != "ns" || slices != wantSlices {
		t.Errorf("%s: displayTimeUnit %q, %d slices, want ns and %d", path, doc.DisplayTimeUnit, slices, wantSlices)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
