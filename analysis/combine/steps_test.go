package combine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// stepNode is a synthetic node whose host clock S may step once: it reads
// g + off (g: global time, ns), and size more from global time gStep on
// (size 0: no step). Its tracer clock R = (g + off)·(1 + rDrift·1e-6) +
// rOff runs on through the step. S runs at global rate, so that the truth
// does not depend on whether a step's size is measured on S or on global
// time (they differ by size·drift).
type stepNode struct {
	off, rOff, rDrift float64
	size, gStep       float64
}

func (n stepNode) unbroken(g float64) float64 { return g + n.off }

func (n stepNode) host(g float64) float64 {
	if n.size != 0 && g >= n.gStep {
		return n.unbroken(g) + n.size
	}
	return n.unbroken(g)
}

func (n stepNode) tracer(g float64) float64 { return n.unbroken(g)*(1+n.rDrift*1e-6) + n.rOff }

// stepEvent is an event of a stepNode's trace: its name (unique in the
// combined trace), plane, true global start and duration (ns), and
// whether it spans the node's step.
type stepEvent struct {
	name     string
	gpu      bool
	g0, dur  float64
	spanning bool
}

// stepEvents are node 1's events around its step at gStep, and node 0's
// (no step; one of them runs over node 1's step in global time).
func stepEvents(gStep float64) [2][]stepEvent {
	return [2][]stepEvent{
		{
			{name: "n0 kernel", gpu: true, g0: 2e9, dur: 1e6},
			{name: "n0 over the step", gpu: true, g0: gStep - 3e5, dur: 1e6},
			{name: "n0 launch", g0: 3e9, dur: 1e4},
		},
		{
			{name: "gpu before", gpu: true, g0: 2e9, dur: 1e6},
			{name: "gpu just before", gpu: true, g0: gStep - 2e6, dur: 1e6},
			{name: "gpu across", gpu: true, g0: gStep - 3e5, dur: 1e6, spanning: true},
			{name: "gpu just after", gpu: true, g0: gStep + 1e6, dur: 1e6},
			{name: "gpu after", gpu: true, g0: 8e9, dur: 1e6},
			{name: "host before", g0: 1.5e9, dur: 1e4},
			{name: "host across", g0: gStep - 5e4, dur: 2e5, spanning: true},
			{name: "host after", g0: 9e9, dur: 1e4},
		},
	}
}

