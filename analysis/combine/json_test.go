package combine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// jsonEvent is one Chrome trace event, numbers kept as json.Number.
type jsonEvent struct {
	Ph   string         `json:"ph"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur"`
	Name string         `json:"name"`
	ID   json.Number    `json:"id"`
	Cat  string         `json:"cat"`
	Bp   string         `json:"bp"`
	Args map[string]any `json:"args"`
}

func (e jsonEvent) ts(t *testing.T) float64 {
	t.Helper()
	v, err := e.Ts.Float64()
	if err != nil {
		t.Fatalf("ts %q: %v", e.Ts, err)
	}
	return v
}

func (e jsonEvent) end(t *testing.T) float64 {
	t.Helper()
	d, err := e.Dur.Float64()
	if err != nil {
		t.Fatalf("dur %q: %v", e.Dur, err)
	}
	return e.ts(t) + d
}

// readTraceJSON decodes a combined Chrome trace, numbers as json.Number.
func readTraceJSON(t *testing.T, path string) []jsonEvent {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(gunzipFile(t, path)))
	dec.UseNumber()
	var doc struct {
		TraceEvents []jsonEvent `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.TraceEvents
}

// TestJSONArgKinds: each stat kind renders as its JSON kind, alike on the
// wire path and the decoded one.
func TestJSONArgKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   *xplanepb.XStat // its MetadataId is set to 1
		want any             // decoded with UseNumber
	}{
		{"int", &xplanepb.XStat{Value: &xplanepb.XStat_Int64Value{Int64Value: -42}}, json.Number("-42")},
		{"uint max", &xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: math.MaxUint64}}, json.Number("18446744073709551615")},
		{"double", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 0.1}}, json.Number("0.1")},
		{"double large", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 1e300}}, json.Number("1e+300")},
		{"NaN", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: math.NaN()}}, "NaN"},
		{"+Inf", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: math.Inf(1)}}, "+Inf"},
		{"-Inf", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: math.Inf(-1)}}, "-Inf"},
		{"string", &xplanepb.XStat{Value: &xplanepb.XStat_StrValue{StrValue: `a "b"`}}, `a "b"`},
		{"numeric string stays a string", &xplanepb.XStat{Value: &xplanepb.XStat_StrValue{StrValue: "7"}}, "7"},
		{"ref", &xplanepb.XStat{Value: &xplanepb.XStat_RefValue{RefValue: 1}}, "v"},
		{"bytes", &xplanepb.XStat{Value: &xplanepb.XStat_BytesValue{BytesValue: []byte{0xab, 1}}}, "ab01"},
		{"no value", &xplanepb.XStat{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &xplanepb.XPlane{StatMetadata: map[int64]*xplanepb.XStatMetadata{1: {Id: 1, Name: "v"}}}
			st := tc.st
			st.MetadataId = 1
			dec, err := appendXStatJSON(nil, p, st)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := proto.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			wp := &wirePlane{stats: map[int64]string{1: "v"}, meta: map[int64]*wireMeta{}}
			if err := wp.prepareJSON(); err != nil {
				t.Fatal(err)
			}
			wire, err := wp.appendStatJSON(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dec, wire) {
				t.Errorf("decoded path %s, wire path %s", dec, wire)
			}
			d := json.NewDecoder(bytes.NewReader(append(append([]byte("{"), bytes.TrimSuffix(wire, []byte(","))...), '}')))
			d.UseNumber()
			var got map[string]any
			if err := d.Decode(&got); err != nil {
				t.Fatalf("%s: %v", wire, err)
			}
			if got["v"] != tc.want {
				t.Errorf("%s decodes to %#v, want %#v", wire, got["v"], tc.want)
			}
		})
	}
}

// kinetoRank is a small Kineto trace of one rank: n launches on the host
// thread, each with an "ac2g" flow to its kernel on GPU 0's stream 7, and
// one flow start that no slice encloses (dropped).
func kinetoRank(rank, n int, base int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"distributedInfo":{"rank":%d,"world_size":2},"baseTimeNanoseconds":%d,"traceEvents":[`, rank, base)
	for i := range n {
		ts := 1000 + 100*i
		fmt.Fprintf(&b, `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":11,"ts":%d,"dur":5,"args":{"correlation":%d,"ratio":0.5}},`, ts, i+1)
		fmt.Fprintf(&b, `{"ph":"s","cat":"ac2g","name":"ac2g","id":%d,"pid":10,"tid":11,"ts":%d,"bp":"e"},`, i+1, ts)
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%d,"dur":20,"args":{"device":0,"correlation":%d}},`, ts+10, i+1)
		fmt.Fprintf(&b, `{"ph":"f","cat":"ac2g","name":"ac2g","id":%d,"pid":0,"tid":7,"ts":%d,"bp":"e"},`, i+1, ts+10)
	}
	fmt.Fprintf(&b, `{"ph":"s","cat":"ac2g","name":"ac2g","id":999,"pid":10,"tid":11,"ts":1,"bp":"e"}]}`)
	return b.String()
}

// writeOffsets writes offsets.jsonl with, for each node, windows starting
// at each of starts (ns), offset_ns −(node+1)·1000 + the window's index,
// drift node ppm, uncertainty 10 + index.
func writeOffsets(t *testing.T, dir string, nodes int, starts []int64) string {
	t.Helper()
	path := filepath.Join(dir, "offsets.jsonl")
	w, err := offsets.Create(path, offsets.Meta{File: "offsets", RunID: "json-run", Reference: 0, Estimator: "svm", Mode: "rounds"})
	if err != nil {
		t.Fatal(err)
	}
	for n := range nodes {
		for k, s := range starts {
			o := offsets.Offset{NodeID: n, RoundID: uint64(k + 1), WindowID: uint64(k + 1), WindowStartNS: s, WindowEndNS: s + 2e9,
				OffsetNS: float64(-(n+1)*1000 + k), DriftPPM: float64(n), UncertaintyNS: float64(10 + k)}
			if err := w.Append(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJSONKinetoExport: the merged Kineto Chrome trace keeps every rank's
// flows, paired and bound to slices, with ids unique across ranks; its
// processes are named by rank and node, labelled with their XSpace name
// and sorted by node, host first; args stay numbers; each node's offsets
// are counters; no process is empty.
func TestJSONKinetoExport(t *testing.T) {
	dir := t.TempDir()
	const n, base = 5, int64(1_700_000_000_000_000_000)
	var inputs []Input
	for r := range 2 {
		inputs = append(inputs, Input{Node: r, Trace: writeFile(t, filepath.Join(dir, fmt.Sprintf("rank%d.json", r)), kinetoRank(r, n, base))})
	}
	offs := writeOffsets(t, dir, 2, []int64{base - 2e9, base, base + 2e9})
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	if _, err := Combine(inputs, Options{Offsets: offs, Output: out, NoPerfetto: true}); err != nil {
		t.Fatal(err)
	}
	evs := readTraceJSON(t, OutputBase(out)+".trace.json.gz")
	names, labels, sorts := map[int64]string{}, map[int64]string{}, map[int64]int64{}
	type thread struct{ pid, tid int64 }
	slicesOf := map[thread][]jsonEvent{}
	flows := map[string][]jsonEvent{}
	busy := map[int64]bool{}
	counters := map[string][]float64{} // process name + counter → values
	for _, e := range evs {
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				names[e.Pid] = e.Args["name"].(string)
			case "process_labels":
				labels[e.Pid] = e.Args["labels"].(string)
			case "process_sort_index":
				v, _ := e.Args["sort_index"].(json.Number).Int64()
				sorts[e.Pid] = v
			}
		case "X":
			busy[e.Pid] = true
			slicesOf[thread{e.Pid, e.Tid}] = append(slicesOf[thread{e.Pid, e.Tid}], e)
			if e.Name == "ac2g" {
				t.Errorf("a Kineto flow event exported as a slice: %+v", e)
			}
			if e.Name == "cudaLaunchKernel" {
				if _, ok := e.Args["correlation"].(json.Number); !ok {
					t.Errorf("correlation arg %#v is not a number", e.Args["correlation"])
				}
				if e.Args["ratio"] != json.Number("0.5") {
					t.Errorf("ratio arg %#v, want the number 0.5", e.Args["ratio"])
				}
				if _, ok := e.Args[statUncertainty].(json.Number); !ok {
					t.Errorf("%s arg %#v is not a number", statUncertainty, e.Args[statUncertainty])
				}
			}
		case "s", "f", "t":
			flows[e.ID.String()] = append(flows[e.ID.String()], e)
		case "C":
			busy[e.Pid] = true
			for k, v := range e.Args {
				f, _ := v.(json.Number).Float64()
				key := names[e.Pid] + "|" + e.Name + " " + k
				counters[key] = append(counters[key], f)
			}
		}
	}
	// Flows: n per rank, each an "s" on a launch and an "f" on its kernel.
	if len(flows) != 2*n {
		t.Errorf("%d flow ids, want %d", len(flows), 2*n)
	}
	for id, fs := range flows {
		var phs []string
		for _, f := range fs {
			phs = append(phs, f.Ph)
			if f.Cat != "ac2g" || f.Bp != "e" {
				t.Errorf("flow %s: cat %q bp %q, want ac2g and e", id, f.Cat, f.Bp)
			}
			inside := slices.ContainsFunc(slicesOf[thread{f.Pid, f.Tid}], func(s jsonEvent) bool { return s.ts(t) <= f.ts(t) && f.ts(t) <= s.end(t) })
			if !inside {
				t.Errorf("flow %s %s at %s on pid %d tid %d: no slice there", id, f.Ph, f.Ts, f.Pid, f.Tid)
			}
		}
		if slices.Sort(phs); !slices.Equal(phs, []string{"f", "s"}) {
			t.Errorf("flow %s has phases %q, want one s and one f", id, phs)
		}
	}
	// Processes: sorted by node, host before device, the clock counters
	// last; none empty.
	var pids []int64
	for pid := range names {
		pids = append(pids, pid)
		if !busy[pid] {
			t.Errorf("process %d %q has no events", pid, names[pid])
		}
	}
	slices.SortFunc(pids, func(a, b int64) int { return int(sorts[a] - sorts[b]) })
	var order []string
	for _, pid := range pids {
		order = append(order, names[pid]+" ["+labels[pid]+"]")
	}
	want := []string{
		"rank 0 · node 0 (node0) /host:CPU [/host:CPU]",
		"rank 0 · node 0 (node0) /device:GPU:0 [/device:GPU:0]",
		"node 0 (node0) clock [/node:0/clock_metadata]",
	}
	if len(order) != 6 || !slices.Equal(order[:3], want) || !strings.HasPrefix(order[3], "rank 1 · node 1 (node1) /host:CPU [") ||
		!strings.HasPrefix(order[4], "rank 1 · node 1 (node1) /device:GPU:0 [") || order[5] != "node 1 (node1) clock [/node:1/clock_metadata]" {
		t.Errorf("processes in sort order:\n%s", strings.Join(order, "\n"))
	}
	// Counters: one sample per window, the offsets' values.
	for node := range 2 {
		proc := fmt.Sprintf("node %d (node%d) clock|", node, node)
		for key, want := range map[string][]float64{
			counterOffset + " ns": {float64(-(node + 1) * 1000), float64(-(node+1)*1000 + 1), float64(-(node+1)*1000 + 2)},
			counterDrift + " ppm": {float64(node), float64(node), float64(node)},
			counterSigma + " ns":  {10, 11, 12},
		} {
			if got := counters[proc+key]; !slices.Equal(got, want) {
				t.Errorf("node %d %s: %v, want %v", node, key, got, want)
			}
		}
	}
}

// writeWindowNode writes node's XSpace: workload slices on /host:CPU and
// /device:GPU:0 from 5 s, and clock snapshot instants at 0.1 s and 15 s
// on /host:snapshots.
func writeWindowNode(t *testing.T, dir string, node int) Input {
	t.Helper()
	host := xspace.NewPlaneBuilder(0, "/host:CPU")
	gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
	snaps := xspace.NewPlaneBuilder(2, "/host:snapshots")
	hl, gl := host.Line(1, "main", 5e9), gpu.Line(7, "stream 7", 5e9)
	for i := range int64(10) {
		hl.Add("launch", 5e9+i*1e6, 5e3, xspace.Int("step", i))
		gl.Add("kernel", 5e9+i*1e6+1e4, 5e5)
	}
	sl := snaps.Line(1, "snapshots", 1e8)
	sl.Add("snapshot", 1e8, 0)
	sl.Add("snapshot", 15e9, 0)
	space := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{host.Plane(), gpu.Plane(), snaps.Plane()}, Hostnames: []string{fmt.Sprintf("host-%d", node)}}
	path := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", node))
	if err := xspace.Write(path, space); err != nil {
		t.Fatal(err)
	}
	return Input{Node: node, Trace: path}
}

// TestJSONWindow: --window workload exports the workload's span only (with
// its margin): no snapshot instant outside it, counters from the window
// before it; the XSpace keeps everything. --window all exports it all.
func TestJSONWindow(t *testing.T) {
	dir := t.TempDir()
	inputs := []Input{writeWindowNode(t, dir, 0), writeWindowNode(t, dir, 1)}
	offs := writeOffsets(t, dir, 2, []int64{0, 4e9, 8e9, 12e9})
	// Node n's clock is (n+1)·1000 ns behind global time, minus the
	// window's index: the workload runs from about 5 s + 1 µs.
	first, last := 5e9+1e3, 5e9+9e6+1e4+5e5+2e3 // ns, with room for the offsets
	span := last - first
	margin := max(span*windowMargin, windowMarginMinPs/1e3)
	for _, tc := range []struct {
		window           string
		slices, counters int // per node
		snapshots        bool
		from, to         float64 // µs bounds every slice must lie within
		wantWindow       bool
	}{
		{WindowAll, 22, 4, true, 0, 16e6, false},
		{"", 22, 4, true, 0, 16e6, false},
		{WindowWorkload, 20, 1, false, (first - margin - 2e3) / 1e3, (last + margin) / 1e3, true},
	} {
		t.Run("window "+tc.window, func(t *testing.T) {
			out := filepath.Join(dir, "w-"+tc.window, "combined.xplane.pb")
			res, err := Combine(inputs, Options{Offsets: offs, Output: out, NoPerfetto: true, Window: tc.window})
			if err != nil {
				t.Fatal(err)
			}
			w := res.Metadata.TraceJSONWindow
			if (w != nil) != tc.wantWindow || (w != nil && (!w.Workload || w.Mode != WindowWorkload)) {
				t.Fatalf("metadata window %+v", w)
			}
			perPid, counters := map[int64]int{}, map[int64][]float64{}
			snapshots := 0
			for _, e := range readTraceJSON(t, OutputBase(out)+".trace.json.gz") {
				switch e.Ph {
				case "X":
					perPid[e.Pid]++
					if e.Name == "snapshot" {
						snapshots++
						continue
					}
					if e.ts(t) < tc.from || e.end(t) > tc.to {
						t.Errorf("slice %s at %s µs outside [%g, %g]", e.Name, e.Ts, tc.from, tc.to)
					}
					if w != nil && (e.ts(t)*1e6 < float64(w.FromPS)-1 || e.end(t)*1e6 > float64(w.ToPS)+1) {
						t.Errorf("slice %s at %s µs outside the window %+v", e.Name, e.Ts, w)
					}
				case "C":
					if e.Name == counterOffset {
						counters[e.Pid] = append(counters[e.Pid], e.ts(t))
					}
				}
			}
			if (snapshots > 0) != tc.snapshots || (tc.snapshots && snapshots != 4) {
				t.Errorf("%d snapshot slices exported", snapshots)
			}
			total := 0
			for _, n := range perPid {
				total += n
			}
			if total != 2*tc.slices {
				t.Errorf("%d slices, want %d", total, 2*tc.slices)
			}
			if len(counters) != 2 {
				t.Errorf("counters of %d processes, want 2", len(counters))
			}
			for pid, ts := range counters {
				if len(ts) != tc.counters {
					t.Errorf("process %d: %d offset samples %v, want %d", pid, len(ts), ts, tc.counters)
				}
				if w != nil && len(ts) > 0 && ts[0]*1e6 != float64(w.FromPS) {
					t.Errorf("process %d: first sample at %g µs, want the window's start %d ps", pid, ts[0], w.FromPS)
				}
			}
			space, err := xspace.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			kept := 0
			for _, p := range space.Planes {
				for _, l := range p.Lines {
					for _, ev := range l.Events {
						if p.EventMetadata[ev.MetadataId].GetName() == "snapshot" {
							kept++
						}
					}
				}
			}
			if kept != 4 {
				t.Errorf("the XSpace keeps %d snapshot events, want 4", kept)
			}
		})
	}
	if _, err := Combine(inputs, Options{Output: filepath.Join(dir, "bad", "c.xplane.pb"), Window: "steps"}); err == nil || !strings.Contains(err.Error(), `"steps"`) {
		t.Errorf("window steps: %v", err)
	}
}

// TestProcessSort: processes sort by clock node, then rank, host before
// devices by ordinal, snapshots after, each node's counters last.
func TestProcessSort(t *testing.T) {
	inputs := []Input{{Node: 3}, {Node: 0}, {Node: 2}, {Node: 1}}
	clock := func(in Input) int { return in.Node / 2 } // ranks 0, 1 on node 0; 2, 3 on node 1
	inPos, clockPos := sortPositions(inputs, clock)
	type proc struct {
		what string
		sort int32
	}
	var procs []proc
	for _, in := range inputs {
		for _, orig := range []string{"/device:GPU:10", "/host:snapshots", "/device:GPU:2", "/host:CPU", "/host:metadata", "/custom", "/device:TPU:0"} {
			procs = append(procs, proc{fmt.Sprintf("rank %d %s", in.Node, orig), sortIndex(inPos[in.Node], planeRank(orig))})
		}
	}
	for n := range 2 {
		procs = append(procs, proc{fmt.Sprintf("node %d clock", n), sortIndex(clockPos[n], rankCounters)})
	}
	slices.SortStableFunc(procs, func(a, b proc) int { return int(a.sort) - int(b.sort) })
	var got []string
	for _, p := range procs {
		got = append(got, p.what)
	}
	var want []string
	for n := range 2 {
		for _, r := range []int{2 * n, 2*n + 1} {
			for _, orig := range []string{"/host:CPU", "/host:metadata", "/device:TPU:0", "/device:GPU:2", "/device:GPU:10", "/custom", "/host:snapshots"} {
				want = append(want, fmt.Sprintf("rank %d %s", r, orig))
			}
		}
		want = append(want, fmt.Sprintf("node %d clock", n))
	}
	if !slices.Equal(got, want) {
		t.Errorf("order\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sortIndex(1<<22, 5) != math.MaxInt32 {
		t.Errorf("sortIndex does not saturate")
	}
}