// writeStepped writes two nodes' traces (a /host:CPU and a /device:GPU:0
// plane with evs), snapshot files (one pair a second for 12 s, S as the
// host clock read it) and an offsets.jsonl describing the clocks exactly,
// node 1's step among its record's Steps. It returns the inputs and the
// offsets path.
func writeStepped(t *testing.T, dir string, nodes [2]stepNode, evs [2][]stepEvent) ([]Input, string) {
	t.Helper()
	w, err := offsets.Create(filepath.Join(dir, "offsets.jsonl"), offsets.Meta{File: offsets.FileOffsets, RunID: "steps", Reference: 0, Estimator: "svm", Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	for i, n := range nodes {
		rec := offsets.Offset{NodeID: i, RoundID: 1, WindowID: 1, WindowStartNS: int64(math.Round(n.off)),
			WindowEndNS: int64(math.Round(n.off + 20e9 + math.Abs(n.size))), OffsetNS: n.off, UncertaintyNS: 20}
		if n.size != 0 {
			rec.Steps = []offsets.Step{{AtNS: int64(math.Round(n.unbroken(n.gStep))), AtUncertaintyNS: 1e3, SizeNS: n.size, SizeUncertaintyNS: 5}}
		}
		if err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
		r := func(g float64) int64 { return int64(math.Round(n.tracer(g))) }
		host := xspace.NewPlaneBuilder(0, "/host:CPU")
		host.AddStat(xspace.Int(statNodeID, int64(i)))
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		hl, gl := host.Line(1, "launcher", r(0)), gpu.Line(1, "stream 1", r(0))
		for _, e := range evs[i] {
			l := hl
			if e.gpu {
				l = gl
			}
			l.Add(e.name, r(e.g0), r(e.g0+e.dur)-r(e.g0))
		}
		trace := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", i))
		if err := xspace.Write(trace, &xplanepb.XSpace{Planes: []*xplanepb.XPlane{host.Plane(), gpu.Plane()}}); err != nil {
			t.Fatal(err)
		}
		sp := &snapshotpb.SnapshotPairs{RunId: "steps", NodeId: int64(i), SamplingPeriodNs: 1e9, SnapshotsTaken: 13}
		for g := 0.0; g <= 12e9; g += 1e9 {
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: int64(math.Round(n.host(g))), TracerClockNs: r(g)})
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

// steppedNodes is node 0 (no step) and node 1 with a host clock step of
// size at global time 5.5 s.
func steppedNodes(size float64) [2]stepNode {
	return [2]stepNode{
		{off: 0, rOff: 3e6, rDrift: -30},
		{off: 4e6, rOff: -7e6, rDrift: 50, size: size, gStep: 5.5e9},
	}
}

// TestCombineHostStep: node 1's host clock steps forward, or back (then it
// reads some values twice, and its snapshot pairs' S goes back), between
// snapshot pairs, while its tracer clock runs on. Combined, every event
// lies within a few ns of its true start and duration, before the step
// and after it; the events that span the step last their tracer duration
// (at the tracer's rate to the host clock) and carry clock_step_inside = 1
// in the XSpace and the Chrome JSON; no other event does, and node 0's
// planes do not even name the stat. metadata.json counts the step and the
// spanning events.
func TestCombineHostStep(t *testing.T) {
	const gStep, tol = 5.5e9, 3.0 // ns
	for _, tc := range []struct {
		name string
		size float64
	}{
		{"forward 250 ms", 250e6},
		{"back 1.5 s", -1.5e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			nodes, evs := steppedNodes(tc.size), stepEvents(gStep)
			inputs, offs := writeStepped(t, dir, nodes, evs)
			out := filepath.Join(dir, "combined.xplane.pb")
			res, err := Combine(inputs, Options{Offsets: offs, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			type nodeEvent struct {
				stepEvent
				node int
			}
			want := map[string]nodeEvent{}
			spanning := make([]int64, 2)
			for i, node := range evs {
				for _, e := range node {
					want[e.name] = nodeEvent{e, i}
					if e.spanning {
						spanning[i]++
					}
				}
			}
			check := func(where, name string, startNs, durNs float64, marked bool) {
				e, ok := want[name]
				if !ok {
					t.Errorf("%s: unexpected event %q", where, name)
					return
				}
				if math.Abs(startNs-e.g0) > tol || math.Abs(durNs-e.dur) > tol {
					t.Errorf("%s: %s starts %.1f ns and lasts %.1f ns, want %.0f and %.0f (±%g)", where, name, startNs, durNs, e.g0, e.dur, tol)
				}
				if marked != e.spanning {
					t.Errorf("%s: %s marked %s %v, want %v", where, name, statStepInside, marked, e.spanning)
				}
				if e.spanning {
					n := nodes[e.node]
					tracerDur := math.Round(n.tracer(e.g0+e.dur)) - math.Round(n.tracer(e.g0))
					if d := tracerDur / (1 + n.rDrift*1e-6); math.Abs(durNs-d) > tol {
						t.Errorf("%s: %s lasts %.1f ns, want its tracer duration %.0f ns at the host rate, %.1f", where, name, durNs, tracerDur, d)
					}
				}
			}

			space, err := xspace.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, p := range space.Planes {
				id, ok := xspace.StatByName(p, p.Stats, statNodeID)
				if !ok || len(p.Lines) == 0 {
					continue // a clock_metadata plane
				}
				node := int(id.GetInt64Value())
				if _, named := findStat(p, statStepInside); named != (node == 1) {
					t.Errorf("plane %s (node %d) names %s: %v", p.Name, node, statStepInside, named)
				}
				for _, l := range p.Lines {
					for _, ev := range l.Events {
						st, marked := xspace.StatByName(p, ev.Stats, statStepInside)
						if marked && st.GetInt64Value() != 1 {
							t.Errorf("%s = %v, want int64 1", statStepInside, st.GetValue())
						}
						check("xspace "+p.Name, p.EventMetadata[ev.MetadataId].GetName(), float64(xspace.StartPs(l, ev))/1e3, float64(ev.DurationPs)/1e3, marked)
						seen++
					}
				}
			}

			var doc struct {
				TraceEvents []struct {
					Ph, Name string
					Ts, Dur  float64
					Pid      int64
					Args     map[string]any
				} `json:"traceEvents"`
			}
			if err := json.Unmarshal(gunzipFile(t, OutputBase(out)+".trace.json.gz"), &doc); err != nil {
				t.Fatal(err)
			}
			sliced := 0
			for _, e := range doc.TraceEvents {
				if e.Ph != "X" {
					continue
				}
				v, marked := e.Args[statStepInside]
				if marked && v != 1.0 {
					t.Errorf("json: %s arg %#v, want the number 1", statStepInside, v)
				}
				check("json", e.Name, e.Ts*1e3, e.Dur*1e3, marked)
				sliced++
			}
			if seen != len(want) || sliced != len(want) {
				t.Errorf("%d events in the XSpace, %d slices in the JSON, want %d", seen, sliced, len(want))
			}

			var md struct {
				Nodes []struct {
					HostSteps        int   `json:"host_steps"`
					AcrossStepEvents int64 `json:"across_step_events"`
				} `json:"nodes"`
			}
			readJSON(t, OutputBase(out)+".metadata.json", &md)
			if len(md.Nodes) != 2 {
				t.Fatalf("metadata.json: %d nodes, want 2", len(md.Nodes))
			}
			for i, n := range md.Nodes {
				wantSteps := 0
				if nodes[i].size != 0 {
					wantSteps = 1
				}
				if n.HostSteps != wantSteps || n.AcrossStepEvents != spanning[i] || res.Metadata.Nodes[i].AcrossStepEvents != spanning[i] {
					t.Errorf("metadata.json node %d: host_steps %d, across_step_events %d; want %d and %d", i, n.HostSteps, n.AcrossStepEvents, wantSteps, spanning[i])
				}
			}
		})
	}
}

// TestEmitEventStepStat: an event whose other fields are one run or split
// around offset_ps (written in place or field by field) gets, after its
// own stats, the uncertainty stat and, only when it spans a host clock
// step, clock_step_inside = int64 1, inside the event's length.
func TestEmitEventStepStat(t *testing.T) {
	v := func(num protowire.Number, x uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), x)
	}
	own := appendStat(nil, xspace.FieldEventStats, 7, xspace.FieldStatInt, 42, "")
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	const uncID, stepID = 9, 300 // a two-byte varint id
	for _, tc := range []struct {
		name   string
		ev     []byte
		tailOK bool
		own    int // its own stats
	}{
		{"one run", cat(v(xspace.FieldEventMeta, 3), v(xspace.FieldEventOffset, 100), v(xspace.FieldEventDuration, 50), own), true, 1},
		{"split", cat(own, v(xspace.FieldEventOffset, 100), v(xspace.FieldEventDuration, 50), own), false, 2},
	} {
		for _, across := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, across %v", tc.name, across), func(t *testing.T) {
				var e wireEvent
				if err := parseEvent(&e, tc.ev); err != nil || e.tailOK != tc.tailOK {
					t.Fatalf("parseEvent: %v, tailOK %v", err, e.tailOK)
				}
				e.start, e.newDur, e.sigma, e.across = 5000, 60, 2.5, across
				pj := &planeJob{p: &wirePlane{}, uncID: uncID, stepID: stepID}
				line, err := (&transcoder{}).emitEvent([]byte("x"), pj, &e, e.start-1234, 1, 1, &lineOut{})
				if err != nil {
					t.Fatal(err)
				}
				var l xplanepb.XLine
				if err := proto.Unmarshal(line[1:], &l); err != nil || len(l.Events) != 1 {
					t.Fatalf("line %x: %v, %d events", line, err, len(l.Events))
				}
				ev := l.Events[0]
				want := tc.own + 1
				if across {
					want++
				}
				if ev.GetOffsetPs() != 1234 || ev.DurationPs != 60 || len(ev.Stats) != want {
					t.Fatalf("offset %d dur %d, %d stats; want 1234, 60, %d", ev.GetOffsetPs(), ev.DurationPs, len(ev.Stats), want)
				}
				if u := ev.Stats[tc.own]; u.MetadataId != uncID || u.GetUint64Value() != 3 {
					t.Errorf("uncertainty stat %v, want id %d uint64 3", u, uncID)
				}
				if s := ev.Stats[want-1]; across && (s.MetadataId != stepID || s.GetInt64Value() != 1) {
					t.Errorf("step stat %v, want id %d int64 1", s, stepID)
				}
			})
		}
	}
}
